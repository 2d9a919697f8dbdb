package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// legacyLayout writes a checkout folder dir as the vx before the shared store left it: the cache
// entries in index.db (schema version 9) and the blobs in dir/cas. It answers the entry's blobs.
func legacyLayout(t *testing.T, dir string) (outputs, log, failureLog string) {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if outputs, err = st.CAS().Put([]byte("archive")); err != nil {
		t.Fatal(err)
	}
	if log, err = st.CAS().Put([]byte("log")); err != nil {
		t.Fatal(err)
	}
	if failureLog, err = st.CAS().Put([]byte("it failed")); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	id := NewRunID(now)
	for _, err := range []error{
		st.BeginRun(ctx, Run{ID: id, Started: now, PID: os.Getpid()}),
		st.Record(ctx, Batch{Executions: []Execution{
			{RunID: id, TaskID: "app#build", Project: "app", Task: "build", Status: StatusMiss, Hash: "k1", Duration: 7 * time.Second, PeakRSSBytes: 3 << 20},
			{RunID: id, TaskID: "app#test", Project: "app", Task: "test", Ord: 1, Status: StatusFailed, Hash: "k2", LogBlob: failureLog, LogSource: "failure"},
		}}),
		st.FinishRun(ctx, id, RunFailed, 1, now.Add(time.Second)),
		st.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", IndexPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`CREATE TABLE cache_entries (hash TEXT PRIMARY KEY, task_id TEXT NOT NULL, project TEXT NOT NULL, command TEXT NOT NULL,
			outputs_blob TEXT NOT NULL DEFAULT '', outputs TEXT NOT NULL DEFAULT '[]', log_blob TEXT NOT NULL DEFAULT '',
			size INTEGER NOT NULL DEFAULT 0, duration_ms INTEGER NOT NULL DEFAULT 0, exit_code INTEGER NOT NULL DEFAULT 0,
			created_ms INTEGER NOT NULL, last_used_ms INTEGER NOT NULL, listing BLOB)`,
		fmt.Sprintf(`INSERT INTO cache_entries (hash, task_id, project, command, outputs_blob, outputs, log_blob, size, duration_ms, created_ms, last_used_ms)
			VALUES ('k1', 'app#build', 'app', 'make', '%s', '[{"path":"dist/a","size":7,"mode":420,"hash":"h"}]', '%s', 10, 7000, 1, 2)`, outputs, log),
		`PRAGMA user_version = 11`, `UPDATE meta SET value = '11' WHERE key = 'schema'`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	for _, f := range []string{SharedIndexFile, SharedIndexFile + "-wal", SharedIndexFile + "-shm"} {
		os.Remove(filepath.Join(dir, f))
	}
	return outputs, log, failureLog
}

// A checkout folder of the layout before the shared store is carried into it by the first writer
// that opens it: its entry (with its listing, and who wrote it), its blobs, the command runs the
// scheduler estimates from and the failure log its history keeps. Its history stays; it says so
// once; the next open carries nothing again.
func TestLegacyCheckoutCarriedIntoSharedStore(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	dir := filepath.Join(root, ".vx")
	shared := filepath.Join(t.TempDir(), "shared")
	outputs, log, failureLog := legacyLayout(t, dir)

	st, err := Open(ctx, dir, Options{SharedDir: shared, ResetOtherVersion: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := "moved 1 cache entries and 3 blobs from " + dir + " into the shared store " + shared; st.Migrated != want {
		t.Errorf("Migrated = %q, want %q", st.Migrated, want)
	}
	e, ok, err := st.Entry(ctx, "k1")
	if err != nil || !ok || e.Checkout != root || len(e.Outputs) != 1 || e.Outputs[0].Path != "dist/a" || e.Duration != 7*time.Second {
		t.Fatalf("carried entry %+v %v %v", e, ok, err)
	}
	for _, b := range []string{outputs, log, failureLog} {
		if _, err := NewCAS(filepath.Join(shared, "cas")).Get(b); err != nil {
			t.Errorf("blob %s not in the shared store: %v", b[:12], err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cas")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the checkout's cas/ is still there: %v", err)
	}
	runs, err := st.RecentCommandRuns(ctx, []string{"app#build"}, 5)
	if err != nil || len(runs["app#build"]) != 1 || runs["app#build"][0].PeakRSSBytes != 3<<20 {
		t.Errorf("command runs %+v %v", runs, err)
	}
	refs, err := st.ReferencedBlobs(ctx)
	if err != nil || !refs[failureLog] || !refs[outputs] || !refs[log] {
		t.Errorf("referenced blobs %v %v", refs, err)
	}
	if got, err := st.Runs(ctx, RunQuery{}); err != nil || len(got) != 1 {
		t.Errorf("history after the move: %d runs %v", len(got), err)
	}
	var n int
	if err := st.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'cache_entries'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("cache_entries still in the checkout's index: %d %v", n, err)
	}
	st.Close()

	st, err = Open(ctx, dir, Options{SharedDir: shared})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Migrated != "" {
		t.Errorf("a second open carried again: %s", st.Migrated)
	}
	if runs, _ := st.RecentCommandRuns(ctx, []string{"app#build"}, 5); len(runs["app#build"]) != 1 {
		t.Errorf("command runs after a second open: %+v", runs)
	}
}

// Two checkouts that name one shared store see each other's entries and command runs, and a
// reader given only the checkout's folder finds the shared store its last writer used.
func TestCheckoutsShareEntries(t *testing.T) {
	ctx := context.Background()
	shared := t.TempDir()
	a, b := filepath.Join(t.TempDir(), ".vx"), filepath.Join(t.TempDir(), ".vx")
	sa, err := Open(ctx, a, Options{SharedDir: shared})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := sa.PutEntry(ctx, Entry{Hash: "k", TaskID: "app#build", Project: "app", Command: "make", Created: now, LastUsed: now, Checkout: filepath.Dir(a)}); err != nil {
		t.Fatal(err)
	}
	id := NewRunID(now)
	if err := sa.BeginRun(ctx, Run{ID: id, Started: now, PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if err := sa.Record(ctx, Batch{Executions: []Execution{{RunID: id, TaskID: "app#build", Project: "app", Task: "build", Status: StatusMiss, Duration: time.Second}}}); err != nil {
		t.Fatal(err)
	}
	sa.Close()

	sb, err := Open(ctx, b, Options{SharedDir: shared})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if e, ok, err := sb.Entry(ctx, "k"); err != nil || !ok || e.Checkout != filepath.Dir(a) {
		t.Errorf("checkout b reads %+v %v %v", e, ok, err)
	}
	if runs, err := sb.RecentCommandRuns(ctx, []string{"app#build"}, 3); err != nil || len(runs["app#build"]) != 1 {
		t.Errorf("checkout b's estimates %+v %v", runs, err)
	}
	ro, err := OpenReadOnly(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if ro.SharedDir() != shared {
		t.Errorf("reader's shared store %s, want %s", ro.SharedDir(), shared)
	}
	if n, _, err := ro.CacheTotals(ctx, ""); err != nil || n != 1 {
		t.Errorf("reader counts %d entries (%v), want 1", n, err)
	}
}

// A shared store of another layout (a newer vx's) is refused by name with the fix, by a writer
// that resets its own checkout's index too, and never reset: the other vx keeps its entries.
func TestSharedStoreOfAnotherVersionRefused(t *testing.T) {
	ctx := context.Background()
	shared := t.TempDir()
	st, err := Open(ctx, filepath.Join(t.TempDir(), ".vx"), Options{SharedDir: shared})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := st.PutEntry(ctx, Entry{Hash: "k", TaskID: "a#b", Project: "a", Command: "c", Created: now, LastUsed: now}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", SharedIndexPath(shared))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %[1]d; UPDATE meta SET value = '%[1]d' WHERE key = 'schema'`, SharedSchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(ctx, filepath.Join(t.TempDir(), ".vx"), Options{SharedDir: shared, ResetOtherVersion: true})
	var ve *SharedVersionError
	if !errors.As(err, &ve) || !strings.Contains(err.Error(), "--cache-dir") || !strings.Contains(err.Error(), SharedIndexPath(shared)) {
		t.Fatalf("writer: %v", err)
	}
	if _, err := OpenReadOnlyShared(ctx, filepath.Join(t.TempDir(), ".vx"), shared); !errors.As(err, &ve) {
		t.Fatalf("reader: %v", err)
	}
	db, _ = sql.Open("sqlite", SharedIndexPath(shared))
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM cache_entries`).Scan(&n); err != nil || n != 1 {
		t.Errorf("the other version's entries: %d %v", n, err)
	}
}

// A shared store others may write, another user's, or a read-only one is refused by a writer with
// one line naming the folder and the fix; a symlink to a good one is fine.
func TestSharedStoreFolderRefused(t *testing.T) {
	ctx := context.Background()
	open := func(shared string) error {
		st, err := Open(ctx, filepath.Join(t.TempDir(), ".vx"), Options{SharedDir: shared})
		if err == nil {
			st.Close()
		}
		return err
	}
	good := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	if err := open(link); err != nil {
		t.Errorf("a symlinked store: %v", err)
	}

	open777 := t.TempDir()
	os.Chmod(open777, 0o777)
	if err := open(open777); err == nil || !strings.Contains(err.Error(), "writable by others") || !strings.Contains(err.Error(), "chmod go-w "+open777) {
		t.Errorf("a folder others may write: %v", err)
	}

	ro := t.TempDir()
	os.Chmod(ro, 0o555)
	defer os.Chmod(ro, 0o755)
	if err := open(ro); err == nil || !strings.Contains(err.Error(), "shared store "+ro) || !strings.Contains(err.Error(), "make it writable") {
		t.Errorf("a read-only folder: %v", err)
	}

	if os.Geteuid() == 0 {
		theirs := t.TempDir()
		if err := os.Chown(theirs, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if err := open(theirs); err == nil || !strings.Contains(err.Error(), "belongs to another user") {
			t.Errorf("another user's folder: %v", err)
		}
	}
}

// A folder VX_CACHE_DIR named before the shared store holds a whole state folder of the old layout;
// naming it now as the shared store carries its entries (their blobs are already there) and keeps
// its history where it is, and says so.
func TestOldStateFolderAdoptedAsSharedStore(t *testing.T) {
	ctx := context.Background()
	old := filepath.Join(t.TempDir(), "state")
	legacyLayout(t, old)
	dir := filepath.Join(t.TempDir(), ".vx")
	st, err := Open(ctx, dir, Options{SharedDir: old})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if !strings.Contains(st.Migrated, "moved the cache entries of "+IndexPath(old)) || !strings.Contains(st.Migrated, "its run history stays there") {
		t.Errorf("Migrated = %q", st.Migrated)
	}
	if e, ok, err := st.Entry(ctx, "k1"); err != nil || !ok {
		t.Errorf("the old folder's entry: %+v %v %v", e, ok, err)
	} else if _, err := st.CAS().Get(e.LogBlob); err != nil {
		t.Errorf("its log: %v", err)
	}
	ro, err := OpenReadOnlyShared(ctx, old, old)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if runs, err := ro.Runs(ctx, RunQuery{}); err != nil || len(runs) != 1 {
		t.Errorf("the old folder's history: %d runs %v", len(runs), err)
	}
}
