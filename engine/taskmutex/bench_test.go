package taskmutex

import (
	"fmt"
	"testing"
)

// BenchmarkTryLock is what a task pays for its lock when no other process holds it: open its
// file, lock, unlock, close (500 tasks' files, made before the timer starts, as after a first run).
func BenchmarkTryLock(b *testing.B) {
	l := New(b.TempDir(), "/ws")
	ids := make([]string, 500)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%03d#build", i)
		lk, err := l.TryLock(ids[i])
		if err != nil {
			b.Fatal(err)
		}
		lk.Unlock()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lk, err := l.TryLock(ids[i%len(ids)])
		if err != nil {
			b.Fatal(err)
		}
		if err := lk.Unlock(); err != nil {
			b.Fatal(err)
		}
	}
}
