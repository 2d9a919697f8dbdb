//go:build linux

package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/internal/testkit"
)

// markerKey is put in the environment of every child the tests start, so that TestMain can find
// any process they left behind, wherever it was re-parented.
const markerKey = "VX_PROC_TEST_MARKER"

const helperKey = "VX_PROC_TEST_HELPER"

func TestMain(m *testing.M) {
	// This binary is also the supervisor of the tests' supervised children (testSupervisor); as vx
	// does, it exits without the race detector's second of sleep at exit.
	if len(os.Args) > 1 && os.Args[1] == SuperviseArg {
		syscall.Exit(SuperviseWith(os.Args[2:], SuperviseOptions{}))
	}
	switch os.Getenv(helperKey) {
	case "orphaned-parent":
		os.Exit(orphanedParentHelper())
	case "supervised-parent":
		os.Exit(supervisedParentHelper())
	case "watch-parent-middle":
		os.Exit(watchParentMiddle())
	case "watch-parent-child":
		os.Exit(watchParentChild())
	case "inherited":
		os.Exit(inheritedHelper())
	}
	// As vx does: what this binary inherited (from go test, a shell) is no child's.
	if err := CloseInheritedOnExec(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	goleak.VerifyTestMain(leftoverCheck{m})
}

// leftoverCheck runs the tests, then fails the run if a marked process is still alive.
type leftoverCheck struct{ m *testing.M }

func (c leftoverCheck) Run() int {
	code := c.m.Run()
	deadline := time.Now().Add(3 * time.Second)
	for {
		left := markedAlive()
		if len(left) == 0 {
			return code
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "FAIL: processes left behind by the tests: %v\n", left)
			for _, pid := range left {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return 1
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func markerValue() string {
	if v := os.Getenv(markerKey); v != "" {
		return v
	}
	return strconv.Itoa(os.Getpid())
}

// markedAlive lists live processes whose environment holds this test run's marker.
func markedAlive() []int {
	procs, err := readProcs()
	if err != nil {
		return nil
	}
	want := []byte(markerKey + "=" + markerValue() + "\x00")
	var found []int
	for _, p := range procs {
		if p.zombie() || p.pid == os.Getpid() {
			continue
		}
		environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.pid))
		if err == nil && bytes.Contains(environ, want) {
			found = append(found, p.pid)
		}
	}
	return found
}

// escapeSh starts `sleep 100` in a session of its own, outside the child's group, waits until it
// got there (until then a group kill would still reach it) and prints its pid.
const escapeSh = `setsid sleep 100 & until [ "$(cut -d' ' -f6 /proc/$!/stat)" = "$!" ]; do sleep 0.01; done; echo $!`

// testSupervisor is this test binary, which runs Supervise when started as `proc.test __supervise`
// (see TestMain).
func testSupervisor() *Supervisor {
	return &Supervisor{Path: "/proc/self/exe", Name: "proc.test"}
}

// testEnv is a minimal environment for children, with the leftover marker.
func testEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), markerKey + "=" + markerValue()}, extra...)
}

// alive reports whether pid is a live (not zombie) process.
func alive(pid int) bool {
	info, err := readStat(pid)
	return err == nil && !info.zombie()
}

// waitDead fails the test unless pid dies within a few seconds.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d still alive", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newSyncBuffer is a testkit.SyncBuffer whose Ready closes once the child printed readyText.
func newSyncBuffer(readyText string) *testkit.SyncBuffer { return testkit.NewSyncBuffer(readyText) }

// waitReady waits until b holds its ready text.
func waitReady(t *testing.T, b *testkit.SyncBuffer) {
	t.Helper()
	select {
	case <-b.Ready():
	case <-time.After(5 * time.Second):
		t.Fatalf("child never printed its ready line; output so far: %q", b.String())
	}
}

// firstPid parses the first line of out as a pid.
func firstPid(t *testing.T, out string) int {
	t.Helper()
	line, _, _ := strings.Cut(out, "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("no pid in output %q", out)
	}
	return pid
}

func run(t *testing.T, spec Spec) Result {
	t.Helper()
	if spec.Env == nil {
		spec.Env = testEnv()
	}
	res, err := Run(context.Background(), spec)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestExitCodes(t *testing.T) {
	for _, code := range []int{0, 1, 3, 255} {
		res := run(t, Spec{Shell: fmt.Sprintf("exit %d", code)})
		if res.ExitCode != code || res.Signal != "" || res.Cancelled {
			t.Errorf("exit %d: got %+v", code, res)
		}
	}
	res := run(t, Spec{Path: "/bin/sh", Args: []string{"-c", "exit 4"}})
	if res.ExitCode != 4 {
		t.Errorf("Path and Args: exit code %d, want 4", res.ExitCode)
	}
}

func TestKilledBySignal(t *testing.T) {
	for sig, want := range map[string]string{"TERM": "terminated", "KILL": "killed", "INT": "interrupt"} {
		res := run(t, Spec{Shell: "kill -" + sig + " $$"})
		if res.ExitCode != -1 || res.Signal != want || res.Cancelled {
			t.Errorf("kill -%s: got %+v, want signal %q", sig, res, want)
		}
	}
}

func TestOutput(t *testing.T) {
	var stdout, stderr bytes.Buffer
	run(t, Spec{Shell: "echo out; echo err >&2; echo out2", Stdout: &stdout, Stderr: &stderr})
	if stdout.String() != "out\nout2\n" || stderr.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}

	// One writer for both streams keeps their order.
	var both bytes.Buffer
	run(t, Spec{Shell: "echo 1; echo 2 >&2; echo 3; echo 4 >&2", Stdout: &both, Stderr: &both})
	if both.String() != "1\n2\n3\n4\n" {
		t.Errorf("combined output %q", both.String())
	}

	// nil writers discard; a lot of output must not block the child.
	res := run(t, Spec{Shell: "head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2"})
	if res.ExitCode != 0 {
		t.Errorf("discarded output: %+v", res)
	}
}

func TestFileWritersArePiped(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The child's fd 1 must be a pipe, not the file itself.
	run(t, Spec{Shell: "readlink /proc/self/fd/1; readlink /proc/self/fd/2", Stdout: f, Stderr: f})
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(got))
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "pipe:") || lines[0] != lines[1] {
		t.Errorf("child's stdout and stderr: %q, want one pipe", lines)
	}
}

func TestStdin(t *testing.T) {
	var out bytes.Buffer
	run(t, Spec{Path: "cat", Stdin: strings.NewReader("hello\n"), Stdout: &out})
	if out.String() != "hello\n" {
		t.Errorf("cat echoed %q", out.String())
	}
	out.Reset()
	run(t, Spec{Path: "cat", Stdout: &out}) // nil stdin is /dev/null: cat ends at once
	if out.String() != "" {
		t.Errorf("cat of nil stdin printed %q", out.String())
	}
}

func TestEnvAndDir(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	run(t, Spec{Shell: `echo "$GREETING"; pwd -P`, Dir: dir, Env: testEnv("GREETING=hi there"), Stdout: &out})
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := "hi there\n" + realDir + "\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}

	// A nil Env is an empty environment, not vx's.
	out.Reset()
	if _, err := Run(context.Background(), Spec{Path: "/usr/bin/env", Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "" {
		t.Errorf("nil Env gave the child %q", out.String())
	}
}

func TestExtraFiles(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res := run(t, Spec{Shell: "echo via-fd3 >&3", ExtraFiles: []*os.File{w}})
	w.Close()
	got, _ := readAllString(r)
	if res.ExitCode != 0 || got != "via-fd3\n" {
		t.Errorf("fd 3 carried %q (%+v)", got, res)
	}
}

func readAllString(f *os.File) (string, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.String(), err
}

func TestStartErrors(t *testing.T) {
	for name, spec := range map[string]Spec{
		"missing program": {Path: "/nonexistent/program"},
		"not in PATH":     {Path: "vx-no-such-program"},
		"missing dir":     {Shell: "true", Dir: "/nonexistent/dir"},
	} {
		called := false
		spec.OnStart = func(int) { called = true }
		res, err := Run(context.Background(), spec)
		if err == nil || !strings.Contains(err.Error(), "proc: start") || res.ExitCode != -1 || called {
			t.Errorf("%s: got %+v, %v (OnStart called: %v)", name, res, err, called)
		}
	}
}

func TestOnStartGivesGroupLeader(t *testing.T) {
	var pid, pgid int
	run(t, Spec{Shell: "sleep 0.05", OnStart: func(p int) {
		pid = p
		pgid, _ = syscall.Getpgid(p)
	}})
	if pid <= 0 || pgid != pid {
		t.Errorf("pid %d in group %d, want its own group", pid, pgid)
	}
}

func TestCancelSendsSIGTERM(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := Run(ctx, Spec{Shell: "sleep 100", Env: testEnv(), OnStart: func(int) { cancel() }})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.Signal != "terminated" || res.Wall > time.Second {
		t.Errorf("got %+v, want cancelled by SIGTERM at once", res)
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("ctx.Err() = %v", ctx.Err())
	}
}

func TestDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	res, err := Run(ctx, Spec{Shell: "sleep 100", Env: testEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cancelled || res.ExitCode != -1 || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Errorf("got %+v, ctx.Err() %v", res, ctx.Err())
	}
}

func TestCancelEscalatesToSIGKILL(t *testing.T) {
	// The shell traps SIGTERM (and its sleeps, which die of it, are restarted): only SIGKILL ends it.
	out := newSyncBuffer("ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const grace = 300 * time.Millisecond
	done := make(chan Result, 1)
	go func() {
		res, err := Run(ctx, Spec{
			Shell:  "trap 'echo got TERM' TERM; echo ready; while :; do sleep 0.05; done",
			Env:    testEnv(),
			Stdout: out,
			Grace:  grace,
		})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitReady(t, out)
	cancelled := time.Now()
	cancel()
	res := <-done
	took := time.Since(cancelled)
	if !res.Cancelled || res.Signal != "killed" {
		t.Errorf("got %+v, want killed", res)
	}
	if took < grace || took > grace+2*time.Second {
		t.Errorf("Run returned %v after cancel, want about %v", took, grace)
	}
	if !strings.Contains(out.String(), "got TERM") {
		t.Errorf("the child never saw SIGTERM; output %q", out.String())
	}
}

func TestCancelIgnoredSIGTERM(t *testing.T) {
	out := newSyncBuffer("ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(ctx, Spec{Shell: "trap '' TERM; echo ready; sleep 100", Env: testEnv(), Stdout: out, Grace: 200 * time.Millisecond})
		done <- res
	}()
	waitReady(t, out)
	cancel()
	select {
	case res := <-done:
		if !res.Cancelled || res.Signal != "killed" {
			t.Errorf("got %+v, want killed", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the grace period")
	}
}

func TestNegativeGraceKillsAtOnce(t *testing.T) {
	out := newSyncBuffer("ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(ctx, Spec{Shell: "trap '' TERM; echo ready; sleep 100", Env: testEnv(), Stdout: out, Grace: -1})
		done <- res
	}()
	waitReady(t, out)
	cancel()
	if res := <-done; res.Signal != "killed" {
		t.Errorf("got %+v, want killed", res)
	}
}

func TestAlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	started := false
	res, err := Run(ctx, Spec{Shell: "true", OnStart: func(int) { started = true }})
	if !errors.Is(err, context.Canceled) || !res.Cancelled || started {
		t.Errorf("got %+v, %v, started %v", res, err, started)
	}
}

func TestGrandchildHoldingPipeDoesNotHang(t *testing.T) {
	var out bytes.Buffer
	start := time.Now()
	res := run(t, Spec{Shell: "sleep 100 & echo $!", Stdout: &out, Grace: 5 * time.Second})
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Run took %v", took)
	}
	if res.ExitCode != 0 || res.OutputCut {
		t.Errorf("got %+v", res)
	}
	waitDead(t, firstPid(t, out.String()))
}

func TestEscapedGrandchildCutsOutput(t *testing.T) {
	// A grandchild in its own session holds the pipe; Run stops reading after Grace.
	var out bytes.Buffer
	start := time.Now()
	res := run(t, Spec{Shell: escapeSh, Stdout: &out, Grace: 200 * time.Millisecond})
	pid := firstPid(t, out.String())
	defer waitDead(t, pid)
	defer syscall.Kill(pid, syscall.SIGKILL)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Run took %v", took)
	}
	if res.ExitCode != 0 || !res.OutputCut {
		t.Errorf("got %+v, want exit 0 with OutputCut", res)
	}
}

func TestRusage(t *testing.T) {
	res := run(t, Spec{Shell: "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"})
	cpu := res.UserCPU + res.SysCPU
	if cpu < 20*time.Millisecond || cpu > res.Wall+50*time.Millisecond {
		t.Errorf("busy loop: CPU %v over wall %v", cpu, res.Wall)
	}
	// A shell is lighter than the test binary it was cloned from: no peak of its own is measured.
	if res.PeakRSSBytes != 0 {
		t.Errorf("peak RSS of a shell loop %d bytes, want none (lighter than its parent)", res.PeakRSSBytes)
	}
	big := run(t, Spec{Shell: "x=$(head -c 60000000 /dev/zero | tr '\\0' a); echo ${#x}"})
	if big.PeakRSSBytes < 60<<20 || big.PeakRSSBytes > 1<<30 {
		t.Errorf("peak RSS of a task holding 60 MB: %d bytes", big.PeakRSSBytes)
	}

	idle := run(t, Spec{Shell: "sleep 0.2"})
	if idle.Wall < 200*time.Millisecond || idle.UserCPU+idle.SysCPU > 100*time.Millisecond {
		t.Errorf("sleep: wall %v, CPU %v", idle.Wall, idle.UserCPU+idle.SysCPU)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterFailureIsAnError(t *testing.T) {
	res, err := Run(context.Background(), Spec{Shell: "echo hi", Env: testEnv(), Stdout: failingWriter{}})
	if err == nil || !strings.Contains(err.Error(), "disk full") || res.ExitCode != 0 {
		t.Errorf("got %+v, %v", res, err)
	}
}

func TestOnStartPanicKillsChild(t *testing.T) {
	var pid int
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic was swallowed")
			}
		}()
		_, _ = Run(context.Background(), Spec{Shell: "sleep 100", Env: testEnv(), OnStart: func(p int) {
			pid = p
			panic("boom")
		}})
	}()
	waitDead(t, pid)
}

func TestKillGroup(t *testing.T) {
	for _, pgid := range []int{-5, 0, 1, syscall.Getpgrp()} {
		if err := KillGroup(pgid, syscall.Signal(0)); err == nil {
			t.Errorf("KillGroup(%d) was not refused", pgid)
		}
	}
	var pid int
	run(t, Spec{Shell: "true", OnStart: func(p int) { pid = p }})
	if err := KillGroup(pid, syscall.SIGKILL); err != nil {
		t.Errorf("KillGroup of a finished group: %v", err)
	}
}

// descendants lists the pids of every live descendant of pid, from /proc, as KillTree finds them.
func descendants(pid int) ([]int, error) {
	procs, err := readProcs()
	if err != nil {
		return nil, err
	}
	return liveDescendants(procs, pid), nil
}

func TestDescendants(t *testing.T) {
	out := newSyncBuffer("ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pids := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = Run(ctx, Spec{
			Shell:   "sleep 100 & (" + escapeSh + "; echo ready; wait) & wait",
			Env:     testEnv(),
			Stdout:  out,
			Grace:   200 * time.Millisecond, // the escaped sleep holds stdout until then
			OnStart: func(pid int) { pids <- pid },
		})
	}()
	pid := <-pids
	waitReady(t, out)
	var found []int
	deadline := time.Now().Add(3 * time.Second)
	for len(found) < 3 && time.Now().Before(deadline) { // sleep, subshell, setsid sleep
		var err error
		if found, err = descendants(pid); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(found) != 3 {
		t.Fatalf("Descendants(%d) = %v, want 3 processes", pid, found)
	}
	mine, err := descendants(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range append([]int{pid}, found...) {
		if !containsInt(mine, want) {
			t.Errorf("Descendants of the test process %v lack %d", mine, want)
		}
	}
	cancel()
	<-done
	// The setsid sleep left the group: only KillTree would have reached it.
	for _, d := range found {
		_ = syscall.Kill(d, syscall.SIGKILL)
		waitDead(t, d)
	}
	if got, err := descendants(1 << 30); err != nil || len(got) != 0 {
		t.Errorf("Descendants of a missing pid: %v, %v", got, err)
	}
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func TestKillTreeReachesEscapedDescendants(t *testing.T) {
	for _, killTree := range []bool{true, false} {
		t.Run(fmt.Sprintf("KillTree=%v", killTree), func(t *testing.T) {
			out := newSyncBuffer("ready")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan Result, 1)
			go func() {
				res, _ := Run(ctx, Spec{
					Shell:    "trap '' TERM; " + escapeSh + "; echo ready; while :; do sleep 0.05; done",
					Env:      testEnv(),
					Stdout:   out,
					Grace:    200 * time.Millisecond,
					KillTree: killTree,
				})
				done <- res
			}()
			waitReady(t, out)
			escaped := firstPid(t, out.String())
			cancel()
			res := <-done
			if res.Signal != "killed" {
				t.Errorf("got %+v", res)
			}
			if killTree {
				waitDead(t, escaped)
				return
			}
			if !alive(escaped) {
				t.Errorf("without KillTree the escaped process %d died anyway", escaped)
			}
			_ = syscall.Kill(escaped, syscall.SIGKILL)
			waitDead(t, escaped)
		})
	}
}

func TestReadStat(t *testing.T) {
	self, err := readStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.ppid != os.Getppid() || self.pgid != syscall.Getpgrp() || self.zombie() {
		t.Errorf("readStat(self) = %+v", self)
	}
	// A command name with spaces and parentheses must not shift the fields.
	dir := t.TempDir()
	prog := filepath.Join(dir, "a) b (c")
	if err := os.Symlink("/bin/sleep", prog); err != nil {
		t.Fatal(err)
	}
	var pid int
	run(t, Spec{Path: prog, Args: []string{"0.1"}, OnStart: func(p int) {
		pid = p
		info, err := readStat(p)
		if err != nil || info.ppid != os.Getpid() || info.pgid != p {
			t.Errorf("readStat of %q: %+v, %v", prog, info, err)
		}
	}})
	if pid == 0 {
		t.Fatal("not started")
	}
}
