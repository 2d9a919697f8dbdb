package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
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
		if err := st.FinishRun(ctx, id, RunOK, 0, base); err != nil {
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
	// Its row is written with its first executions; then the process died.
	if err := st.Record(ctx, Batch{Executions: []Execution{{RunID: "a", TaskID: "p#t", Project: "p", Task: "t", Status: "miss"}}}); err != nil {
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

// A writer's connections checkpoint the WAL every 8,000 pages, not SQLite's 1,000 (which an
// all-hit run of a few hundred tasks crossed nearly every time), on each connection of the pool.
func TestWriterCheckpointsRarely(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	conns := make([]*sql.Conn, 3)
	for i := range conns {
		if conns[i], err = st.db.Conn(ctx); err != nil {
			t.Fatal(err)
		}
		defer conns[i].Close()
		var pages, limit int
		if err := conns[i].QueryRowContext(ctx, `PRAGMA wal_autocheckpoint`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		if err := conns[i].QueryRowContext(ctx, `PRAGMA journal_size_limit`).Scan(&limit); err != nil {
			t.Fatal(err)
		}
		if pages != 8000 || limit != 64<<20 {
			t.Fatalf("connection %d: wal_autocheckpoint %d, journal_size_limit %d", i, pages, limit)
		}
	}
}
