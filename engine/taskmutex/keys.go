package taskmutex

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Key locks: one advisory lock per cache key in the folder of the cache store, which every
// checkout sharing that store sees, so that a key is executed by one process of the machine at a
// time. A run takes a key's lock after its lookup missed, looks the key up again once it holds it
// (the process it waited for may have stored it) and keeps it until the task's entry is stored;
// a prune takes it before it evicts the key's entry, and leaves alone an entry whose lock is held.
// The holder writes who it is into the lock file (its pid, its checkout, the task), which a
// waiter reads to say what it waits for. The kernel releases the lock of a process that dies: a
// waiter then takes the key over.
//
// A process holds at most one key lock while it waits for one: the runner takes a key's lock
// last, after its task lock, and waits for nothing while it holds it, so no two processes can wait
// for each other.

// keyPrefix starts the name of every key lock file, which task lock files (32 hex digits) never do.
const keyPrefix = "key-"

// ownerOffset is where the holder of a key lock writes who it is: past the pid a Windows holder
// writes at the file's start.
const ownerOffset = 32

// maxOwner bounds the owner line a waiter reads.
const maxOwner = 4096

// Owner is who holds a key lock, as it wrote it into the lock file.
type Owner struct {
	// PID is the holding process; 0 when not known.
	PID int `json:"pid"`
	// Checkout is the workspace root of the run holding it; "" when not known.
	Checkout string `json:"checkout,omitempty"`
	// TaskID is the task it runs under the key.
	TaskID string `json:"taskId,omitempty"`
	// Since is when it took the lock.
	Since time.Time `json:"since,omitzero"`
}

// String names the owner for a one-line message: "pid 123 in /src/wt2", "pid 123", or "another
// process" when nothing is known.
func (o Owner) String() string {
	s := "another process"
	if o.PID > 0 {
		s = "pid " + strconv.Itoa(o.PID)
	}
	if o.Checkout != "" {
		s += " in " + o.Checkout
	}
	return s
}

// KeyLocks are the key locks of one cache store, taken on behalf of one checkout.
type KeyLocks struct {
	dir      string
	checkout string
	// afterOpen, when set, is called between the open of a lock file and its lock (a test's hook).
	afterOpen func()
	// beforeOwner, when set, is called between the take of a lock and the write of its owner
	// line (a test's hook).
	beforeOwner func()
}

// Keys answers the key locks kept in storeDir's Dir folder, held on behalf of the workspace at
// checkout (written into each lock this process takes, for its waiters to read).
func Keys(storeDir, checkout string) *KeyLocks {
	return &KeyLocks{dir: filepath.Join(storeDir, Dir), checkout: checkout}
}

// KeyHeldError says that another process (or another run of this one) holds a key's lock.
type KeyHeldError struct {
	Key   string
	Owner Owner
}

// Error names the key and its owner.
func (e *KeyHeldError) Error() string {
	return fmt.Sprintf("key %s is being executed by %s", ShortKey(e.Key), e.Owner)
}

// ShortKey is the first 12 characters of a key, as messages name it.
func ShortKey(key string) string {
	if len(key) > 12 {
		return key[:12]
	}
	return key
}

// KeyLock is a key lock this process holds.
type KeyLock struct {
	f     lockFile
	path  string
	taken bool
}

// KeyPath answers key's lock file. A key that is not a plain hex digest is named by its hash, so
// that the name holds no separator.
func (l *KeyLocks) KeyPath(key string) string {
	return filepath.Join(l.dir, keyPrefix+fileKey(key)+".lock")
}

// fileKey is key as a file name: itself when it is lower-case hex of a sane length.
func fileKey(key string) string {
	if len(key) > 0 && len(key) <= 128 && strings.Trim(key, "0123456789abcdef") == "" {
		return key
	}
	return hashName(key)
}

// TryLock takes key's lock for taskID if no one holds it, or answers a *KeyHeldError naming the
// owner. Another error says the lock file could not be made or locked.
func (l *KeyLocks) TryLock(key, taskID string) (*KeyLock, error) {
	path := l.KeyPath(key)
	for range maxReopen {
		f, err := openLockDir(l.dir, path)
		if err != nil {
			return nil, fmt.Errorf("lock key %s: %w", ShortKey(key), err)
		}
		if l.afterOpen != nil {
			l.afterOpen()
		}
		held, err := tryLock(f)
		if err != nil || held {
			owner := Owner{}
			if held {
				owner = readOwner(f)
			}
			_ = closeLock(f)
			if err != nil {
				return nil, fmt.Errorf("lock key %s: %w", ShortKey(key), err)
			}
			return nil, &KeyHeldError{Key: key, Owner: owner}
		}
		// A prune removes the file of a key it evicted while it holds its lock: the file this
		// process opened before then is no longer the key's, and its lock excludes no one.
		if !sameFile(f, path) {
			_ = closeLock(f)
			continue
		}
		if l.beforeOwner != nil {
			l.beforeOwner()
		}
		writeOwner(f, Owner{PID: os.Getpid(), Checkout: l.checkout, TaskID: taskID, Since: time.Now().UTC()})
		return &KeyLock{f: f, path: path, taken: true}, nil
	}
	return nil, fmt.Errorf("lock key %s: %s kept being removed", ShortKey(key), path)
}

// maxReopen bounds how many times TryLock opens a key's lock file that a prune removed under it.
const maxReopen = 100

// openLockDir opens the lock file path, making its folder dir first when it is missing.
func openLockDir(dir, path string) (lockFile, error) {
	f, err := openLock(path)
	if errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return f, err
		}
		f, err = openLock(path)
	}
	return f, err
}

// Lock takes key's lock for taskID, waiting while another process holds it; held, when not nil,
// is called with the *KeyHeldError when it has to wait, and again when the owner it names
// changes (the first died, another took the key before this process). It answers ctx's error
// when ctx ends first.
func (l *KeyLocks) Lock(ctx context.Context, key, taskID string, held func(*KeyHeldError)) (*KeyLock, error) {
	poll := firstPoll
	var timer *time.Timer
	var last *Owner
	for {
		lk, err := l.TryLock(key, taskID)
		var he *KeyHeldError
		if !errors.As(err, &he) {
			return lk, err
		}
		if held != nil && (last == nil || last.PID != he.Owner.PID) {
			held(he)
			last = &he.Owner
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

// Held reports whether another process (or another run of this one) holds key's lock now, and
// who. A key that never had a lock file is not held.
func (l *KeyLocks) Held(key string) (Owner, bool) {
	if _, err := os.Stat(l.KeyPath(key)); err != nil {
		return Owner{}, false // nothing is made to answer
	}
	lk, err := l.TryLock(key, "")
	var he *KeyHeldError
	if errors.As(err, &he) {
		return he.Owner, true
	}
	if err == nil {
		_ = lk.Unlock()
	}
	return Owner{}, false
}

// Unlock releases the lock. The lock file stays (a prune removes it with the key's entry: Remove).
func (k *KeyLock) Unlock() error {
	if k == nil || !k.taken {
		return nil
	}
	k.taken = false
	return closeLock(k.f)
}

// Remove removes the lock file, then releases the lock: a process that opened the file before sees
// that it is no longer the key's once it takes its lock, and opens the key's file again.
func (k *KeyLock) Remove() error {
	if k == nil || !k.taken {
		return nil
	}
	err := os.Remove(k.path)
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if uerr := k.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// writeOwner writes o into f, the lock file this process just locked: one JSON line at
// ownerOffset. A failed write leaves waiters naming the holder by its pid alone.
func writeOwner(f lockFile, o Owner) {
	data, err := json.Marshal(o)
	if err != nil {
		return
	}
	_ = writeAt(f, append(data, '\n'), ownerOffset)
}

// readOwner reads who holds f's lock: what the holder wrote, checked against the pid the system
// names. A holder writes its line just after it takes the lock, so a line that is not yet the
// holder's (its predecessor's, or half written) is read again for up to ownerWait; after that
// the holder is named by its pid alone.
func readOwner(f lockFile) Owner {
	buf := make([]byte, maxOwner)
	pause := time.Millisecond
	for waited := time.Duration(0); ; waited += pause {
		pid := holder(f)
		n, _ := readAt(f, buf, ownerOffset)
		line, _, _ := bytes.Cut(buf[:n], []byte("\n"))
		var o Owner
		err := json.Unmarshal(line, &o)
		if err == nil && (pid == 0 || o.PID == pid) {
			return o
		}
		if pid == 0 || waited >= ownerWait {
			return Owner{PID: pid}
		}
		time.Sleep(pause)
		pause = min(2*pause, 16*time.Millisecond)
	}
}

// ownerWait bounds how long a waiter reads a holder's owner line again until it is the holder's.
const ownerWait = 200 * time.Millisecond

// List answers the keys that have a lock file in the store (those named by their own digest).
func (l *KeyLocks) List() []string {
	names, err := os.ReadDir(l.dir)
	if err != nil {
		return nil
	}
	var keys []string
	for _, n := range names {
		key, ok := strings.CutPrefix(n.Name(), keyPrefix)
		if key, ok2 := strings.CutSuffix(key, ".lock"); ok && ok2 && fileKey(key) == key {
			keys = append(keys, key)
		}
	}
	return keys
}

// File answers the open lock file, which a child started with it (exec.Cmd's ExtraFiles) holds
// the lock through once this process has closed its own: the lock belongs to the open file. The
// caller closes it once the child has started.
func (k *KeyLock) File() *os.File {
	return lockOSFile(k.f, k.path)
}
