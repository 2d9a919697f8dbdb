package history

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
)

// keyedRuns records one run a key of p#build, a second apart from start, each passing;
// notCached, when set, is each run's reason for storing no entry. It answers the run ids.
func keyedRuns(t *testing.T, st *store.Store, start time.Time, notCached string, keys ...string) []string {
	t.Helper()
	ctx := context.Background()
	now := start
	var ids []string
	for i, k := range keys {
		id := store.NewRunID(now.Add(time.Duration(i) * time.Second))
		if err := st.BeginRun(ctx, store.Run{ID: id, Started: now}); err != nil {
			t.Fatal(err)
		}
		e := exec(id, "build", store.StatusMiss, k, 10*time.Millisecond)
		e.NotCached = notCached
		if err := st.Record(ctx, store.Batch{Executions: []store.Execution{e}}); err != nil {
			t.Fatal(err)
		}
		if err := st.FinishRun(ctx, id, store.RunOK, 0, now); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// putEntries stores an entry of p#build for each key, the last made last.
func putEntries(t *testing.T, st *store.Store, keys ...string) {
	t.Helper()
	now := time.Now()
	for i, k := range keys {
		created := now.Add(time.Duration(i) * time.Second)
		if err := st.PutEntry(context.Background(), store.Entry{Hash: k, TaskID: "p#build", Project: "p", Command: "build",
			Created: created, LastUsed: created}); err != nil {
			t.Fatal(err)
		}
	}
}

// explainCacheKey's answer is the entry of the key the task's latest run computed, when there is
// one, though another entry is newer; when that key has none, it shows the newest entry and says
// it is an older key's, with the reason the latest run stored none.
func TestLatestEntryIsTheCurrentKeys(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	putEntries(t, st, "ka", "kb")
	start := time.Now()
	keyedRuns(t, st, start, "", "ka", "kb", "ka")
	info, err := LatestEntry(ctx, st, "p#build")
	if err != nil || !info.Found || info.Hash != "ka" || info.Stale || info.CurrentHash != "ka" {
		t.Fatalf("the current key's entry: %+v %v", info, err)
	}

	why := "output dist/cfg is a symlink to ../../../vx.workspace.ts, outside its project"
	ids := keyedRuns(t, st, start.Add(time.Minute), why, "kc")
	info, err = LatestEntry(ctx, st, "p#build")
	if err != nil || !info.Found || info.Hash != "kb" || !info.Stale || info.CurrentHash != "kc" || info.CurrentRunID != ids[0] ||
		info.NotCachedReason != why {
		t.Fatalf("an older key's entry: %+v %v", info, err)
	}
	if !strings.Contains(info.Note, "older key") || !strings.Contains(info.Note, "kc") || !strings.Contains(info.Note, why) {
		t.Fatalf("note: %q", info.Note)
	}
}

// vx why says, of a run that ran again under the same key, that the run before stored no entry
// and why; and of a forced run, --force.
func TestWhyNamesWhyTheKeyRanAgain(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	why := "output dist/git is a symlink to ../../../.git/config, inside .git"
	keyedRuns(t, st, time.Now(), why, "k", "k")
	w, err := Explain(ctx, st, "p#build", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(w.Reason, ": ran anyway (not cached: "+why+")") || w.NotCachedReason != why {
		t.Fatalf("why: %q, notCachedReason %q", w.Reason, w.NotCachedReason)
	}
}
