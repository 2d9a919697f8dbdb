package taskmutex

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The helper process: TestMain runs it instead of the tests when TASKLOCK_HELPER names a task. It
// takes that task's lock in TASKLOCK_DIR for TASKLOCK_ROOT, says "locked" on stdout, and holds
// the lock until its stdin ends (then it unlocks and exits 0) or it is killed.
func TestMain(m *testing.M) {
	if task := os.Getenv("TASKLOCK_HELPER"); task != "" {
		os.Exit(helper(task))
	}
	os.Exit(m.Run())
}

func helper(task string) int {
	if key := os.Getenv("TASKLOCK_KEY"); key != "" {
		return keyHelper(key, task)
	}
	l := New(os.Getenv("TASKLOCK_DIR"), os.Getenv("TASKLOCK_ROOT"))
	lk, err := l.Lock(context.Background(), task, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := lk.Unlock(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// helperProc is a helper process holding a task's lock.
type helperProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// hold starts a helper process that takes task's lock for root in dir, and returns once it holds it.
func hold(t *testing.T, dir, root, task string, env ...string) *helperProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TASKLOCK_HELPER="+task, "TASKLOCK_DIR="+dir, "TASKLOCK_ROOT="+root)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helperProc{cmd: cmd, stdin: stdin}
	t.Cleanup(func() {
		h.stdin.Close()
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v; want locked", line, err)
	}
	return h
}

// release makes the helper unlock and exit.
func (h *helperProc) release(t *testing.T) {
	t.Helper()
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
}

// A task held by another process is refused by TryLock, naming that process; the same task of
// another workspace in the same state folder, and another task, are not held.
func TestHeldElsewhere(t *testing.T) {
	dir := t.TempDir()
	h := hold(t, dir, "/ws/one", "app#build")
	l := New(dir, "/ws/one")
	_, err := l.TryLock("app#build")
	var he *HeldError
	if !errors.As(err, &he) {
		t.Fatalf("TryLock of a held task: %v, want a HeldError", err)
	}
	if he.PID != h.cmd.Process.Pid || he.Error() != fmt.Sprintf("app#build is running in pid %d", h.cmd.Process.Pid) {
		t.Errorf("held by %d (%q), want the helper, pid %d", he.PID, he, h.cmd.Process.Pid)
	}
	for _, other := range []struct{ root, task string }{{"/ws/one", "app#test"}, {"/ws/two", "app#build"}} {
		lk, err := New(dir, other.root).TryLock(other.task)
		if err != nil {
			t.Errorf("TryLock %s of %s beside the helper: %v", other.task, other.root, err)
			continue
		}
		if err := lk.Unlock(); err != nil {
			t.Error(err)
		}
	}
}

// Lock waits while the task is held and takes it once the holder unlocks, having said once that
// it waits; a deadline that ends first is answered.
func TestLockWaits(t *testing.T) {
	dir := t.TempDir()
	h := hold(t, dir, "/ws", "app#build")
	l := New(dir, "/ws")

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(ctx, "app#build", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock past its deadline: %v, want DeadlineExceeded", err)
	}

	type result struct {
		lk  *Lock
		err error
	}
	got := make(chan result, 1)
	waiting := make(chan *HeldError, 2)
	go func() {
		lk, err := l.Lock(context.Background(), "app#build", func(he *HeldError) { waiting <- he })
		got <- result{lk, err}
	}()
	if he := <-waiting; he.PID != h.cmd.Process.Pid {
		t.Errorf("waiting on pid %d, want the helper's %d", he.PID, h.cmd.Process.Pid)
	}
	h.release(t)
	r := <-got
	if r.err != nil {
		t.Fatalf("Lock after the holder unlocked: %v", r.err)
	}
	if len(waiting) != 0 {
		t.Errorf("held was called %d more times, want once", len(waiting))
	}
	// Held here now: another open of the lock file, in this process too, is refused.
	if _, err := l.TryLock("app#build"); !errors.As(err, new(*HeldError)) {
		t.Errorf("TryLock of a task this process holds: %v, want a HeldError", err)
	}
	if err := r.lk.Unlock(); err != nil {
		t.Fatal(err)
	}
	hold(t, dir, "/ws", "app#build").release(t)
}

// A workspace reached through a symlink is the same workspace: its tasks are held alike.
func TestSymlinkedRootIsTheSame(t *testing.T) {
	dir, ws := t.TempDir(), t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Skip("no symlinks here:", err)
	}
	hold(t, dir, ws, "app#build")
	if _, err := New(dir, link).TryLock("app#build"); !errors.As(err, new(*HeldError)) {
		t.Errorf("TryLock through a symlink to the root: %v, want a HeldError", err)
	}
}

// A process that dies holding a lock leaves the task free: the kernel released it.
func TestKilledHolderReleases(t *testing.T) {
	dir := t.TempDir()
	h := hold(t, dir, "/ws", "app#build")
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Wait()
	lk, err := New(dir, "/ws").Lock(context.Background(), "app#build", func(he *HeldError) {
		t.Errorf("waited on %v after its holder was killed", he)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(); err != nil {
		t.Fatal(err)
	}
}
