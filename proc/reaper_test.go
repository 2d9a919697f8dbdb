//go:build linux

package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestSubreaper runs subreaperHelper in a child test binary, so that becoming a subreaper affects
// that process only.
func TestSubreaper(t *testing.T) {
	var out bytes.Buffer
	res, err := Run(context.Background(), Spec{
		Path:   os.Args[0],
		Args:   []string{"-test.run=^$"},
		Env:    append(os.Environ(), helperKey+"=subreaper", markerKey+"="+markerValue()),
		Stdout: &out,
		Stderr: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(out.String(), "subreaper helper ok") {
		t.Errorf("helper exited %d:\n%s", res.ExitCode, out.String())
	}
}

// subreaperHelper is the body of TestSubreaper's child; it prints each failure and returns the
// exit code.
func subreaperHelper() int {
	err := errors.Join(
		BecomeSubreaper(),
		checkOrphanZombieReaped(),
		checkOrphanOfKilledChildKilled(),
		checkSupervisedChildrenUntouched(),
	)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Println("subreaper helper ok")
	return 0
}

// checkOrphanZombieReaped: a grandchild killed with its child's group is re-parented to this
// process and reaped by Reap.
func checkOrphanZombieReaped() error {
	var r Reaper
	var out bytes.Buffer
	if _, err := Run(context.Background(), Spec{Shell: "sleep 100 & echo $!", Env: testEnv(), Stdout: &out, Reaper: &r}); err != nil {
		return err
	}
	var pid int
	if _, err := fmt.Sscan(out.String(), &pid); err != nil {
		return fmt.Errorf("no pid in %q", out.String())
	}
	return reapedSoon(&r, pid)
}

// reapedSoon calls r.Reap until pid is reaped.
func reapedSoon(r *Reaper, pid int) error {
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		reaped, err := r.Reap()
		if err != nil {
			return err
		}
		if slices.Contains(reaped, pid) {
			if _, err := readStat(pid); err == nil {
				return fmt.Errorf("orphan %d still in /proc after Reap", pid)
			}
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("orphan %d never reaped", pid)
}

// checkOrphanOfKilledChildKilled: a child that is SIGKILLed from outside leaves a descendant in
// another session; it is re-parented here and KillOrphans finds and kills it.
func checkOrphanOfKilledChildKilled() error {
	var r Reaper
	out := newSyncBuffer("ready")
	childPid := make(chan int, 1)
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(context.Background(), Spec{
			Shell:   escapeSh + "; echo ready; sleep 100",
			Env:     testEnv(),
			Stdout:  out,
			Reaper:  &r,
			Grace:   200 * time.Millisecond, // the escaped sleep holds stdout until then
			OnStart: func(pid int) { childPid <- pid },
		})
		done <- res
	}()
	pid := <-childPid
	select {
	case <-out.Ready():
	case <-time.After(5 * time.Second):
		return errors.New("child never ready")
	}
	var escaped int
	if _, err := fmt.Sscan(out.String(), &escaped); err != nil {
		return fmt.Errorf("no pid in %q", out.String())
	}
	// While the child runs, its descendants are not orphans.
	if killed, err := r.KillOrphans(syscall.SIGKILL); err != nil || len(killed) != 0 {
		return fmt.Errorf("KillOrphans with no orphans: %v, %v", killed, err)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if res := <-done; res.Signal != "killed" {
		return fmt.Errorf("child: %+v", res)
	}
	info, err := readStat(escaped)
	if err != nil || info.ppid != os.Getpid() {
		return fmt.Errorf("escaped %d not re-parented here: %+v, %v", escaped, info, err)
	}
	killed, err := r.KillOrphans(syscall.SIGKILL)
	if err != nil || !slices.Contains(killed, escaped) {
		return fmt.Errorf("KillOrphans: %v, %v; want %d", killed, err, escaped)
	}
	return reapedSoon(&r, escaped)
}

// checkSupervisedChildrenUntouched: Reap and KillOrphans, called in a loop, never take the exit
// status of a child Run supervises nor of a plain os/exec child, nor kill them.
func checkSupervisedChildrenUntouched() error {
	var r Reaper
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			_, _ = r.Reap()
			_, _ = r.KillOrphans(syscall.SIGKILL)
		}
	})
	defer wg.Wait()
	defer stop()

	var errs []error
	for i := range 20 {
		res, err := Run(context.Background(), Spec{Shell: fmt.Sprintf("sleep 0.0%d; exit 7", i%3), Env: testEnv(), Reaper: &r})
		if err != nil || res.ExitCode != 7 {
			errs = append(errs, fmt.Errorf("supervised child %d: %+v, %v", i, res, err))
		}
		plain := exec.Command("/bin/sh", "-c", "exit 5")
		plain.Env = testEnv()
		var exitErr *exec.ExitError
		if err := plain.Run(); !errors.As(err, &exitErr) || exitErr.ExitCode() != 5 {
			errs = append(errs, fmt.Errorf("plain child %d: %v", i, err))
		}
	}
	return errors.Join(errs...)
}
