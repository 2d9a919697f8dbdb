package runner

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/proc"
)

// generate makes a git workspace of n projects, each with three source files and a build task
// (default inputs: every file git sees) that writes dist/out.txt; project i depends on i-1 and i/2.
func generate(b *testing.B, n int) *graph.Workspace {
	root := b.TempDir()
	ws := &graph.Workspace{Root: root, CacheDir: filepath.Join(root, ".vx")}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte(".vx/\ndist/\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%03d", i)
		dir := filepath.Join(root, "packages", name)
		for j := 0; j < 3; j++ {
			write(b, filepath.Join(dir, "src", fmt.Sprintf("f%d.ts", j)), fmt.Sprintf("export const x%d = %d\n", j, i))
		}
		p := &graph.Project{Name: name, Dir: "packages/" + name, AbsDir: dir, Tasks: map[string]*graph.Task{}}
		t := &graph.Task{ID: name + "#build", Project: name, Name: "build", Cache: true,
			Command: "mkdir -p dist && cat src/f0.ts > dist/out.txt", Outputs: []string{"dist/**"}, DependsOn: []string{}}
		if i > 0 {
			t.DependsOn = append(t.DependsOn, fmt.Sprintf("p%03d#build", i-1))
			if i/2 != i-1 {
				t.DependsOn = append(t.DependsOn, fmt.Sprintf("p%03d#build", i/2))
			}
		}
		p.Tasks["build"] = t
		ws.Projects = append(ws.Projects, p)
	}
	ws.Index()
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=a", "-c", "user.email=b", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return ws
}

func write(b *testing.B, path, content string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
}

func ageTree(root string) {
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

// BenchmarkFullHit500 is a fully cached run of 500 tasks (one per project): list inputs with one
// git call, stat every input through the stat cache, look up 500 keys, check outputs on disk,
// replay logs, record the run.
func BenchmarkFullHit500(b *testing.B) {
	ws := generate(b, 500)
	ids := make([]string, 0, 500)
	ids = append(ids, ws.TaskIDs()...)
	opts := Options{Workspace: ws, TaskIDs: ids, Requested: ids, Output: io.Discard}
	ctx := context.Background()
	for i := 0; i < 2; i++ { // cold, then a run that refreshes the stat cache after ageing
		s, err := Run(ctx, opts)
		if err != nil || !s.OK {
			b.Fatalf("warm-up run: %v %+v", err, s.Totals)
		}
		ageTree(filepath.Join(ws.Root, "packages"))
	}
	if s, _ := Run(ctx, opts); s.Totals.Hits != 500 {
		b.Fatalf("not a full hit: %+v", s.Totals)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Run(ctx, opts)
		if err != nil || s.Totals.Hits != 500 {
			b.Fatalf("run: %v %+v", err, s.Totals)
		}
	}
}

// BenchmarkNoopTask runs 100 uncached no-op tasks (`:`) on one worker; ns/op/100 is the cost of
// one task, process start included. BenchmarkBareSpawn is that process start alone.
func BenchmarkNoopTask(b *testing.B) {
	ws := &graph.Workspace{Root: b.TempDir()}
	ws.CacheDir = filepath.Join(ws.Root, ".vx")
	p := &graph.Project{Name: "p", Dir: "p", AbsDir: filepath.Join(ws.Root, "p"), Tasks: map[string]*graph.Task{}}
	os.MkdirAll(p.AbsDir, 0o755)
	var ids []string
	for i := 0; i < 100; i++ {
		name := fmt.Sprintf("t%03d", i)
		p.Tasks[name] = &graph.Task{ID: "p#" + name, Project: "p", Name: name, Command: ":", Inputs: []string{}, DependsOn: []string{}}
		ids = append(ids, "p#"+name)
	}
	ws.Projects = []*graph.Project{p}
	ws.Index()
	opts := Options{Workspace: ws, TaskIDs: ids, Requested: ids, Output: io.Discard, Concurrency: 1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Run(context.Background(), opts)
		if err != nil || s.Totals.Misses != 100 {
			b.Fatalf("run: %v %+v", err, s.Totals)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100/1e6, "ms/task")
}

func BenchmarkBareSpawn(b *testing.B) {
	for i := 0; i < b.N; i++ {
		if _, err := proc.Run(context.Background(), proc.Spec{Shell: ":", Env: os.Environ(), Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFullMiss200 is a run of 200 cached tasks that all miss (--force): each is keyed, runs
// a small command, has its inputs checked again after it ran, and has its outputs archived and
// stored. ms/task is the cost of one such task.
func BenchmarkFullMiss200(b *testing.B) {
	ws := generate(b, 200)
	ids := ws.TaskIDs()
	opts := Options{Workspace: ws, TaskIDs: ids, Requested: ids, Output: io.Discard, Force: true}
	if s, err := Run(context.Background(), opts); err != nil || s.Totals.Misses != 200 {
		b.Fatalf("warm-up run: %v %+v", err, s.Totals)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, err := Run(context.Background(), opts)
		if err != nil || s.Totals.Misses != 200 {
			b.Fatalf("run: %v %+v", err, s.Totals)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/200/1e6, "ms/task")
}
