package hasher

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/graph"
)

// TestRestoredListsWhatGitShows: after a restore, the project's listing is what listing it again
// would give (the restored files git shows added; those it ignores, or a folder excluded above
// them, left out; a negated pattern's file shown), and a restore of ignored files only costs no
// git listing: the checker kept running answers, one process for the hasher. A listing that was
// not current, or a file outside the project, is listed again.
func TestRestoredListsWhatGitShows(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", "dist/\n**/gen/*\n!**/gen/keep.txt\n**/lib/**\n!**/lib/shown.js\ncache/\n!cache/keep.txt\n.vx/\n")
	write(t, root, "packages/a/src/x.ts", "x")
	gitRepo(t, root)
	p := &graph.Project{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")}
	task := &graph.Task{ID: "a#test"}
	build := &graph.Task{ID: "a#build", Outputs: []string{"dist/**", "gen/**", "lib/**", "cache/**", "report.txt", "other.txt"}}
	count := &counters.Counters{}
	ctx := counters.With(context.Background(), count)
	h := New(Options{Root: root, CacheDir: filepath.Join(root, ".vx")})
	defer h.Close()
	inputs := func() []string { return listed(ctx, t, h, p, task) }
	fresh := func() []string { return listedAfresh(t, root, p, task) }
	if got := inputs(); !reflect.DeepEqual(got, []string{"src/x.ts"}) {
		t.Fatalf("inputs %v", got)
	}
	spawned := count.Counts().ProcessesSpawned

	// Ignored outputs only: the listing stays, with one checker started for the hasher.
	write(t, root, "packages/a/dist/out.js", "o")
	write(t, root, "packages/a/dist/deep/more.js", "m")
	h.Restored(ctx, p, build, []string{"dist/out.js", "dist/deep/more.js"})
	if got, want := inputs(), fresh(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after an ignored restore: %v, listing again gives %v", got, want)
	}
	if n := count.Counts().ProcessesSpawned - spawned; n != 1 {
		t.Fatalf("an ignored restore cost %d processes, want the checker's one", n)
	}

	// Shown and ignored outputs: the shown ones join the listing, no git listing taken.
	write(t, root, "packages/a/gen/keep.txt", "k")
	write(t, root, "packages/a/gen/drop.txt", "d")
	write(t, root, "packages/a/report.txt", "r")
	h.Restored(ctx, p, build, []string{"gen/keep.txt", "gen/drop.txt", "report.txt", "dist/out.js"})
	got, want := inputs(), fresh()
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, []string{"gen/keep.txt", "report.txt", "src/x.ts"}) {
		t.Fatalf("after a shown restore: %v, listing again gives %v", got, want)
	}
	if n := count.Counts().ProcessesSpawned - spawned; n != 1 {
		t.Fatalf("two restores cost %d processes, want the checker's one", n)
	}

	// A folder git shows whose files it ignores (lib/**), and a folder it ignores whose file a
	// later pattern would re-include (cache/ and !cache/keep.txt, which git never re-includes):
	// asked folder first, then file by file where the folder is shown, as a fresh listing says.
	write(t, root, "packages/a/lib/hidden.js", "h")
	write(t, root, "packages/a/lib/deep/hidden.js", "h")
	write(t, root, "packages/a/lib/shown.js", "s")
	write(t, root, "packages/a/cache/keep.txt", "k")
	h.Restored(ctx, p, build, []string{"lib/hidden.js", "lib/deep/hidden.js", "lib/shown.js", "cache/keep.txt", "gen/keep.txt", "report.txt", "dist/out.js"})
	got, want = inputs(), fresh()
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, []string{"gen/keep.txt", "lib/shown.js", "report.txt", "src/x.ts"}) {
		t.Fatalf("after restoring folders shown and ignored: %v, listing again gives %v", got, want)
	}
	for _, dir := range []string{"lib", "cache"} { // as the next restore, whose entry lacks them, leaves it
		if err := os.RemoveAll(filepath.Join(root, "packages/a", dir)); err != nil {
			t.Fatal(err)
		}
	}

	// A removed output is dropped when statted, as a fresh listing drops it.
	if err := os.Remove(filepath.Join(root, "packages/a/report.txt")); err != nil {
		t.Fatal(err)
	}
	h.Restored(ctx, p, build, []string{"gen/keep.txt"})
	if got, want := inputs(), fresh(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after a restore that removed a file: %v, listing again gives %v", got, want)
	}

	// A path from the root is not vouched for: the project is listed again (by a walk of its
	// folder, relistWalk), and the new file is in the listing.
	write(t, root, "packages/a/other.txt", "o")
	h.Restored(ctx, p, build, []string{"//packages/a/other.txt"})
	if got, want := inputs(), fresh(); !reflect.DeepEqual(got, want) || !slices.Contains(got, "other.txt") {
		t.Fatalf("after a root-relative restore: %v, listing again gives %v", got, want)
	}
}

// TestRestoredAsksGitOnlyWhenListed: a restore's mend of the listing waits for the listing to be
// asked for. Restores no key needs afterwards (a run whose keys were all made first) start no
// git process; two restores before a listing, or a restore and then a write, still answer what
// listing the project again gives.
func TestRestoredAsksGitOnlyWhenListed(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".gitignore", "dist/\n.vx/\n")
	write(t, root, "packages/a/src/x.ts", "x")
	write(t, root, "packages/b/src/y.ts", "y")
	gitRepo(t, root)
	a := &graph.Project{Name: "a", Dir: "packages/a", AbsDir: filepath.Join(root, "packages/a")}
	b := &graph.Project{Name: "b", Dir: "packages/b", AbsDir: filepath.Join(root, "packages/b")}
	test := &graph.Task{ID: "a#test"}
	build := &graph.Task{ID: "a#build", Outputs: []string{"dist/**", "report.txt"}}
	count := &counters.Counters{}
	ctx := counters.With(context.Background(), count)
	h := New(Options{Root: root, CacheDir: filepath.Join(root, ".vx")})
	defer h.Close()
	inputs := func(p *graph.Project) []string { return listed(ctx, t, h, p, test) }
	fresh := func(p *graph.Project) []string { return listedAfresh(t, root, p, test) }
	inputs(a)
	inputs(b)
	spawned := count.Counts().ProcessesSpawned

	write(t, root, "packages/a/dist/out.js", "o")
	write(t, root, "packages/b/dist/out.js", "o")
	h.Restored(ctx, a, build, []string{"dist/out.js"})
	h.Restored(ctx, b, build, []string{"dist/out.js"})
	if n := count.Counts().ProcessesSpawned - spawned; n != 0 {
		t.Fatalf("restores whose listings no one asked for cost %d processes", n)
	}

	// A second restore of a before its listing is asked for: the first mend is made then.
	write(t, root, "packages/a/report.txt", "r")
	h.Restored(ctx, a, build, []string{"dist/out.js", "report.txt"})
	if got, want := inputs(a), fresh(a); !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, []string{"report.txt", "src/x.ts"}) {
		t.Fatalf("after two restores: %v, listing again gives %v", got, want)
	}
	if n := count.Counts().ProcessesSpawned - spawned; n != 1 {
		t.Fatalf("mending cost %d processes, want the checker's one", n)
	}

	// A write after the restore: the mend no longer holds, and the project is listed again.
	write(t, root, "packages/b/report.txt", "r")
	h.Wrote(b, build)
	if got, want := inputs(b), fresh(b); !reflect.DeepEqual(got, want) || !slices.Contains(got, "report.txt") {
		t.Fatalf("after a restore and a write: %v, listing again gives %v", got, want)
	}
}

// listed answers the inputs of task in project p as h lists them.
func listed(ctx context.Context, t *testing.T, h *Hasher, p *graph.Project, task *graph.Task) []string {
	t.Helper()
	files, err := h.Inputs(ctx, p, task)
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// listedAfresh answers the inputs of task in project p as a new hasher of root lists them: what
// listing the project again gives.
func listedAfresh(t *testing.T, root string, p *graph.Project, task *graph.Task) []string {
	t.Helper()
	other := New(Options{Root: root, CacheDir: filepath.Join(root, ".vx")})
	defer other.Close()
	return listed(context.Background(), t, other, p, task)
}
