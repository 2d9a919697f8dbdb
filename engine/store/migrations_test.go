package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The migrations are numbered 1, 2, … with no gap, and the last one is SchemaVersion.
func TestMigrationsNumbered(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 {
			t.Errorf("migration %d (%s) is listed at position %d", m.version, m.what, i+1)
		}
	}
	if last := migrations[len(migrations)-1].version; last != SchemaVersion {
		t.Errorf("the last migration is %d, SchemaVersion %d", last, SchemaVersion)
	}
	if oldestReadable < 1 || oldestReadable > SchemaVersion {
		t.Errorf("oldestReadable %d outside 1..%d", oldestReadable, SchemaVersion)
	}
}

// schemaObjects answers the index's tables, indexes and triggers as "type name" (not SQLite's own).
func schemaObjects(t *testing.T, db querier) []string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT type || ' ' || name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var o string
		if err := rows.Scan(&o); err != nil {
			t.Fatal(err)
		}
		out = append(out, o)
	}
	return out
}

// stamps answers the index's two version stamps: PRAGMA user_version and the meta schema row.
func stamps(t *testing.T, db querier) (int, string) {
	t.Helper()
	var version int
	var row string
	ctx := context.Background()
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema'`).Scan(&row); err != nil {
		t.Fatal(err)
	}
	return version, row
}

// A new index is made by every migration and stamped with the last.
func TestNewIndexStamped(t *testing.T) {
	st, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if v, row := stamps(t, st.db); v != SchemaVersion || row != strconv.Itoa(SchemaVersion) {
		t.Errorf("stamps %d %q, want %d", v, row, SchemaVersion)
	}
	want := []string{
		"index executions_by_run", "index executions_by_status",
		"index executions_command_runs", "index executions_retried",
		"table carried_estimates", "table executions", "table key_outcomes", "table manifests",
		"table meta", "table runs", "table stat_folders",
	}
	if got := schemaObjects(t, st.db); !slices.Equal(got, want) {
		t.Errorf("objects\n got %v\nwant %v", got, want)
	}
	wantShared := []string{
		"index cache_entries_by_project_size", "index cache_entries_by_task", "index command_runs_by_task",
		"table cache_entries", "table command_runs", "table kept_blobs", "table meta",
	}
	if got := schemaObjects(t, st.sh.db); !slices.Equal(got, wantShared) {
		t.Errorf("shared objects\n got %v\nwant %v", got, wantShared)
	}
}

// restoreFixture writes the index dump testdata/name into a new state folder, as the vx that made
// it left it, and answers the folder.
func restoreFixture(t *testing.T, name string) string {
	t.Helper()
	dump, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), ".vx")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", IndexPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(dump)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An index written by the vx before the migrations — by its first release (c932db3: no readers'
// indexes, no key_outcomes) and by the last one (bdb321e: both patched in, still stamped 1) — is
// refused by readers, which write nothing, and upgraded by the next writer with its whole history.
// The fixtures are `sqlite3 index.db .dump` of a history recorded through the store package of
// that commit: four runs of four tasks, two cache entries, their manifests, a stat-cache row.
func TestUpgradeFromVersion1(t *testing.T) {
	fresh, err := Open(context.Background(), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	wantObjects := schemaObjects(t, fresh.db)
	fresh.Close()
	for _, fixture := range []string{"index-v1-c932db3.sql", "index-v1-bdb321e.sql"} {
		t.Run(fixture, func(t *testing.T) {
			ctx := context.Background()
			dir := restoreFixture(t, fixture)

			before := folderState(t, dir)
			_, err := OpenReadOnly(ctx, dir)
			var ve *VersionError
			if !errors.As(err, &ve) || ve.Found != "1" || !strings.HasSuffix(err.Error(), fmt.Sprintf("this vx reads version %d: the next `vx run` upgrades it", SchemaVersion)) {
				t.Fatalf("a reader of version 1: %v", err)
			}
			if got := Inspect(ctx, dir); got.State != "otherVersion" || got.FoundVersion != "1" {
				t.Errorf("inspect: %+v", got)
			}
			if after := folderState(t, dir); !slices.Equal(before, after) {
				t.Errorf("the reader wrote:\nbefore %v\nafter  %v", before, after)
			}

			// A writer that does not reset (vx cache prune) upgrades it all the same.
			st, err := Open(ctx, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Reset != "" {
				t.Errorf("the upgrade reset the index: %s", st.Reset)
			}
			if v, row := stamps(t, st.db); v != SchemaVersion || row != strconv.Itoa(SchemaVersion) {
				t.Errorf("stamps after the upgrade %d %q", v, row)
			}
			if got := schemaObjects(t, st.db); !slices.Equal(got, wantObjects) {
				t.Errorf("objects after the upgrade\n got %v\nwant %v", got, wantObjects)
			}
			checkFixtureHistory(t, st, "a#test c#build")

			// The trigger keeps key_outcomes current: b#test's key k7 passed, now it fails too.
			id := NewRunID(time.UnixMilli(1_780_000_300_000))
			if err := st.BeginRun(ctx, Run{ID: id, Started: time.UnixMilli(1_780_000_300_000), PID: os.Getpid()}); err != nil {
				t.Fatal(err)
			}
			if err := st.Record(ctx, Batch{Executions: []Execution{{RunID: id, TaskID: "b#test", Project: "b", Task: "test", Status: "failed", Hash: "k7"}}}); err != nil {
				t.Fatal(err)
			}
			st.Close()

			ro, err := OpenReadOnly(ctx, dir)
			if err != nil {
				t.Fatalf("a reader after the upgrade: %v", err)
			}
			defer ro.Close()
			if got, err := ro.FlakyTasks(ctx); err != nil || strings.Join(got, " ") != "a#test b#test c#build" {
				t.Errorf("flaky after a new failure = %v (%v)", got, err)
			}
			// Opening it again changes nothing.
			st, err = Open(ctx, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if runs, err := st.Runs(ctx, RunQuery{}); err != nil || len(runs) != 5 {
				t.Errorf("runs after a second open: %d %v", len(runs), err)
			}
		})
	}
}

// checkFixtureHistory checks that st holds the fixtures' history whole.
func checkFixtureHistory(t *testing.T, st *Store, flaky string) {
	t.Helper()
	ctx := context.Background()
	runs, err := st.Runs(ctx, RunQuery{})
	if err != nil || len(runs) != 4 || runs[0].ID != "01jx0000000000000000000004" || runs[3].Status != RunFailed ||
		strings.Join(runs[0].Args, " ") != "run --all" {
		t.Errorf("runs %+v %v", runs, err)
	}
	execs, err := st.TaskExecutions(ctx, ExecQuery{})
	if err != nil || len(execs) != 16 {
		t.Errorf("%d executions %v", len(execs), err)
	}
	if e, ok, err := st.Execution(ctx, "01jx0000000000000000000003", "c#build"); err != nil || !ok || !e.TimedOut || e.PeakRSSBytes != 3<<20 {
		t.Errorf("execution %+v %v %v", e, ok, err)
	}
	if entries, err := st.Entries(ctx, EntryQuery{}); err != nil || len(entries) != 2 || entries[1].Outputs[0].Path != "dist/c.js" {
		t.Errorf("entries %+v %v", entries, err)
	}
	if m, ok, err := st.Manifest(ctx, "k1"); err != nil || !ok || !strings.Contains(string(m), "a#test") {
		t.Errorf("manifest %s %v %v", m, ok, err)
	}
	if fs, err := st.FileStats(ctx); err != nil || fs.All()["a/src/a.ts"].Ino != 42 {
		t.Errorf("file stats %+v %v", fs, err)
	}
	if got, err := st.FlakyTasks(ctx); err != nil || strings.Join(got, " ") != flaky {
		t.Errorf("flaky = %v (%v), want %s", got, err, flaky)
	}
}

// An index of a newer version, or one whose stamps disagree, is refused by readers and by a writer
// that does not reset, and reset by one that does (vx run).
func TestNewerVersionRefusedThenReset(t *testing.T) {
	for name, stamp := range map[string]string{
		"newer":    fmt.Sprintf(`PRAGMA user_version = %[1]d; UPDATE meta SET value = '%[1]d' WHERE key = 'schema'`, SchemaVersion+1),
		"disagree": `PRAGMA user_version = 2`,
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			recordHistory(t, dir)
			db, err := sql.Open("sqlite", IndexPath(dir))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(stamp); err != nil {
				t.Fatal(err)
			}
			db.Close()
			wantFound := map[string]string{"newer": strconv.Itoa(SchemaVersion + 1), "disagree": strconv.Itoa(SchemaVersion)}[name]
			_, err = OpenReadOnly(ctx, dir)
			var ve *VersionError
			if !errors.As(err, &ve) || ve.Found != wantFound || !strings.HasSuffix(err.Error(), "the next `vx run` resets it") {
				t.Fatalf("reader: %v", err)
			}
			if _, err := Open(ctx, dir, Options{}); !errors.As(err, &ve) {
				t.Fatalf("a writer that does not reset: %v", err)
			}
			st, err := Open(ctx, dir, Options{ResetOtherVersion: true})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if st.Reset != "schema version "+wantFound {
				t.Errorf("reset %q", st.Reset)
			}
			if v, row := stamps(t, st.db); v != SchemaVersion || row != strconv.Itoa(SchemaVersion) {
				t.Errorf("stamps after the reset %d %q", v, row)
			}
			if runs, err := st.Runs(ctx, RunQuery{}); err != nil || len(runs) != 0 {
				t.Errorf("runs after the reset %v %v", runs, err)
			}
		})
	}
}
