package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// The reader keeps one open across questions and opens again when the index is not what it
// opened: created since, replaced, or stamped with another version in place.
func TestReaderOpensAgainWhenTheIndexChanges(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), ".vx")
	r := NewReader(dir)
	defer r.Close()

	st, release, err := r.Acquire(ctx)
	if err != nil || !st.Empty() {
		t.Fatalf("absent index: %v, empty %v", err, st != nil && st.Empty())
	}
	release()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the reader created %s", dir)
	}

	// Created since: the next question reads it.
	w, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := NewRunID(time.Now())
	if err := w.BeginRun(ctx, Run{ID: id, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := w.FinishRun(ctx, id, RunOK, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	w.Close()
	first := runsSeen(t, r)
	if len(first) != 1 || first[0] != id {
		t.Fatalf("after the index was created, runs %v", first)
	}
	// The same index: the same open.
	a, releaseA, _ := r.Acquire(ctx)
	b, releaseB, _ := r.Acquire(ctx)
	if a != b {
		t.Fatal("two questions of an unchanged index opened it twice")
	}

	// Replaced (set aside and made again): the next question opens the new one, and the old open
	// stays usable by those who hold it until they release it.
	if err := os.Rename(IndexPath(dir), IndexPath(dir)+".aside"); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		os.Remove(IndexPath(dir) + suffix)
	}
	w, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := runsSeen(t, r); len(got) != 0 {
		t.Fatalf("after the index was replaced, runs %v (of the old one)", got)
	}
	if runs, err := a.Runs(ctx, RunQuery{}); err != nil || len(runs) != 1 {
		t.Fatalf("the old open, still held: %v %v", runs, err)
	}
	releaseA()
	releaseB()
	releaseB() // a release is idempotent

	// Another version stamped in place: refused by name, as OpenReadOnly refuses it.
	w, err = Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.db.Exec(`UPDATE meta SET value = '99' WHERE key = 'schema'; PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	var ve *VersionError
	if _, _, err := r.Acquire(ctx); !errors.As(err, &ve) {
		t.Fatalf("an index of version 99: %v", err)
	}
}

// Questions at once share the open; Close waits for none but closes it after the last release,
// and refuses from then on.
func TestReaderConcurrentAndClose(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), ".vx")
	w, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	r := NewReader(dir)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				st, release, err := r.Acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := st.Runs(ctx, RunQuery{}); err != nil {
					t.Error(err)
				}
				release()
			}
		})
	}
	wg.Wait()
	held, release, err := r.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := held.Runs(ctx, RunQuery{}); err != nil {
		t.Fatalf("a question that held the open when the reader closed: %v", err)
	}
	release()
	if _, _, err := r.Acquire(ctx); !errors.Is(err, ErrReaderClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func runsSeen(t *testing.T, r *Reader) []string {
	t.Helper()
	st, release, err := r.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	runs, err := st.Runs(context.Background(), RunQuery{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, run := range runs {
		ids = append(ids, run.ID)
	}
	return ids
}
