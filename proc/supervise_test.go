//go:build linux

package proc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// superviseRun is run with the test supervisor.
func superviseRun(t *testing.T, spec Spec) Result {
	t.Helper()
	spec.Supervisor = testSupervisor()
	return run(t, spec)
}

// notRunning reports whether pid is neither alive nor a zombie: gone and reaped.
func notRunning(pid int) bool {
	_, err := readStat(pid)
	return err != nil
}

func TestSupervisedExitStatus(t *testing.T) {
	for _, code := range []int{0, 1, 3, 255} {
		res := superviseRun(t, Spec{Shell: fmt.Sprintf("exit %d", code)})
		if res.ExitCode != code || res.Signal != "" || res.Cancelled {
			t.Errorf("exit %d: got %+v", code, res)
		}
	}
	for sig, want := range map[string]string{"TERM": "terminated", "KILL": "killed", "INT": "interrupt"} {
		res := superviseRun(t, Spec{Shell: "kill -" + sig + " $$"})
		if res.ExitCode != -1 || res.Signal != want || res.Cancelled {
			t.Errorf("kill -%s: got %+v, want signal %q", sig, res, want)
		}
	}
	res := superviseRun(t, Spec{Path: "sh", Args: []string{"-c", "exit 4"}})
	if res.ExitCode != 4 {
		t.Errorf("Path and Args: exit code %d, want 4", res.ExitCode)
	}
}

// The supervisor hands the child vx's pipes, stdin, extra files, folder and environment as they
// are, and adds nothing of its own.
func TestSupervisedStreams(t *testing.T) {
	var stdout, stderr bytes.Buffer
	superviseRun(t, Spec{Shell: "echo out; echo err >&2; cat", Stdin: strings.NewReader("in\n"), Stdout: &stdout, Stderr: &stderr})
	if stdout.String() != "out\nin\n" || stderr.String() != "err\n" {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}

	// What the child sees of its fds, environment and folder is what it sees unsupervised.
	dir := t.TempDir()
	sees := func(sup *Supervisor) (string, string) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out bytes.Buffer
		res := run(t, Spec{
			Shell:      `echo via-fd3 >&3; ls /proc/self/fd | sort -n | tr '\n' ' '; echo; env | sort; pwd`,
			Dir:        dir,
			Env:        testEnv("GREETING=hi"),
			ExtraFiles: []*os.File{w},
			Stdout:     &out,
			Supervisor: sup,
		})
		w.Close()
		got, _ := readAllString(r)
		if res.ExitCode != 0 {
			t.Errorf("supervisor %v: %+v", sup, res)
		}
		return got, out.String()
	}
	plainFD3, plain := sees(nil)
	fd3, supervised := sees(testSupervisor())
	if fd3 != "via-fd3\n" || plainFD3 != fd3 {
		t.Errorf("fd 3 carried %q supervised, %q not", fd3, plainFD3)
	}
	if supervised != plain || !strings.Contains(plain, "GREETING=hi") {
		t.Errorf("supervised, the child sees\n%s\nunsupervised\n%s", supervised, plain)
	}
}

func TestSupervisedStartErrors(t *testing.T) {
	for name, spec := range map[string]Spec{
		"missing program": {Path: "/nonexistent/program"},
		"not in PATH":     {Path: "vx-no-such-program"},
		"not executable":  {Path: "/etc/passwd"},
		"missing dir":     {Shell: "true", Dir: "/nonexistent/dir"},
	} {
		spec.Supervisor = testSupervisor()
		spec.Env = testEnv()
		res, err := Run(context.Background(), spec)
		if err == nil || !strings.Contains(err.Error(), "proc: start") || res.ExitCode != -1 {
			t.Errorf("%s: got %+v, %v", name, res, err)
		}
	}
}

// The heart of it: whatever the child started is killed and reaped before Run returns, wherever
// it went (its own session, an empty environment) and even though it holds the output pipes.
func TestSupervisedReapsDaemons(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	start := time.Now()
	res := superviseRun(t, Spec{
		Shell: `setsid env -i sh -c 'echo $$ > a; exec sleep 100' & ` + // holds stdout
			`nohup setsid sh -c 'sleep 100 & echo $! > b; echo $$ > c; exec sleep 100' 2>/dev/null & ` +
			`sleep 100 & echo $! > d; ` +
			`until [ -s a ] && [ -s b ] && [ -s c ]; do sleep 0.01; done; cat a b c d`,
		Dir:    dir,
		Stdout: &out,
		Grace:  10 * time.Second, // were a daemon to hold the pipes, Run would wait this long
	})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Run took %v: the daemons held its pipes", took)
	}
	if res.ExitCode != 0 || res.OutputCut {
		t.Errorf("got %+v, want exit 0 and the whole output", res)
	}
	lines := strings.Fields(out.String())
	if len(lines) != 4 {
		t.Fatalf("output %q", out.String())
	}
	for _, f := range lines {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("output %q", out.String())
		}
		if !notRunning(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("process %d outlived its task", pid)
		}
	}
}

// A task's supervisor kills what that task left, and nothing of a task beside it.
func TestSupervisedKillsOnlyItsOwn(t *testing.T) {
	out := newSyncBuffer("ready")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Result, 1)
	go func() {
		res, _ := Run(ctx, Spec{
			Shell:      "sleep 100 & echo $!; setsid sleep 100 & echo $!; echo ready; wait",
			Env:        testEnv(),
			Stdout:     out,
			Supervisor: testSupervisor(),
		})
		done <- res
	}()
	waitReady(t, out)
	other := superviseRun(t, Spec{Shell: "setsid sleep 100 & sleep 100 & exit 0"})
	if other.ExitCode != 0 {
		t.Errorf("the other task: %+v", other)
	}
	var neighbours []int
	for _, f := range strings.Fields(out.String())[:2] {
		pid, _ := strconv.Atoi(f)
		neighbours = append(neighbours, pid)
		if !alive(pid) {
			t.Errorf("process %d of a running task died when another task ended", pid)
		}
	}
	cancel()
	if res := <-done; !res.Cancelled {
		t.Errorf("got %+v", res)
	}
	for _, pid := range neighbours {
		if !notRunning(pid) {
			t.Errorf("process %d outlived its cancelled task", pid)
		}
	}
}

// Cancelling a supervised child: SIGTERM reaches the task's group through the supervisor, then
// after the grace period SIGKILL reaches everything it started.
func TestSupervisedCancel(t *testing.T) {
	t.Run("TERM forwarded", func(t *testing.T) {
		out := newSyncBuffer("ready")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan Result, 1)
		go func() {
			res, _ := Run(ctx, Spec{
				Shell: "trap 'echo got TERM; exit 7' TERM; echo ready; while :; do sleep 0.05; done",
				Env:   testEnv(), Stdout: out, Supervisor: testSupervisor(), Grace: 5 * time.Second,
			})
			done <- res
		}()
		waitReady(t, out)
		cancel()
		res := <-done
		if !res.Cancelled || res.ExitCode != 7 || !strings.Contains(out.String(), "got TERM") {
			t.Errorf("got %+v, output %q; want the task's own exit 7 on SIGTERM", res, out.String())
		}
	})
	t.Run("TERM ignored", func(t *testing.T) {
		out := newSyncBuffer("ready")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan Result, 1)
		go func() {
			res, _ := Run(ctx, Spec{
				Shell: "trap '' TERM; sleep 100 & echo $!; setsid sleep 100 & echo $!; echo ready; wait",
				Env:   testEnv(), Stdout: out, Supervisor: testSupervisor(), Grace: 200 * time.Millisecond,
			})
			done <- res
		}()
		waitReady(t, out)
		cancel()
		res := <-done
		if !res.Cancelled || res.Signal != "killed" {
			t.Errorf("got %+v, want killed", res)
		}
		for _, f := range strings.Fields(out.String())[:2] {
			if pid, _ := strconv.Atoi(f); !notRunning(pid) {
				t.Errorf("process %d outlived its cancelled task", pid)
			}
		}
	})
}

// The rusage in the Result is the task's (its shell and what it waited for), not the
// supervisor's: a Go process of its own weighs several MB more than a shell, and a task that
// peaked below the supervisor (whose memory it shared until it started its program) reports no
// peak rather than the supervisor's.
func TestSupervisedRusage(t *testing.T) {
	busy := superviseRun(t, Spec{Shell: "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"})
	if cpu := busy.UserCPU + busy.SysCPU; cpu < 20*time.Millisecond || cpu > busy.Wall+50*time.Millisecond {
		t.Errorf("busy loop: CPU %v over wall %v", cpu, busy.Wall)
	}
	small := superviseRun(t, Spec{Shell: "echo built"})
	if small.PeakRSSBytes != 0 {
		t.Errorf("peak RSS of a supervised `echo built`: %d bytes, want none (the supervisor's own)", small.PeakRSSBytes)
	}
	big := superviseRun(t, Spec{Shell: "x=$(head -c 30000000 /dev/zero | tr '\\0' a); echo ${#x}"})
	if big.PeakRSSBytes < 30<<20 {
		t.Errorf("peak RSS of a task holding 30 MB: %d bytes", big.PeakRSSBytes)
	}
}

// The supervisor of a task whose vx was SIGKILLed kills the task's whole tree at once
// (PR_SET_PDEATHSIG), daemons included.
func TestSupervisorParentDeath(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), helperKey+"=supervised-parent", markerKey+"="+markerValue())
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(out)
	for len(pids) < 4 && sc.Scan() {
		pid, err := strconv.Atoi(strings.TrimSpace(sc.Text()))
		if err != nil {
			break
		}
		pids = append(pids, pid)
	}
	if len(pids) < 4 {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		t.Fatalf("the helper printed %v", pids)
	}
	_ = parent.Process.Signal(syscall.SIGKILL)
	_ = parent.Wait()
	for _, pid := range pids {
		waitDead(t, pid)
	}
}

// supervisedParentHelper runs a supervised task that ignores SIGTERM and leaves a daemon; it
// prints the supervisor's pid, the task's, the daemon's and a sleeper's, and waits to be killed.
func supervisedParentHelper() int {
	_, err := Run(context.Background(), Spec{
		Shell:      `trap '' TERM; echo $PPID; echo $$; setsid env -i sh -c 'echo $$; exec sleep 100' & sleep 100 & echo $!; wait`,
		Env:        testEnv(),
		Stdout:     os.Stdout,
		Supervisor: testSupervisor(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// Supervise refuses a command line it does not know, as its own failure (125).
func TestSuperviseUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"--"}, {"--report-fd"}, {"--report-fd", "x", "--", "true"}, {"sh"}, {"--bogus", "--", "true"}} {
		cmd := exec.Command(os.Args[0], append([]string{SuperviseArg}, args...)...)
		cmd.Env = testEnv()
		out, err := cmd.CombinedOutput()
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.ExitCode() != 125 || !strings.Contains(string(out), SuperviseArg) {
			t.Errorf("%s %q: %v, %q; want exit 125 and a message", SuperviseArg, args, err, out)
		}
	}
}
