package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper marks this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER) so orphaned
// descendants are re-parented to it rather than to init.
//
// Those orphans then become this process's children: when they exit they stay zombies until it
// reaps them. Reaping them is the caller's business, and it must not steal the exit status of a
// child that Run (or os/exec elsewhere) is waiting for: the supervisor, whose only child is the
// one it supervises, is the one caller.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("proc: prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	return nil
}

// procInfo is what /proc/<pid>/stat says of one process.
type procInfo struct {
	pid, ppid, pgid int
	state           byte // 'R', 'S', 'Z', ...
}

func (p procInfo) zombie() bool { return p.state == 'Z' || p.state == 'X' }

// readProcs reads the stat line of every process in /proc.
func readProcs() ([]procInfo, error) {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil, fmt.Errorf("proc: list processes: %w", err)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("proc: list processes: %w", err)
	}
	procs := make([]procInfo, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		info, err := readStat(pid)
		if err != nil {
			continue // gone since the directory was read
		}
		procs = append(procs, info)
	}
	return procs, nil
}

// readStat parses /proc/<pid>/stat: "pid (comm) state ppid pgrp ...", where comm may hold spaces
// and parentheses, so the fields are found after its last ')'.
func readStat(pid int) (procInfo, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, err
	}
	end := bytes.LastIndexByte(raw, ')')
	if end < 0 {
		return procInfo{}, fmt.Errorf("proc: malformed /proc/%d/stat", pid)
	}
	fields := bytes.Fields(raw[end+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return procInfo{}, fmt.Errorf("proc: malformed /proc/%d/stat", pid)
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	pgid, err2 := strconv.Atoi(string(fields[2]))
	if err := errors.Join(err1, err2); err != nil {
		return procInfo{}, fmt.Errorf("proc: malformed /proc/%d/stat: %w", pid, err)
	}
	return procInfo{pid: pid, ppid: ppid, pgid: pgid, state: fields[0][0]}, nil
}

// liveDescendants walks the parent links of procs down from root.
func liveDescendants(procs []procInfo, root int) []int {
	children := make(map[int][]procInfo)
	for _, p := range procs {
		children[p.ppid] = append(children[p.ppid], p)
	}
	var found []int
	queue := []int{root}
	seen := map[int]bool{root: true}
	for len(queue) > 0 {
		parent := queue[0]
		queue = queue[1:]
		for _, c := range children[parent] {
			if seen[c.pid] {
				continue
			}
			seen[c.pid] = true
			if !c.zombie() {
				found = append(found, c.pid)
			}
			queue = append(queue, c.pid)
		}
	}
	slices.Sort(found)
	return found
}

// killTreeOf sends SIGKILL to every live descendant of pid and to the process groups they lead,
// leaves first-found first, and rescans until a scan shows nothing new (a descendant may fork
// between a scan and its kill). pid itself is left to the caller, so that its children stay its
// children, and findable, until they are dead.
func killTreeOf(pid int) error {
	ownGroup := syscall.Getpgrp()
	signalled := make(map[int]bool)
	for range 50 {
		procs, err := readProcs()
		if err != nil {
			return err
		}
		byPid := make(map[int]procInfo, len(procs))
		for _, p := range procs {
			byPid[p.pid] = p
		}
		fresh := 0
		for _, d := range liveDescendants(procs, pid) {
			if signalled[d] {
				continue
			}
			fresh++
			signalled[d] = true
			_ = killPid(d, syscall.SIGKILL)
			if g := byPid[d].pgid; g > 1 && g != ownGroup && g != pid {
				_ = KillGroup(g, syscall.SIGKILL)
			}
		}
		if fresh == 0 {
			return nil
		}
	}
	return errors.New("proc: descendants kept appearing while being killed")
}

// waitExited blocks until the child pid has exited, without reaping it, so that its pid and group
// id stay reserved until cmd.Wait. It reports false if it could not wait (the caller then relies on
// cmd.Wait alone).
func waitExited(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return true
		}
		if !errors.Is(err, syscall.EINTR) {
			return false
		}
	}
}

// waitsUnreaped: waitExited waits for the child's exit and leaves it a zombie, so its group id
// stays reserved until Run has killed the rest of its group.
const waitsUnreaped = true

func maxRSSBytes(ru *syscall.Rusage) int64 { return ru.Maxrss * 1024 }

// taskPeakRSS is the peak RSS a child's rusage says, as the task's own: 0 (none measured) when it
// is at most this process's own peak. On Linux a child is cloned sharing this process's memory
// until it executes its program, and the kernel counts that memory's high-water mark into the
// child's ru_maxrss; a peak no higher than ours is ours, not the task's.
func taskPeakRSS(childPeak int64) int64 {
	var self syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		return childPeak
	}
	if childPeak <= maxRSSBytes(&self) {
		return 0
	}
	return childPeak
}

// setParentDeathSignal asks the kernel to send sig to the child when its parent dies.
func setParentDeathSignal(attr *syscall.SysProcAttr, sig syscall.Signal) {
	attr.Pdeathsig = sig
}

// parentDeathSignal is this process's PR_SET_PDEATHSIG, kept across exec.
func parentDeathSignal() syscall.Signal {
	var sig int32
	if err := unix.Prctl(unix.PR_GET_PDEATHSIG, uintptr(unsafe.Pointer(&sig)), 0, 0, 0); err != nil {
		return 0
	}
	return syscall.Signal(sig)
}
