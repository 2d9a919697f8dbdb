//go:build unix

package main

import (
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// procsWorkspace has tasks that resist being stopped. Each writes to $PIDS_DIR/pids the pids of
// the processes it started and of its parent (the task's supervisor), and to $PIDS_DIR/runpid
// the pid of its parent's parent (the `vx run` child of runTasks).
//
//   - stubborn ignores SIGTERM, with a child that ignores it too, and leaves a daemon that cleared
//     its environment (so no environment marker finds it) and runs in a session of its own;
//   - daemon leaves such a daemon and exits 0.
func procsWorkspace() map[string]string {
	const pids = `read -r _ _ _ run _ < /proc/$PPID/stat; echo $run > "$PIDS_DIR/runpid"; echo $PPID $$ >> "$PIDS_DIR/pids"; `
	const daemon = `setsid env -i /bin/sh -c 'echo $$ >> "$0"; exec sleep 300' "$PIDS_DIR/pids" </dev/null >/dev/null 2>&1 & `
	return map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  // The tasks write where the test reads: the one variable they see undeclared.
  passThroughEnv: ['PIDS_DIR'],
  tasks: {
    stubborn: { command: ` + jsString(pids+daemon+`(trap '' TERM; exec sleep 300) & echo $! >> "$PIDS_DIR/pids"; trap '' TERM; wait`) + `,
                cache: false },
    daemon: { command: ` + jsString(pids+daemon+`until [ $(wc -w < "$PIDS_DIR/pids") -ge 3 ]; do sleep 0.01; done`) + `,
              cache: false },
  },
})
`,
		"packages/app/package.json": `{"name": "app"}`,
	}
}

// jsString quotes s for a TypeScript source: single quotes are all it holds of its own.
func jsString(s string) string {
	out := []byte{'"'}
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' {
			out = append(out, '\\')
		}
		out = append(out, c)
	}
	return string(append(out, '"'))
}

// startProcsSession starts vx mcp on procsWorkspace; the pids its tasks write are killed at cleanup
// whatever the test found.
func startProcsSession(t *testing.T) (s *runSession, pidsDir, pidsFile string) {
	t.Helper()
	dir := writeWorkspace(t, procsWorkspace())
	pidsDir = t.TempDir()
	pidsFile = filepath.Join(pidsDir, "pids")
	killRunLeftovers(t, pidsFile)
	killRunLeftovers(t, filepath.Join(pidsDir, "runpid"))
	return startRunSession(t, dir, "PIDS_DIR="+pidsDir), pidsDir, pidsFile
}

// callInFlight calls runTasks on stubborn in the background and waits until its processes (the
// supervisor, the shell, the daemon and the sleeper) and the vx run child are known.
func callInFlight(t *testing.T, ctx context.Context, s *runSession, pidsDir, pidsFile string) (pids []int, done <-chan error) {
	t.Helper()
	errs := make(chan error, 1)
	go func() {
		_, err := callRunTool(ctx, s.cs, "runTasks", map[string]any{"tasks": []string{"stubborn"}}, "")
		errs <- err
	}()
	pids = readRunPids(t, pidsFile, 4)
	pids = append(pids, readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)...)
	for _, pid := range pids {
		if runProcessGone(pid) {
			t.Fatalf("process %d is not running before the test stops the call", pid)
		}
	}
	return pids, errs
}

// A task's daemon that cleared its environment and left its session is gone when runTasks
// answers: the task's supervisor reaps it; no environment marker is needed to find it.
func TestProcsMCPDaemonGoneAtFinish(t *testing.T) {
	t.Parallel()
	s, pidsDir, pidsFile := startProcsSession(t)
	a := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"daemon"}}, ""))
	if *a.ExitCode != 0 || a.statuses()["app#daemon"] != "miss" {
		t.Fatalf("runTasks(daemon) = %+v", a)
	}
	pids := append(readRunPids(t, pidsFile, 3), readRunPids(t, filepath.Join(pidsDir, "runpid"), 1)...)
	expectRunGone(t, "when runTasks answered", pids, 100*time.Millisecond)
}

// Cancelling a call whose task ignores SIGTERM and left such a daemon: all of it is gone.
func TestProcsMCPCancel(t *testing.T) {
	t.Parallel()
	s, pidsDir, pidsFile := startProcsSession(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pids, done := callInFlight(t, ctx, s, pidsDir, pidsFile)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
	expectRunGone(t, "after cancel", pids, 10*time.Second)
}

// SIGTERM to the server: it exits once every process of the call is gone.
func TestProcsMCPServerTerminated(t *testing.T) {
	t.Parallel()
	s, pidsDir, pidsFile := startProcsSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), runCallTimeout)
	defer cancel()
	pids, done := callInFlight(t, ctx, s, pidsDir, pidsFile)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.eof(t); err != nil {
		t.Errorf("vx mcp after SIGTERM: %v, want exit 0", err)
	}
	<-done
	expectRunGone(t, "when the server exited after SIGTERM", pids, 100*time.Millisecond)
}

// SIGKILL to the server mid-run: nobody is left to stop the run, so the `vx run` child notices
// that its parent died (PR_SET_PDEATHSIG) and kills every task group at once.
func TestProcsMCPServerKilled(t *testing.T) {
	t.Parallel()
	s, pidsDir, pidsFile := startProcsSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), runCallTimeout)
	defer cancel()
	pids, done := callInFlight(t, ctx, s, pidsDir, pidsFile)
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// The server is gone for good: its session's cleanup must not wait for a clean exit.
	s.once.Do(func() { _ = s.cmd.Wait() })
	<-done
	expectRunGone(t, "after the server was killed", pids, 10*time.Second)
}
