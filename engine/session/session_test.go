package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A session opened with a watcher, a memo and a child started ahead, then used, leaves no
// goroutine (TestMain's goleak) and no process once closed; Close may be called again, and a
// watcher started after it starts nothing.
func TestSessionCloses(t *testing.T) {
	root := testkit.TempRepo(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: { build: { command: 'cat src/*.js > out.js', inputs: ['src/**'], outputs: ['out.js'] } },
})
`,
		".gitignore":              ".vx/\n",
		"package.json":            `{"name": "root", "private": true}`,
		"packages/a/package.json": `{"name": "a"}`,
		"packages/a/src/a.js":     "a\n",
	})
	// The child started ahead: it says its pid, then waits for its order as `vx __await-run 5` does.
	bin := t.TempDir()
	pids := filepath.Join(bin, "pids")
	exe := filepath.Join(bin, "vx")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\necho $$ >> "+pids+"\ncat <&5 >/dev/null\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s := Open(Options{Loader: workspace.NewLoader(workspace.Options{Dir: root, Getenv: func(string) string { return "" }}),
		Exe: exe, Environ: []string{"PATH=" + os.Getenv("PATH")}, Memo: true, KeepChild: true})

	// The watcher: started once the workspace loaded, it vouches for the file state and the load.
	ws, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s.StartWatcher(ctx, func(msg string) { t.Log(msg) })
	if err := s.FilesReady(ctx); err != nil {
		t.Fatalf("the watcher is not ready: %v", err)
	}
	if s.Files(ctx, ws) == nil {
		t.Fatal("the watcher answered no file state")
	}
	kept, err := s.Load(ctx) // the load the watcher vouches for from now on
	if err != nil {
		t.Fatal(err)
	}
	if again, err := s.Load(ctx); err != nil || again != kept {
		t.Fatalf("no file changed, yet the workspace was loaded again: %v", err)
	}

	// The memo: a plan through it, then a background plan still under way when the session closes.
	req := runrequest.Request{SelectOptions: workspace.SelectOptions{Tasks: []string{"build"}}, Getenv: s.Getenv,
		Files: s.Files(ctx, ws), Memo: s.Memo()}
	if _, err := runrequest.PlanDocument(ctx, ws, req); err != nil {
		t.Fatal(err)
	}
	planning := make(chan struct{})
	s.Memo().Refresh(ctx, s.FilesReady, func(ctx context.Context) {
		close(planning)
		<-ctx.Done()
	})
	<-planning

	// The state folder's reader.
	st, release, err := s.Reader(ws.CacheDir, "").Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = st
	release()

	// The child started ahead.
	s.KeepChild(ws.Root)
	for {
		s.child.mu.Lock()
		c := s.child.kept
		s.child.mu.Unlock()
		if c != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	pid := waitPid(t, pids)

	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("the child started ahead (%d) is left after Close: %v", pid, err)
	}
	s.StartWatcher(ctx, func(msg string) { t.Log(msg) })
	if err := s.FilesReady(ctx); !errors.Is(err, errNoWatcher) {
		t.Fatalf("a watcher after Close: %v", err)
	}
}

// waitPid answers the pid the child wrote to file.
func waitPid(t *testing.T, file string) int {
	t.Helper()
	for {
		data, _ := os.ReadFile(file)
		if line, _, ok := strings.Cut(string(data), "\n"); ok {
			pid, err := strconv.Atoi(line)
			if err != nil {
				t.Fatal(err)
			}
			return pid
		}
		time.Sleep(5 * time.Millisecond)
	}
}
