package cache

import (
	"context"
	"testing"
	"time"
)

// TestNewestPrefetch reads a task's newest entry ahead: a Get of its key takes it, and a Get of
// an older key of the task, which the prefetch did not read, is looked up and hits all the same,
// restoring that entry's outputs.
func TestNewestPrefetch(t *testing.T) {
	f := newCacheFixture(t)
	f.putEntry(key(1), archived{name: "dist/out.txt", content: "one"})
	time.Sleep(5 * time.Millisecond) // a later created_ms
	f.putEntry(key(2), archived{name: "dist/out.txt", content: "two"})
	p := StartNewestPrefetch(context.Background(), f.st, []string{f.task.ID, "p#none"})
	p.Wait()
	if _, ok, _ := p.entry(key(2)); !ok {
		t.Fatal("the task's newest entry was not prefetched")
	}
	if _, ok, _ := p.entry(key(1)); ok {
		t.Fatal("an older entry of the task was prefetched")
	}
	c := f.open(RemoteConfig{})
	c.prefetch = p
	for _, k := range []struct {
		key  string
		want string
	}{{key(2), "two"}, {key(1), "one"}, {key(3), ""}} {
		_, ok, err := c.Get(context.Background(), f.task, k.key)
		if err != nil || ok != (k.want != "") {
			t.Fatalf("get %s: hit %v, %v", k.key[:1], ok, err)
		}
		if got := f.read("packages/p/dist/out.txt"); ok && got != k.want {
			t.Fatalf("get %s restored %q, want %q", k.key[:1], got, k.want)
		}
	}
	if StartNewestPrefetch(context.Background(), f.st, nil) != nil {
		t.Fatal("a prefetch of no task")
	}
}
