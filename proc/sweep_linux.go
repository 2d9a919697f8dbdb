package proc

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// KillMarked kills (SIGKILL) every live process whose environment holds marker (one NAME=VALUE
// entry), with the process groups they lead and their live descendants, which may have cleared
// their environment; it scans again until a scan finds none, or fails once timeout has passed.
//
// It is the last line against processes that outlived whoever was to stop them: runTasks puts a
// marker in the environment of each `vx run` child it starts and sweeps it when the call ends, for
// what is left when that child or a task's supervisor was SIGKILLed (a supervisor catches the rest
// first). A process that cleared its environment after its marked ancestors died is out of its
// reach; so are zombies and other users' processes, whose environment cannot be read. This
// process is never killed.
func KillMarked(marker string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids, err := markedTree(marker)
		if err != nil || len(pids) == 0 {
			return err
		}
		for _, pid := range pids {
			if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
				_ = KillGroup(pid, syscall.SIGKILL) // refuses this process's own group
			}
			_ = killPid(pid, syscall.SIGKILL)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("proc: processes marked %s still alive after %s: %v", marker, timeout, pids)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// markedTree lists the live processes whose environment holds marker, and their live descendants.
func markedTree(marker string) ([]int, error) {
	procs, err := readProcs()
	if err != nil {
		return nil, err
	}
	self := os.Getpid()
	want := []byte(marker)
	var found []int
	for _, p := range procs {
		if p.pid == self || p.zombie() {
			continue
		}
		environ, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		if err != nil || !slices.ContainsFunc(bytes.Split(environ, []byte{0}), func(kv []byte) bool { return bytes.Equal(kv, want) }) {
			continue
		}
		for _, pid := range append([]int{p.pid}, liveDescendants(procs, p.pid)...) {
			if pid != self && !slices.Contains(found, pid) {
				found = append(found, pid)
			}
		}
	}
	slices.Sort(found)
	return found, nil
}
