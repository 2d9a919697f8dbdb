package store

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/atomicfile"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReadOnlyAbsentCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".vx")
	st, err := OpenReadOnly(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs(context.Background(), RunQuery{})
	if err != nil || len(runs) != 0 {
		t.Fatalf("runs %v %v", runs, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the read created %s", dir)
	}
	if got := Inspect(context.Background(), dir); got.State != "absent" {
		t.Fatalf("state %+v", got)
	}
}

func TestOtherVersionRefusedThenReset(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.db.Exec(`UPDATE meta SET value = '0' WHERE key = 'schema'`); err != nil {
		t.Fatal(err)
	}
	st.Close()

	_, err = OpenReadOnly(ctx, dir)
	var ve *VersionError
	if !errors.As(err, &ve) || ve.Found != "0" || !strings.Contains(err.Error(), "index.db has index schema version 0") {
		t.Fatalf("reader: %v", err)
	}
	if got := Inspect(ctx, dir); got.State != "otherVersion" || got.FoundVersion != "0" {
		t.Fatalf("inspect: %+v", got)
	}
	if _, err := Open(ctx, dir, Options{}); !errors.As(err, &ve) {
		t.Fatalf("a writer that does not reset: %v", err)
	}
	st, err = Open(ctx, dir, Options{ResetOtherVersion: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Reset != "schema version 0" {
		t.Fatalf("reset %q", st.Reset)
	}
	st.Close()
	if got := Inspect(ctx, dir); got.State != "ok" {
		t.Fatalf("after reset: %+v", got)
	}
}

func TestUnreadableIndexSetAside(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(IndexPath(dir), []byte(strings.Repeat("not a database ", 400)), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := Open(ctx, dir, Options{ResetOtherVersion: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !strings.Contains(st.Reset, "unreadable") {
		t.Fatalf("reset %q", st.Reset)
	}
}

func TestCASCorruptIsMissing(t *testing.T) {
	c := NewCAS(t.TempDir())
	h, err := c.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := c.Get(h); err != nil || string(data) != "hello" {
		t.Fatalf("get: %q %v", data, err)
	}
	if err := os.WriteFile(c.Path(h), []byte("hellO"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(h); !errors.Is(err, ErrMissing) {
		t.Fatalf("corrupt blob: %v", err)
	}
	if _, err := c.Get(strings.Repeat("0", 64)); !errors.Is(err, ErrMissing) {
		t.Fatalf("missing blob: %v", err)
	}
}

func TestRunIDs(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	base := time.UnixMilli(1_800_000_000_000)
	a, b := NewRunID(base), NewRunID(base.Add(time.Millisecond))
	if len(a) != 26 || a >= b {
		t.Fatalf("ids not sortable: %s %s", a, b)
	}
	for _, id := range []string{a, b} {
		if err := st.BeginRun(ctx, Run{ID: id, Started: base, PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := st.ResolveRun(ctx, b[:20]); err != nil || got != b {
		t.Fatalf("prefix: %s %v", got, err)
	}
	var amb *AmbiguousRunError
	if _, err := st.ResolveRun(ctx, a[:8]); !errors.As(err, &amb) || len(amb.Candidates) != 2 {
		t.Fatalf("ambiguous: %v", err)
	}
	var unk *UnknownRunError
	if _, err := st.ResolveRun(ctx, "zzzz"); !errors.As(err, &unk) {
		t.Fatalf("unknown: %v", err)
	}
}

func TestInterruptedRunsMarked(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A pid that cannot be alive.
	if err := st.BeginRun(ctx, Run{ID: "a", Started: time.Now(), PID: 1 << 30, Host: "h"}); err != nil {
		t.Fatal(err)
	}
	if err := st.BeginRun(ctx, Run{ID: "b", Started: time.Now(), PID: os.Getpid(), Host: "h"}); err != nil {
		t.Fatal(err)
	}
	r, _, err := st.RunByID(ctx, "a")
	if err != nil || r.Status != RunInterrupted {
		t.Fatalf("run a: %+v %v", r, err)
	}
}

// indexNames answers the names of the index's own indexes (not SQLite's automatic ones).
func indexNames(t *testing.T, st *Store) map[string]bool {
	t.Helper()
	rows, err := st.db.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[n] = true
	}
	return out
}

// An index recorded before the readers' indexes existed keeps its history: a reader reads it as it
// is, and the next writer adds them (and drops the one they replace).
func TestReadIndexesAddedByWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	have := indexNames(t, st)
	for _, ix := range readIndexes {
		if !have[ix.name] {
			t.Errorf("a new index lacks %s", ix.name)
		}
	}
	// The layout before them.
	for _, ix := range readIndexes {
		if _, err := st.db.Exec(`DROP INDEX ` + ix.name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.db.Exec(`CREATE INDEX cache_entries_by_project ON cache_entries (project)`); err != nil {
		t.Fatal(err)
	}
	run := Run{ID: NewRunID(time.Now()), Started: time.Now(), PID: os.Getpid()}
	if err := st.BeginRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := st.PutEntry(ctx, Entry{Hash: "h", TaskID: "p#t", Project: "p", Size: 10, Created: time.Now(), LastUsed: time.Now()}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	ro, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := ro.CountCache(ctx, "p", time.Unix(0, 0)); err != nil || c.Entries != 1 || c.TotalBytes != 10 {
		t.Errorf("a reader of the old layout: %+v %v", c, err)
	}
	if got := indexNames(t, ro); got[readIndexes[0].name] {
		t.Errorf("a reader created an index")
	}
	ro.Close()

	st, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	have = indexNames(t, st)
	for _, ix := range readIndexes {
		if !have[ix.name] {
			t.Errorf("the writer did not add %s", ix.name)
		}
	}
	for _, name := range droppedIndexes {
		if have[name] {
			t.Errorf("the writer kept %s", name)
		}
	}
	if st.Reset != "" {
		t.Errorf("adding indexes reset the index: %s", st.Reset)
	}
	if runs, err := st.Runs(ctx, RunQuery{}); err != nil || len(runs) != 1 || runs[0].ID != run.ID {
		t.Errorf("history after the writer added the indexes: %v %v", runs, err)
	}
}

// The flaky tasks read from key_outcomes are those the history says; an index recorded before
// key_outcomes existed answers from the history until a writer adds and fills the table.
func TestFlakyTasksFromKeyOutcomes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := Run{ID: NewRunID(time.Now()), Started: time.Now(), PID: os.Getpid()}
	if err := st.BeginRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var execs []Execution
	for i, e := range []struct{ task, hash, status string }{
		{"a#test", "k1", "miss"}, {"a#test", "k1", "failed"}, // flaky: one key passed and failed
		{"b#test", "k2", "miss"}, {"b#test", "k3", "failed"}, // deterministic: the key changed
		{"c#test", "k4", "hit"}, {"c#test", "k4", "timedOut"}, // flaky by a timeout
		{"d#test", "", "failed"}, {"d#test", "", "miss"}, // no key: never flaky
	} {
		execs = append(execs, Execution{RunID: run.ID, TaskID: e.task, Project: e.task[:1], Task: "test", Ord: i, Status: e.status, Hash: e.hash})
	}
	for i := range execs {
		// One run records a task once: give each its own run.
		execs[i].RunID = NewRunID(time.Now().Add(time.Duration(i) * time.Millisecond))
		if err := st.BeginRun(ctx, Run{ID: execs[i].RunID, Started: time.Now(), PID: os.Getpid()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Record(ctx, Batch{Executions: execs}); err != nil {
		t.Fatal(err)
	}
	want := "a#test c#test"
	check := func(what string, s *Store) {
		t.Helper()
		got, err := s.FlakyTasks(ctx)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("%s: flaky = %v (%v), want %s", what, got, err, want)
		}
	}
	check("through key_outcomes", st)
	// The layout before key_outcomes.
	if _, err := st.db.Exec(`DROP TABLE key_outcomes`); err != nil {
		t.Fatal(err)
	}
	st.Close()
	ro, err := OpenReadOnly(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	check("a reader, from the history", ro)
	if hasTable(ctx, ro.db, "key_outcomes") {
		t.Error("a reader created key_outcomes")
	}
	ro.Close()
	st, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !hasTable(ctx, st.db, "key_outcomes") {
		t.Fatal("the writer did not add key_outcomes")
	}
	check("after a writer filled key_outcomes", st)
}

// A blob being written is a temporary file Walk marks as such, so that a prune at work beside a
// run gives it time rather than removing it as an orphan; so is the leftover of an earlier vx.
func TestCASWalkMarksTemps(t *testing.T) {
	c := NewCAS(t.TempDir())
	h, err := c.Put([]byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(filepath.Dir(c.Path(h)), ".tmp-123")
	if err := os.WriteFile(old, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = atomicfile.Write(filepath.Join(filepath.Dir(c.Path(h)), strings.Repeat("f", 64)), func(io.Writer) error {
		blobs, err := c.Walk()
		if err != nil {
			return err
		}
		var temps []string
		for _, b := range blobs {
			if b.Temp {
				temps = append(temps, b.Name)
			} else if b.Name != h {
				t.Errorf("%s listed as a blob", b.Name)
			}
		}
		if len(temps) != 2 {
			t.Errorf("temporary files %v, want the write in flight and .tmp-123", temps)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
