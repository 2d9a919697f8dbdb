// Package taskmutex holds each task of a workspace for one process at a time. A vx run takes a
// task's lock before it looks the task up in the cache and keeps it until the task's outputs are
// stored, so that two runs of one workspace never run one task in one folder at once: the second
// waits, then finds what the first stored. The lock is an advisory lock on a file under the state
// folder (flock on Unix, LockFileEx on Windows), which the kernel releases when the process that
// holds it dies: a crashed run never leaves a task locked.
//
// A lock is named by the workspace root and the task id, so that workspaces sharing a state folder
// (VX_CACHE_DIR) never wait for each other, and different tasks never do either.
//
// Key locks (keys.go) are the machine-wide half: one per cache key in the cache store's folder,
// which every checkout sharing the store takes before it executes a key, so that a key is executed
// once at a time whichever checkout, process or agent asks.
package taskmutex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Dir is the folder of the lock files, under the state folder.
const Dir = "locks"

// Locks are the task locks of one workspace root in one state folder.
type Locks struct {
	dir  string
	root string
}

// New answers the task locks of the workspace at root, kept in stateDir's Dir folder. The root is
// named by its real path, so that two runs that reached it through different symlinks share them.
func New(stateDir, root string) *Locks {
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return &Locks{dir: filepath.Join(stateDir, Dir), root: filepath.Clean(root)}
}

// HeldError says that another process holds a task's lock.
type HeldError struct {
	TaskID string
	// PID is the process holding it; 0 when that is not known (the holder is about to say it,
	// or the system cannot tell).
	PID int
}

// Error names the task and the process that holds it.
func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is running in %s", e.TaskID, e.Holder())
}

// Holder names the process holding the lock: "pid N", or "another process" when its pid is not known.
func (e *HeldError) Holder() string {
	if e.PID > 0 {
		return "pid " + strconv.Itoa(e.PID)
	}
	return "another process"
}

// Lock is a task lock this process holds.
type Lock struct {
	f     lockFile
	taken bool
}

// Path answers the lock file of taskID: a hash of the workspace root and the task id, so that the
// name holds no character a file system refuses.
func (l *Locks) Path(taskID string) string {
	return filepath.Join(l.dir, hashName(l.root+"\x00"+taskID)+".lock")
}

// hashName is s as a file name: the first half of its SHA-256, in hex.
func hashName(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// TryLock takes taskID's lock if no process holds it, or answers a *HeldError naming the one that
// does. Another error says the lock file could not be made or locked.
func (l *Locks) TryLock(taskID string) (*Lock, error) {
	path := l.Path(taskID)
	f, err := openLock(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(l.dir, 0o755); err != nil {
			return nil, fmt.Errorf("lock %s: %w", taskID, err)
		}
		f, err = openLock(path)
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", taskID, err)
	}
	held, err := tryLock(f)
	if err != nil || held {
		var pid int
		if held {
			pid = holder(f)
		}
		_ = closeLock(f)
		if err != nil {
			return nil, fmt.Errorf("lock %s: %w", taskID, err)
		}
		return nil, &HeldError{TaskID: taskID, PID: pid}
	}
	return &Lock{f: f, taken: true}, nil
}

// The polling bounds of Lock: it tries again after firstPoll, then twice as long each time, up
// to maxPoll. A lock file cannot be waited on with a context; a held task is one that runs for a
// while, so a tenth of a second more is nothing beside it.
const (
	firstPoll = 5 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

// Lock takes taskID's lock, waiting while another process holds it; held, when not nil, is called
// once with the *HeldError when it has to wait. It answers ctx's error when ctx ends first.
func (l *Locks) Lock(ctx context.Context, taskID string, held func(*HeldError)) (*Lock, error) {
	poll := firstPoll
	var timer *time.Timer
	for {
		lk, err := l.TryLock(taskID)
		var he *HeldError
		if !errors.As(err, &he) {
			return lk, err
		}
		if held != nil {
			held(he)
			held = nil
		}
		if timer == nil {
			timer = time.NewTimer(poll)
			defer timer.Stop()
		} else {
			timer.Reset(poll)
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-timer.C:
		}
		poll = min(2*poll, maxPoll)
	}
}

// Unlock releases the lock. The lock file stays: removing it would let a process that opened it
// just before lock a file no other process can find any more.
func (k *Lock) Unlock() error {
	if k == nil || !k.taken {
		return nil
	}
	k.taken = false
	return closeLock(k.f)
}
