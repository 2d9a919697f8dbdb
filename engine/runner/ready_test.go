package runner

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// readyHelperEnv, set to "PORT MARKER", makes the test binary a server for the readiness tests:
// it waits a moment, writes MARKER, then listens on localhost:PORT until it is killed.
const readyHelperEnv = "VX_RUNNER_READY_HELPER"

// readyHelper is the test binary as that server.
func readyHelper(spec string) {
	port, marker, _ := strings.Cut(spec, " ")
	time.Sleep(time.Second) // a server that takes its time to start
	if err := os.WriteFile(marker, []byte("bound\n"), 0o644); err != nil {
		os.Exit(3)
	}
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		os.Exit(4)
	}
	for {
		c, err := l.Accept()
		if err != nil {
			os.Exit(0)
		}
		_ = c.Close()
	}
}

// freePort answers a localhost TCP port nothing listens on now.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// taskRow answers the summary's row of id.
func taskRow(t *testing.T, s *summary.Summary, id string) summary.TaskResult {
	t.Helper()
	for _, r := range s.Tasks {
		if r.TaskID == id {
			return r
		}
	}
	t.Fatalf("no row for %s in %s", id, statuses(s))
	return summary.TaskResult{}
}

// gatedServer declares web#dev, persistent with readyWhen, and web#e2e, which depends on it and
// passes only if marker (relative to web) exists when it starts.
func gatedServer(f *fixture, command, marker string, rw *graph.ReadyWhen) {
	web := f.project("web")
	f.task(web, "dev", command, func(t *graph.Task) { t.Persistent, t.Cache, t.ReadyWhen = true, false, rw })
	f.task(web, "e2e", "test -f "+marker+" && echo e2e saw it ready", func(t *graph.Task) {
		t.DependsOn, t.Cache = []string{"web#dev"}, false
	})
}

func TestReadyWhenLogGatesDependents(t *testing.T) {
	f := newFixture(t)
	// The line comes after a pause, coloured, without a newline: the gate matches it as plain text.
	gatedServer(f, `sleep 1; echo > printed; printf 'VITE \033[32mready in \033[1m12\033[0m ms'; exec sleep 60`, "printed",
		&graph.ReadyWhen{Log: "ready in 12 ms", Timeout: time.Minute})
	s, out := f.run([]string{"web#dev", "web#e2e"}, nil)
	if e2e := taskRow(t, s, "web#e2e"); e2e.Status != store.StatusMiss {
		t.Fatalf("e2e %s, want miss: it starts once the server printed its line\n%s", e2e.Status, out)
	}
	if dev := taskRow(t, s, "web#dev"); dev.Status != store.StatusMiss || len(dev.NotReady) > 0 {
		t.Fatalf("dev %s notReady %v, want miss: stopped once e2e ended\n%s", dev.Status, dev.NotReady, out)
	}
}

func TestReadyWhenPortGatesDependents(t *testing.T) {
	f := newFixture(t)
	port := freePort(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(f.root, "bound")
	gatedServer(f, "exec "+strconv.Quote(exe), marker, &graph.ReadyWhen{Port: port, Timeout: time.Minute})
	f.ws.Projects[0].Tasks["dev"].ExecEnv = map[string]graph.EnvValue{readyHelperEnv: {Value: fmt.Sprintf("%d %s", port, marker)}}
	s, out := f.run([]string{"web#dev", "web#e2e"}, nil)
	if e2e := taskRow(t, s, "web#e2e"); e2e.Status != store.StatusMiss {
		t.Fatalf("e2e %s, want miss: it starts once the server listens\n%s", e2e.Status, out)
	}
	if dev := taskRow(t, s, "web#dev"); dev.Status != store.StatusMiss {
		t.Fatalf("dev %s, want miss\n%s", dev.Status, out)
	}
}

func TestReadyWhenTimeoutIsNotReady(t *testing.T) {
	f := newFixture(t)
	gatedServer(f, "echo starting; exec sleep 60", "never", &graph.ReadyWhen{Log: "ready in", Port: freePort(t), Timeout: 300 * time.Millisecond})
	s, out := f.run([]string{"web#dev", "web#e2e"}, nil)
	dev := taskRow(t, s, "web#dev")
	if dev.Status != store.StatusFailed || !slices.Equal(dev.NotReady, []string{"web#dev"}) {
		t.Fatalf("dev %s notReady %v, want failed and notReady itself\n%s", dev.Status, dev.NotReady, out)
	}
	e2e := taskRow(t, s, "web#e2e")
	if e2e.Status != store.StatusBlocked || e2e.BlockedBy == nil || *e2e.BlockedBy != "web#dev" || !slices.Equal(e2e.NotReady, []string{"web#dev"}) {
		t.Fatalf("e2e %s blockedBy %v notReady %v, want blocked by the server that was not ready\n%s", e2e.Status, e2e.BlockedBy, e2e.NotReady, out)
	}
	if !strings.Contains(out, `web#dev was not ready after 300ms (readyWhen): no line of its output held "ready in" and nothing accepted a connection on port`) {
		t.Fatalf("no not-ready line in\n%s", out)
	}
	f.asLast(s)
}

func TestReadyWhenEndedBeforeReady(t *testing.T) {
	f := newFixture(t)
	gatedServer(f, "echo starting; exit 0", "never", &graph.ReadyWhen{Log: "ready in", Timeout: time.Minute})
	s, out := f.run([]string{"web#dev", "web#e2e"}, nil)
	if dev := taskRow(t, s, "web#dev"); dev.Status != store.StatusFailed || !slices.Equal(dev.NotReady, []string{"web#dev"}) {
		t.Fatalf("dev %s notReady %v, want failed and notReady\n%s", dev.Status, dev.NotReady, out)
	}
	if e2e := taskRow(t, s, "web#e2e"); e2e.Status != store.StatusBlocked {
		t.Fatalf("e2e %s, want blocked\n%s", e2e.Status, out)
	}
	if !strings.Contains(out, "web#dev ended before it was ready (readyWhen)") {
		t.Fatalf("no line saying why in\n%s", out)
	}
}

func TestReadyWhenWaitIsCancelled(t *testing.T) {
	f := newFixture(t)
	started := filepath.Join(f.root, "started")
	gatedServer(f, "touch "+strconv.Quote(started)+"; exec sleep 60", "never", &graph.ReadyWhen{Log: "ready in", Timeout: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Cancelled once the server runs and waits to be ready (as Ctrl-C, an MCP cancel or the run's
	// timeout cancel a run): the wait ends with it, and no goroutine is left (goleak).
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(started); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	f.ws.Index()
	var out strings.Builder
	s, err := Run(ctx, Options{Workspace: f.ws, TaskIDs: []string{"web#dev", "web#e2e"}, Output: &out, Concurrency: 2})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if dev := taskRow(t, s, "web#dev"); dev.Status != store.StatusCancelled || len(dev.NotReady) > 0 {
		t.Fatalf("dev %s notReady %v, want cancelled\n%s", dev.Status, dev.NotReady, out.String())
	}
	if e2e := taskRow(t, s, "web#e2e"); e2e.Status != store.StatusSkipped {
		t.Fatalf("e2e %s, want skipped\n%s", e2e.Status, out.String())
	}
}
