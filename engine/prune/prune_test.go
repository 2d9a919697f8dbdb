package prune

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestPrune(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	put := func(task, content string, lastUsed time.Time) store.Entry {
		out, _ := st.CAS().Put([]byte("outputs of " + content))
		log, _ := st.CAS().Put([]byte("log of " + content))
		e := store.Entry{Hash: "h-" + content, TaskID: task, Project: "p", OutputsBlob: out, LogBlob: log,
			Size: int64(len("outputs of "+content) + len("log of "+content)), Created: lastUsed, LastUsed: lastUsed}
		if err := st.PutEntry(ctx, e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	old := put("p#a", "old", now.Add(-48*time.Hour))
	fresh := put("p#b", "fresh", now)
	orphan, _ := st.CAS().Put([]byte("nobody"))

	res, err := Prune(ctx, st, Options{OlderThan: 24 * time.Hour, DryRun: true, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Evicted) != 1 || res.Evicted[0].TaskID != "p#a" || res.Orphans != 1 || res.OrphanBytes != 6 ||
		res.BytesFreed != old.Size+6 {
		t.Fatalf("dry run: %+v", res)
	}
	if !st.CAS().Has(orphan) || !st.CAS().Has(old.OutputsBlob) {
		t.Fatal("a dry run removed something")
	}
	res, err = Prune(ctx, st, Options{OlderThan: 24 * time.Hour, Now: func() time.Time { return now }})
	if err != nil || len(res.Evicted) != 1 {
		t.Fatalf("prune: %+v %v", res, err)
	}
	if st.CAS().Has(orphan) || st.CAS().Has(old.OutputsBlob) || st.CAS().Has(old.LogBlob) || !st.CAS().Has(fresh.LogBlob) {
		t.Fatal("wrong blobs removed")
	}
	res, err = Prune(ctx, st, Options{MaxSize: ptr(int64(1))})
	if err != nil || len(res.Evicted) != 1 || res.Evicted[0].TaskID != "p#b" {
		t.Fatalf("max size: %+v %v", res, err)
	}
}

func TestParseAge(t *testing.T) {
	for in, want := range map[string]time.Duration{"12h": 12 * time.Hour, "7d": 7 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "90m": 90 * time.Minute} {
		if got, err := ParseAge(in); err != nil || got != want {
			t.Errorf("ParseAge(%q) = %v, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "soon", "-1d"} {
		if _, err := ParseAge(bad); err == nil {
			t.Errorf("ParseAge(%q) accepted", bad)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A maximum size of 0 empties the cache: every entry goes, and every blob with it.
func TestPruneMaxSizeZero(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var blobs []string
	for i, task := range []string{"p#a", "p#b"} {
		out, _ := st.CAS().Put([]byte("outputs of " + task))
		log, _ := st.CAS().Put([]byte("log of " + task))
		blobs = append(blobs, out, log)
		at := time.Now().Add(time.Duration(i) * time.Minute)
		if err := st.PutEntry(ctx, store.Entry{Hash: "h-" + task, TaskID: task, Project: "p", OutputsBlob: out, LogBlob: log,
			Size: 10, Created: at, LastUsed: at}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Prune(ctx, st, Options{MaxSize: ptr(int64(0))})
	if err != nil || len(res.Evicted) != 2 || res.Evicted[0].TaskID != "p#a" || res.BytesFreed != 20 {
		t.Fatalf("max size 0: %+v %v", res, err)
	}
	for _, b := range blobs {
		if st.CAS().Has(b) {
			t.Errorf("blob %s kept", b)
		}
	}
	if entries, err := st.Entries(ctx, store.EntryQuery{}); err != nil || len(entries) != 0 {
		t.Errorf("entries left: %v %v", entries, err)
	}
}

// Run reads the limits before it looks for the workspace, and names the one it cannot read.
func TestRun(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	noRoot := func() (string, error) {
		t.Error("root looked for")
		return "", errors.New("no workspace")
	}
	for _, tc := range []struct {
		req   Request
		field string
	}{
		{Request{OlderThan: "soon"}, FieldOlderThan},
		{Request{MaxSize: "lots"}, FieldMaxSize},
		{Request{OlderThan: "1d", MaxSize: "-1"}, FieldMaxSize},
	} {
		_, err := Run(ctx, noRoot, tc.req)
		var value *ValueError
		var usage *vxerr.UsageError
		if !errors.As(err, &value) || value.Field != tc.field || !errors.As(err, &usage) {
			t.Errorf("Run(%+v) = %v, want a usage error naming %s", tc.req, err, tc.field)
		}
	}

	// No state folder: an empty answer, and nothing created.
	getenv := func(k string) string { return map[string]string{"VX_CACHE_DIR": "state"}[k] }
	res, err := Run(ctx, func() (string, error) { return root, nil }, Request{MaxSize: "0", Getenv: getenv})
	if err != nil || res.DryRun || len(res.Evicted) != 0 {
		t.Fatalf("Run with no state folder: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(root, "state")); !os.IsNotExist(err) {
		t.Fatalf("Run created the state folder: %v", err)
	}

	// The state folder VX_CACHE_DIR names, emptied by MaxSize 0.
	st, err := store.Open(ctx, filepath.Join(root, "state"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, _ := st.CAS().Put([]byte("outputs"))
	log, _ := st.CAS().Put([]byte("log"))
	err = st.PutEntry(ctx, store.Entry{Hash: "h", TaskID: "p#a", Project: "p", OutputsBlob: out, LogBlob: log, Size: 10,
		Created: time.Now(), LastUsed: time.Now()})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, dryRun := range []bool{true, false} {
		res, err = Run(ctx, func() (string, error) { return root, nil }, Request{MaxSize: "0", DryRun: dryRun, Getenv: getenv})
		if err != nil || res.DryRun != dryRun || len(res.Evicted) != 1 {
			t.Fatalf("Run(max size 0, dry run %v): %+v %v", dryRun, res, err)
		}
	}
	res, err = Run(ctx, func() (string, error) { return root, nil }, Request{DryRun: true, Getenv: getenv})
	if err != nil || len(res.Evicted) != 0 {
		t.Fatalf("after the prune: %+v %v", res, err)
	}
}
