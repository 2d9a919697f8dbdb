package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"
)

// TestNewestEntriesOf reads the newest entry of each task asked for: one of a task's three, the
// only one of another, none of a task without, nothing of a task not asked for; and the same past
// a chunk of 500 tasks.
func TestNewestEntriesOf(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put := func(hash, task string, created int64) {
		t.Helper()
		e := Entry{Hash: hash, TaskID: task, Project: "p", Command: "true", LogBlob: "l", OutputsBlob: "o",
			Outputs: []OutputFile{{Path: "dist/" + hash, Size: 1, Mode: 0o644, Hash: "h"}},
			Created: time.UnixMilli(created), LastUsed: time.UnixMilli(created)}
		if err := st.PutEntry(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	put("a1", "p#a", 1000)
	put("a3", "p#a", 3000)
	put("a2", "p#a", 2000)
	put("b1", "p#b", 1500)
	put("x1", "p#x", 9000)
	got, err := st.NewestEntriesOf(ctx, []string{"p#a", "p#b", "p#c"})
	if err != nil {
		t.Fatal(err)
	}
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"a3", "b1"}) {
		t.Fatalf("newest entries: %q, want a3 and b1", keys)
	}
	if e := got["a3"]; e.TaskID != "p#a" || len(e.Outputs) != 1 || e.Outputs[0].Path != "dist/a3" {
		t.Fatalf("entry a3 read as %+v", e)
	}
	var many []string
	for i := range 1200 {
		id := fmt.Sprintf("q#t%04d", i)
		many = append(many, id)
		if i%2 == 0 {
			put(fmt.Sprintf("k%04d", i), id, int64(i))
		}
	}
	got, err = st.NewestEntriesOf(ctx, many)
	if err != nil || len(got) != 600 {
		t.Fatalf("1,200 tasks, 600 with an entry: %d entries, %v", len(got), err)
	}
}
