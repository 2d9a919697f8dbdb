package runner

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/taskmutex"
)

// signalWriter keeps what is written and closes seen once it holds every one of want.
type signalWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want []string
	seen chan struct{}
}

func newSignalWriter(want ...string) *signalWriter {
	return &signalWriter{want: want, seen: make(chan struct{})}
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.want == nil {
		return len(p), nil
	}
	for _, s := range w.want {
		if !strings.Contains(w.buf.String(), s) {
			return len(p), nil
		}
	}
	w.want = nil
	close(w.seen)
	return len(p), nil
}

func (w *signalWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// holdTask takes a task's lock as another vx process would (a lock file opened apart from the
// run's): the run under test finds it held by this process's pid.
func holdTask(t *testing.T, f *fixture, id string) *taskmutex.Lock {
	t.Helper()
	lk, err := taskmutex.New(f.ws.CacheDir, f.ws.Root).TryLock(id)
	if err != nil {
		t.Fatalf("hold %s: %v", id, err)
	}
	t.Cleanup(func() { lk.Unlock() })
	return lk
}

// runAsync starts a run of ids and answers its summary on the channel once it ends.
func runAsync(t *testing.T, f *fixture, ids []string, out *signalWriter, mod func(*Options)) <-chan *summary.Summary {
	f.ws.Index()
	done := make(chan *summary.Summary, 1)
	opts := Options{Workspace: f.ws, TaskIDs: ids, Requested: ids, Output: out, Concurrency: 2,
		Getenv: func(string) string { return "" }}
	if mod != nil {
		mod(&opts)
	}
	go func() {
		sum, err := Run(context.Background(), opts)
		if err != nil {
			t.Errorf("run: %v", err)
		}
		done <- sum
	}()
	return done
}

// A task another process runs is waited for (the status line and the output say so), then looked
// up again: it hits what that process stored, and the summary says how long it waited. A task of
// cache: false waits too, then runs.
func TestWaitsForTaskRunningElsewhere(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "build", "mkdir -p dist && echo built > dist/out.txt", func(t *graph.Task) { t.Outputs = []string{"dist/**"} })
	f.task(p, "deploy", "echo deployed", func(t *graph.Task) { t.Cache = false })
	ids := []string{"p#build", "p#deploy"}
	f.run(ids, nil) // the run "elsewhere": build is stored
	lk := holdTask(t, f, "p#build")
	deploy := holdTask(t, f, "p#deploy")

	// The holder is this process: the kernel names no pid to it (engine/taskmutex's tests see one).
	out := newSignalWriter("p#deploy | vx: waiting for another process, which runs this task",
		"p#build | vx: waiting for another process, which runs this task")
	done := runAsync(t, f, ids, out, func(o *Options) { o.Terminal = true })
	select {
	case <-out.seen:
	case sum := <-done:
		t.Fatalf("the run ended without waiting: %s\n%s", statuses(sum), out)
	case <-time.After(2 * time.Minute):
		t.Fatalf("no task said it waited:\n%s", out)
	}
	if err := deploy.Unlock(); err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(); err != nil {
		t.Fatal(err)
	}
	sum := <-done
	if got := statuses(sum); got != "p#build=hit p#deploy=miss" || !sum.OK {
		t.Fatalf("statuses %s, want the build hit and deploy run after waiting\n%s", got, out)
	}
	for _, task := range sum.Tasks {
		if task.WaitedMs <= 0 {
			t.Errorf("%s waitedMs %d, want how long it waited", task.TaskID, task.WaitedMs)
		}
	}
	// vx last answers the same rows.
	st, err := store.OpenReadOnly(context.Background(), f.ws.CacheDir)
	if err != nil {
		t.Fatal(err)
	}
	last, err := history.Last(context.Background(), st, sum.RunID)
	st.Close()
	if err != nil || last.Tasks[0].WaitedMs != sum.Tasks[0].WaitedMs || last.Tasks[1].WaitedMs != sum.Tasks[1].WaitedMs {
		t.Errorf("vx last: %+v %v, want the run's own waitedMs", last, err)
	}
	if !strings.Contains(out.String(), "waiting p#") {
		t.Errorf("the status line never named a waiting task:\n%q", out)
	}
	// Nothing waits on a run of its own: waitedMs is 0.
	sum, _ = f.run(ids, nil)
	if sum.Tasks[0].WaitedMs != 0 || sum.Tasks[1].WaitedMs != 0 {
		t.Errorf("a run that waited for nothing: %+v", sum.Tasks)
	}
}

// A task whose timeout ends while another process holds it is given up with the reason; a
// persistent task another process runs is skipped at once, naming that process, and the tasks it
// serves run (against that process's server).
func TestLockTimeoutAndServerElsewhere(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "build", "echo built", func(t *graph.Task) { t.Timeout = 100 * time.Millisecond })
	f.task(p, "serve", "sleep 30", func(t *graph.Task) { t.Persistent, t.Cache = true, false })
	f.task(p, "e2e", "echo e2e", func(t *graph.Task) { t.DependsOn = []string{"p#serve"} })
	holdTask(t, f, "p#build")
	holdTask(t, f, "p#serve")
	sum, out := f.run([]string{"p#build", "p#serve", "p#e2e"}, nil)
	if got := statuses(sum); got != "p#build=failed p#serve=skipped p#e2e=miss" {
		t.Fatalf("statuses %s\n%s", got, out)
	}
	gaveUp := "p#build | vx: p#build: gave up after waiting 100ms (its timeout) for another process, which runs it"
	elsewhere := "p#serve | vx: p#serve is running in another process: not started again"
	if !strings.Contains(out, gaveUp) || !strings.Contains(out, elsewhere) {
		t.Errorf("output lacks %q or %q:\n%s", gaveUp, elsewhere, out)
	}
	if sum.Tasks[1].WaitedMs != 0 {
		t.Errorf("the server waited %d ms, want 0: it is skipped at once", sum.Tasks[1].WaitedMs)
	}
}

// Different tasks, and the same task of another workspace in the same state folder, never wait
// for each other.
func TestLockIsPerTaskAndWorkspace(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "build", "echo built", nil)
	f.task(p, "other", "echo other", nil)
	other, err := taskmutex.New(f.ws.CacheDir, f.ws.Root+"-elsewhere").TryLock("p#build")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Unlock()
	holdTask(t, f, "p#other")
	sum, out := f.run([]string{"p#build"}, nil)
	if got := statuses(sum); got != "p#build=miss" || sum.Tasks[0].WaitedMs != 0 || strings.Contains(out, "waiting") {
		t.Fatalf("statuses %s waited %d\n%s", got, sum.Tasks[0].WaitedMs, out)
	}
}
