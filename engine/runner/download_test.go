package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/executor/remoteexec/buildbarntest"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// chainFixture is a chain a#build → b#build (b reads a's outputs) → c#use (exec.remote: false,
// reads b's outputs), sent to the engine at addr (also its REAPI remote cache) when addr is set;
// salt enters a's source, so that two fixtures of one salt share their keys.
func chainFixture(t *testing.T, addr, salt string) *fixture {
	f := newFixture(t)
	a, b, c := f.project("a"), f.project("b", "a"), f.project("c", "b")
	f.task(a, "build", `mkdir -p dist/sub && cat src/a.txt > dist/a.txt && printf '#!/bin/sh\necho run\n' > dist/sub/run.sh && chmod +x dist/sub/run.sh`, func(t *graph.Task) {
		t.Inputs, t.Outputs = []string{"src/**"}, []string{"dist/**"}
	})
	f.task(b, "build", `mkdir -p dist && cat ../a/dist/a.txt main.txt > dist/b.txt && ../a/dist/sub/run.sh >> dist/b.txt`, func(t *graph.Task) {
		t.Inputs, t.Outputs, t.DependsOn = []string{"main.txt"}, []string{"dist/**"}, []string{"a#build"}
	})
	no := false
	f.task(c, "use", `mkdir -p out && cat ../b/dist/b.txt > out/c.txt`, func(t *graph.Task) {
		t.Inputs, t.Outputs, t.DependsOn, t.RemoteExec = []string{"main.txt"}, []string{"out/**"}, []string{"b#build"}, &no
	})
	f.write("packages/a/src/a.txt", "a source "+salt+"\n")
	f.write("packages/b/main.txt", "b main\n")
	f.write("packages/c/main.txt", "c main\n")
	if addr != "" {
		f.ws.Remote = &graph.RemoteExec{Execute: true, Executor: "grpc://" + addr, Platform: map[string]string{"OSFamily": "linux"}}
		f.ws.RemoteCache = &graph.RemoteCache{URL: "grpc://" + addr, Protocol: "reapi"}
	}
	return f
}

// filesUnder answers the files under the fixture's folder rel, by root-relative path.
func filesUnder(t *testing.T, f *fixture, rel string) map[string]string {
	out := map[string]string{}
	err := filepath.WalkDir(filepath.Join(f.root, rel), func(p string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		r, _ := filepath.Rel(f.root, p)
		out[filepath.ToSlash(r)] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// rowsOf answers each row's status, executor and whether its outputs stayed remote.
func rowsOf(s *summary.Summary) string {
	var parts []string
	for _, t := range s.Tasks {
		p := t.TaskID + "=" + string(t.Status)
		if t.Executor != "" {
			p += "@" + t.Executor
		}
		if t.CacheSource != nil {
			p += "/" + *t.CacheSource
		}
		if t.OutputsRemote {
			p += "+kept"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// casHolds reports whether the fixture's local blob store holds the blob of content.
func casHolds(t *testing.T, f *fixture, content string) bool {
	st, err := store.OpenReadOnly(context.Background(), f.ws.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sum := sha256.Sum256([]byte(content))
	return st.CAS().Has(hex.EncodeToString(sum[:]))
}

// TestBuildbarnDownloadMinimal: with --download=minimal a chain built on a real Buildbarn leaves
// no output in the workspace while b's input root held a's outputs (by digest); a later run
// that wants them brings b's outputs back byte-identical to a local build. A second checkout
// with an empty .vx hits every task with nothing downloaded, and a local task depending on b
// brings back the outputs of b and of a, which b depends on: what a local run leaves on disk.
func TestBuildbarnDownloadMinimal(t *testing.T) {
	bb := buildbarntest.Start(t)
	waitEngine(t, bb)
	local := chainFixture(t, "", "one")
	if s, out := local.run([]string{"a#build", "b#build", "c#use"}, nil); !s.OK {
		t.Fatalf("local build: %s\n%s", statuses(s), out)
	}
	want := filesUnder(t, local, "packages")
	minimal := func(o *Options) { o.Download = graph.DownloadMinimal }
	builds := []string{"a#build", "b#build"}

	first := chainFixture(t, bb.Addr, "one")
	s, out := first.run(builds, minimal)
	if rowsOf(s) != "a#build=miss@remote+kept b#build=miss@remote+kept" {
		t.Fatalf("minimal remote build: %s\n%s\n%s", rowsOf(s), out, bb.Logs())
	}
	first.asLast(s)
	if got := filesUnder(t, first, "packages/a/dist"); len(got) != 0 {
		t.Fatalf("a's outputs landed: %v", got)
	}
	if got := filesUnder(t, first, "packages/b/dist"); len(got) != 0 {
		t.Fatalf("b's outputs landed: %v", got)
	}
	// b's outputs come back when a run wants them: a hit on its entry, fetched by digest.
	s, out = first.run([]string{"b#build"}, func(o *Options) { o.TaskIDs = builds })
	if rowsOf(s) != "a#build=hit/local b#build=hit/local" {
		t.Fatalf("all after minimal: %s\n%s", rowsOf(s), out)
	}
	if got := filesUnder(t, first, "packages/b/dist"); got["packages/b/dist/b.txt"] != want["packages/b/dist/b.txt"] || len(got) != 1 {
		t.Fatalf("b's outputs after the fetch: %v, want %q", got, want["packages/b/dist/b.txt"])
	}

	second := chainFixture(t, bb.Addr, "one")
	s, out = second.run(builds, minimal)
	if rowsOf(s) != "a#build=hit/remote+kept b#build=hit/remote+kept" {
		t.Fatalf("second checkout: %s\n%s", rowsOf(s), out)
	}
	if casHolds(t, second, want["packages/a/dist/a.txt"]) || casHolds(t, second, want["packages/b/dist/b.txt"]) {
		t.Fatal("the second checkout downloaded outputs no task needed")
	}
	s, out = second.run([]string{"c#use"}, func(o *Options) {
		o.Download, o.TaskIDs = graph.DownloadMinimal, []string{"a#build", "b#build", "c#use"}
	})
	if rowsOf(s) != "a#build=hit/local+kept b#build=hit/local+kept c#use=miss@local" {
		t.Fatalf("local task after minimal: %s\n%s", rowsOf(s), out)
	}
	// c#use depends on b, which depends on a: both outputs come back, as a local run leaves them.
	got := filesUnder(t, second, "packages")
	for _, rel := range []string{"packages/a/dist/a.txt", "packages/b/dist/b.txt", "packages/c/out/c.txt"} {
		if got[rel] != want[rel] {
			t.Fatalf("%s: %q, local build %q", rel, got[rel], want[rel])
		}
	}
}

// TestBuildbarnDownloadRequested: with --download=outputs-of-requested the outputs of the task
// named land, those of its dependency stay remote, for a remote execution and a remote hit alike.
func TestBuildbarnDownloadRequested(t *testing.T) {
	bb := buildbarntest.Start(t)
	waitEngine(t, bb)
	local := chainFixture(t, "", "two")
	if s, out := local.run([]string{"a#build", "b#build"}, nil); !s.OK {
		t.Fatalf("local build: %s\n%s", statuses(s), out)
	}
	want := filesUnder(t, local, "packages")
	requested := func(o *Options) {
		o.Download, o.TaskIDs, o.Requested = graph.DownloadRequested, []string{"a#build", "b#build"}, []string{"b#build"}
	}
	for i, wantRows := range []string{"a#build=miss@remote+kept b#build=miss@remote", "a#build=hit/remote+kept b#build=hit/remote"} {
		f := chainFixture(t, bb.Addr, "two")
		s, out := f.run(nil, requested)
		if rowsOf(s) != wantRows {
			t.Fatalf("checkout %d: %s, want %s\n%s\n%s", i, rowsOf(s), wantRows, out, bb.Logs())
		}
		got := filesUnder(t, f, "packages")
		if got["packages/b/dist/b.txt"] != want["packages/b/dist/b.txt"] {
			t.Fatalf("checkout %d: b's outputs %q, local build %q", i, got["packages/b/dist/b.txt"], want["packages/b/dist/b.txt"])
		}
		if _, ok := got["packages/a/dist/a.txt"]; ok {
			t.Fatalf("checkout %d: a's outputs landed: %v", i, got)
		}
	}
}

// TestRemoteOnlyEntryRunsWithoutFetcher: an entry whose outputs stayed remote, in a run with no
// REAPI server to fetch them from, is a miss (the task runs again and its outputs land), never a
// hit that restores nothing; the next run hits the whole entry it stored.
func TestRemoteOnlyEntryRunsWithoutFetcher(t *testing.T) {
	f := chainFixture(t, "", "three")
	ids := []string{"a#build", "b#build"}
	if s, out := f.run(ids, nil); !s.OK {
		t.Fatalf("first run: %s\n%s", statuses(s), out)
	}
	st, err := store.Open(context.Background(), f.ws.CacheDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.Entries(context.Background(), store.EntryQuery{TaskID: "b#build"})
	if err != nil || len(entries) != 1 {
		t.Fatalf("b's entries %v %v", entries, err)
	}
	kept := entries[0]
	kept.Size -= st.CAS().Size(kept.OutputsBlob)
	kept.OutputsBlob = ""
	if !kept.OutputsRemote() {
		t.Fatal("the entry is not remote-only")
	}
	if err := st.PutEntry(context.Background(), kept); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.RemoveAll(filepath.Join(f.root, "packages/b/dist")); err != nil {
		t.Fatal(err)
	}
	s, out := f.run(ids, nil)
	if statuses(s) != "a#build=hit b#build=miss" || !strings.Contains(out, "stayed remote") {
		t.Fatalf("a remote-only entry without a fetcher: %s\n%s", statuses(s), out)
	}
	if got := filesUnder(t, f, "packages/b/dist"); !strings.HasPrefix(got["packages/b/dist/b.txt"], "a source three\n") {
		t.Fatalf("b's outputs %v", got)
	}
	if s, _ := f.run(ids, nil); statuses(s) != "a#build=hit b#build=hit" {
		t.Fatalf("after the miss: %s", statuses(s))
	}
}

// TestBuildbarnDownloadMinimalAfterAll: a checkout that built on a real Buildbarn bringing every
// output back (the default) leaves entries another checkout hits with --download=minimal with
// nothing downloaded, and from which a local task there brings back what it depends on.
func TestBuildbarnDownloadMinimalAfterAll(t *testing.T) {
	bb := buildbarntest.Start(t)
	waitEngine(t, bb)
	builds := []string{"a#build", "b#build"}
	first := chainFixture(t, bb.Addr, "four")
	s, out := first.run(builds, nil)
	if rowsOf(s) != "a#build=miss@remote b#build=miss@remote" {
		t.Fatalf("remote build: %s\n%s\n%s", rowsOf(s), out, bb.Logs())
	}
	want := filesUnder(t, first, "packages")
	if len(want) != 6 || want["packages/b/dist/b.txt"] == "" {
		t.Fatalf("the sources and outputs after the remote build: %v", want)
	}
	second := chainFixture(t, bb.Addr, "four")
	s, out = second.run(builds, func(o *Options) { o.Download = graph.DownloadMinimal })
	if rowsOf(s) != "a#build=hit/remote+kept b#build=hit/remote+kept" {
		t.Fatalf("minimal after all: %s\n%s", rowsOf(s), out)
	}
	if got := filesUnder(t, second, "packages"); len(got) != 3 || casHolds(t, second, want["packages/b/dist/b.txt"]) {
		t.Fatalf("the minimal run brought outputs back: %v", got) // the three sources alone
	}
	s, out = second.run([]string{"c#use"}, func(o *Options) {
		o.Download, o.TaskIDs = graph.DownloadMinimal, []string{"a#build", "b#build", "c#use"}
	})
	if rowsOf(s) != "a#build=hit/local+kept b#build=hit/local+kept c#use=miss@local" {
		t.Fatalf("local task after minimal: %s\n%s", rowsOf(s), out)
	}
	got := filesUnder(t, second, "packages")
	if got["packages/b/dist/b.txt"] != want["packages/b/dist/b.txt"] || got["packages/c/out/c.txt"] != want["packages/b/dist/b.txt"] {
		t.Fatalf("b's outputs %q, c's %q, want %q", got["packages/b/dist/b.txt"], got["packages/c/out/c.txt"], want["packages/b/dist/b.txt"])
	}
	// b depends on a: a's outputs come back too, as a local run leaves them.
	if got["packages/a/dist/a.txt"] != want["packages/a/dist/a.txt"] {
		t.Fatalf("a's outputs %q, want %q", got["packages/a/dist/a.txt"], want["packages/a/dist/a.txt"])
	}
}
