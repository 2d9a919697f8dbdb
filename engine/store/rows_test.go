package store

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// A list column that does not decode is a damaged index: the read names the column and the row
// instead of answering an empty list in silence.
func TestDamagedListColumnNamed(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	id := NewRunID(time.UnixMilli(1_800_000_000_000))
	if err := st.BeginRun(ctx, Run{ID: id, Started: time.UnixMilli(1_800_000_000_000), PID: os.Getpid()}); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(ctx, Batch{Executions: []Execution{Execution{RunID: id, TaskID: "app#build", Project: "app", Task: "build", Status: "miss",
		SandboxViolations: []string{"wrote /etc/x"}}}}); err != nil {
		t.Fatal(err)
	}
	got, err := st.Executions(ctx, id)
	if err != nil || len(got) != 1 || len(got[0].SandboxViolations) != 1 {
		t.Fatalf("before the damage: %+v %v", got, err)
	}
	if _, err := st.db.ExecContext(ctx, `UPDATE executions SET sandbox_violations = '["cut'`); err != nil {
		t.Fatal(err)
	}
	_, err = st.Executions(ctx, id)
	if err == nil || !strings.Contains(err.Error(), "sandbox_violations of "+id+" app#build") {
		t.Fatalf("a damaged column read as %v", err)
	}
}

// A cache entry whose JSON listing does not decode is an error (a miss for the cache), never an
// entry that lists nothing and so restores nothing as a hit.
func TestDamagedEntryListingNamed(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	e := Entry{Hash: "k1", TaskID: "app#build", Project: "app", Command: "true", LogBlob: "l",
		Outputs: []OutputFile{{Path: "dist/a.txt", Size: 1, Mode: 0o644, Hash: "h"}}, Created: time.Now(), LastUsed: time.Now()}
	if err := st.PutEntry(ctx, e); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := st.Entry(ctx, "k1"); err != nil || !ok || len(got.Outputs) != 1 {
		t.Fatalf("before the damage: %+v %v %v", got, ok, err)
	}
	// An entry an older vx wrote keeps its listing as JSON.
	if _, err := st.sh.db.ExecContext(ctx, `UPDATE cache_entries SET listing = NULL, outputs = '[{"path":'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Entry(ctx, "k1"); err == nil || !strings.Contains(err.Error(), "outputs of cache entry k1") {
		t.Fatalf("a damaged listing read as %v", err)
	}
}
