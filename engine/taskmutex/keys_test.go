package taskmutex

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"
)

// keyHelper takes key's lock in TASKLOCK_DIR for the checkout TASKLOCK_ROOT and task, says
// "locked", and holds it until its stdin ends (then it unlocks, or removes the lock file when
// TASKLOCK_REMOVE is set) or it is killed. With TASKLOCK_LATE_OWNER set it says "locked" once it
// holds the lock and writes its owner line that long after.
func keyHelper(key, task string) int {
	keys := Keys(os.Getenv("TASKLOCK_DIR"), os.Getenv("TASKLOCK_ROOT"))
	late, lateErr := time.ParseDuration(os.Getenv("TASKLOCK_LATE_OWNER"))
	if lateErr == nil {
		keys.beforeOwner = func() {
			fmt.Println("locked")
			time.Sleep(late)
		}
	}
	lk, err := keys.Lock(context.Background(), key, task, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if lateErr != nil {
		fmt.Println("locked")
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	release := lk.Unlock
	if os.Getenv("TASKLOCK_REMOVE") != "" {
		release = lk.Remove
	}
	if err := release(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

const testKey = "3f2a9c0d4e5b6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7"

// holdKey starts a helper process that holds testKey's lock in dir for checkout.
func holdKey(t *testing.T, dir, checkout string, env ...string) *helperProc {
	t.Helper()
	return hold(t, dir, checkout, "app#build", append([]string{"TASKLOCK_KEY=" + testKey}, env...)...)
}

// A key another process holds is refused, naming its pid, its checkout and its task as it wrote
// them; Held says the same; another key is free, whichever checkout asks.
func TestKeyHeldNamesItsOwner(t *testing.T) {
	dir := t.TempDir()
	h := holdKey(t, dir, "/src/wt1")
	_, err := Keys(dir, "/src/wt2").TryLock(testKey, "app#build")
	var he *KeyHeldError
	if !errors.As(err, &he) {
		t.Fatalf("TryLock of a held key: %v, want a KeyHeldError", err)
	}
	o := he.Owner
	if o.PID != h.cmd.Process.Pid || o.Checkout != "/src/wt1" || o.TaskID != "app#build" || o.Since.IsZero() {
		t.Errorf("owner %+v, want pid %d in /src/wt1 running app#build", o, h.cmd.Process.Pid)
	}
	want := fmt.Sprintf("key 3f2a9c0d4e5b is being executed by pid %d in /src/wt1", h.cmd.Process.Pid)
	if he.Error() != want {
		t.Errorf("error %q, want %q", he, want)
	}
	if got, held := Keys(dir, "/src/wt2").Held(testKey); !held || got.PID != o.PID {
		t.Errorf("Held = %+v, %v; want the helper", got, held)
	}
	lk, err := Keys(dir, "/src/wt1").TryLock("0123abcd", "app#test")
	if err != nil {
		t.Fatalf("another key beside the helper: %v", err)
	}
	if err := lk.Unlock(); err != nil {
		t.Fatal(err)
	}
	h.release(t)
	if _, held := Keys(dir, "/src/wt2").Held(testKey); held {
		t.Error("Held after the helper released the key")
	}
}

// A waiter that asks between the take of the lock and the write of its owner line reads the
// holder's line, not its predecessor's.
func TestKeyOwnerWrittenLateIsRead(t *testing.T) {
	dir := t.TempDir()
	holdKey(t, dir, "/src/wt0").release(t)
	h := holdKey(t, dir, "/src/wt1", "TASKLOCK_LATE_OWNER=30ms")
	_, err := Keys(dir, "/src/wt2").TryLock(testKey, "app#build")
	var he *KeyHeldError
	if !errors.As(err, &he) {
		t.Fatalf("TryLock of a held key: %v, want a KeyHeldError", err)
	}
	if o := he.Owner; o.PID != h.cmd.Process.Pid || o.Checkout != "/src/wt1" || o.TaskID != "app#build" {
		t.Errorf("owner %+v, want pid %d in /src/wt1 running app#build", o, h.cmd.Process.Pid)
	}
}

// A waiter whose owner is killed takes the key: the kernel released the lock.
func TestKeyKilledOwnerHandsOver(t *testing.T) {
	dir := t.TempDir()
	h := holdKey(t, dir, "/src/wt1")
	waited := make(chan *KeyHeldError, 4)
	got := make(chan error, 1)
	go func() {
		lk, err := Keys(dir, "/src/wt2").Lock(context.Background(), testKey, "app#build", func(he *KeyHeldError) { waited <- he })
		if err == nil {
			err = lk.Unlock()
		}
		got <- err
	}()
	if he := <-waited; he.Owner.PID != h.cmd.Process.Pid {
		t.Errorf("waiting on %+v, want the helper, pid %d", he.Owner, h.cmd.Process.Pid)
	}
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Wait()
	if err := <-got; err != nil {
		t.Fatalf("Lock after the owner was killed: %v", err)
	}
}

// A lock file a prune removed after a process opened it and before it locked it is not the key's
// any more: that process takes the key's new file, and excludes a third process that opens it.
func TestKeyRemovedFileIsReopened(t *testing.T) {
	dir := t.TempDir()
	pruner, err := Keys(dir, "/src/wt1").TryLock(testKey, "")
	if err != nil {
		t.Fatal(err)
	}
	l := Keys(dir, "/src/wt2")
	l.afterOpen = func() {
		l.afterOpen = nil
		if err := pruner.Remove(); err != nil {
			t.Error(err)
		}
	}
	lk, err := l.TryLock(testKey, "app#build")
	if err != nil {
		t.Fatalf("TryLock across a removal: %v", err)
	}
	defer lk.Unlock()
	if _, err := os.Stat(l.KeyPath(testKey)); err != nil {
		t.Fatalf("the key's lock file after TryLock: %v", err)
	}
	if _, err := Keys(dir, "/src/wt3").TryLock(testKey, "app#build"); !errors.As(err, new(*KeyHeldError)) {
		t.Errorf("TryLock of the key the first taker holds: %v, want a KeyHeldError", err)
	}
}
