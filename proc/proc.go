// Package proc supervises every child process vx starts: task commands, and the `vx run` child that
// the MCP server starts for runTasks.
//
// Each child runs in its own process group, so that one signal reaches everything it started. Its
// stdout and stderr are piped through Go (never inherited), so a child cannot write to vx's own
// streams. When the context ends, the group gets SIGTERM, then SIGKILL after a grace period; when the
// child exits, whatever is left of its group is killed, so no grandchild outlives it and none can hold
// its pipes open. The Result carries what the kernel knows of the reaped child: exit code or signal,
// CPU time and peak RSS.
//
// Descendants that leave the group (setsid, a double fork, nohup, an intermediate process that
// died) are what a Supervisor is for: a small process of its own per child (vx re-executing
// itself) that is a child subreaper, so that every one of them is re-parented to it, and that kills
// and reaps them all when the child exits, before Run returns. A process that is not supervised
// itself can rely on Spec.KillTree; and a caller whose
// own supervisor was SIGKILLed, on KillMarked.
//
// A second stop request (vx's second SIGINT or SIGTERM) is WithHardStop: every Run under it skips
// the rest of its grace period.
//
// The package targets Linux: it reads /proc and uses prctl. On other systems the tree functions
// report errors.ErrUnsupported, a Supervisor is not used, ParentDeathSignal is ignored, and Run
// degrades to plain group handling: on macOS and the BSDs the process group is all that is
// guaranteed. Windows has no process groups and no signals: a Shell command runs with the sh found
// on PATH (Git for Windows') and is refused without one, every signal is TerminateProcess of the
// child alone (no grace period; what it started is not reached), and a Result has CPU times but no
// peak RSS.
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// DefaultGrace is the delay between SIGTERM and SIGKILL when Spec.Grace is zero.
const DefaultGrace = 2 * time.Second

// Spec describes one child process.
type Spec struct {
	// Path is the program to run; it is ignored when Shell is set. A Path without a slash is
	// looked up in vx's own PATH, as os/exec does, not in Env's.
	Path string
	// Name is argv[0]; "" means Path. A binary that picks what to run by the name it was started
	// under (a test binary standing for vx) needs it.
	Name string
	// Args are argv[1:].
	Args []string
	// Shell, when set, runs `/bin/sh -c Shell` instead of Path.
	Shell string
	// Dir is the working directory; "" means vx's own.
	Dir string
	// Env is the child's full environment. Unlike os/exec, nil means an empty environment, not
	// vx's: callers pass lists derived from os.Environ().
	Env []string
	// Stdin feeds the child's standard input; nil means /dev/null. A reader that is not an
	// *os.File must reach EOF (or the child must exit) for its copying goroutine to end.
	Stdin io.Reader
	// Stdout and Stderr receive the child's output through pipes read by Go, never by handing the
	// child a file of vx's; nil discards. When both are the same writer, one pipe carries both,
	// so their order is kept; otherwise each writer is called from its own goroutine.
	Stdout, Stderr io.Writer
	// ExtraFiles are passed as in exec.Cmd.ExtraFiles (fd 3, 4, ...).
	ExtraFiles []*os.File
	// Grace is the delay between SIGTERM and SIGKILL when the context ends, and also how long
	// output is still read, after the child exited, from a process outside its group that holds
	// the pipes. Zero means DefaultGrace; a negative value means no grace (SIGKILL at once).
	Grace time.Duration
	// OnStart, when set, is called once the child started, with its pid (which is also its
	// process group id), before Run waits for it. A supervised child's pid is its supervisor's.
	OnStart func(pid int)
	// KillTree makes the SIGKILL that ends a cancelled child's grace also reach every live
	// descendant of the child found in /proc and the process groups they lead, even those that
	// left the child's group (such as the tasks of a `vx run` child). Set it for a child that
	// supervises children of its own. Descendants orphaned before that moment are out of reach
	// but for a Supervisor's.
	KillTree bool
	// ParentDeathSignal, when set, is sent to the child by the kernel if vx dies first (Linux's
	// PR_SET_PDEATHSIG), so a child whose supervisor was SIGKILLed does not run on unowned. A
	// supervised child's supervisor always has it, and kills the child's whole tree on it.
	ParentDeathSignal syscall.Signal
	// Supervisor, when set, runs the child under a supervisor process of its own (see
	// Supervisor): when Run returns, every process the child started is dead and reaped, not only
	// those of its group. The Result still describes the child, not its supervisor. Linux only:
	// elsewhere it is ignored.
	Supervisor *Supervisor
	// Foreground, when Stdin is a terminal, makes the child's process group the terminal's
	// foreground group while it runs, so that it may read the terminal (a background group that
	// reads it is stopped by SIGTTIN), and gives the terminal back to vx's group once the child
	// was reaped. Ignored when Stdin is no terminal, and on Windows.
	Foreground bool
}

// Result is what is known once the child was reaped.
type Result struct {
	// ExitCode is the child's exit status, or -1 when it was killed by a signal or never started.
	ExitCode int
	// Signal names the signal that killed the child ("terminated", "killed", ...); "" if it exited.
	Signal string
	// Wall is the time from start to exit.
	Wall time.Duration
	// UserCPU and SysCPU are the CPU time of the child and of the descendants it waited for.
	UserCPU, SysCPU time.Duration
	// PeakRSSBytes is ru_maxrss of the reaped child (kB*1024 on Linux).
	PeakRSSBytes int64
	// Cancelled reports that the context ended before the child did; ctx.Err() tells a deadline
	// from a cancellation.
	Cancelled bool
	// OutputCut reports that, after the child exited, a process outside its group still held its
	// stdout or stderr when Grace ran out: the pipes were closed and later output lost. os/exec
	// only tells this of a child that exited 0; for one that failed the exit status wins.
	OutputCut bool
}

// Run starts the child in its own process group and waits for it. An error is returned only when
// the child could not be started or its pipes failed; a non-zero exit is a Result, not an error.
//
// When ctx ends while the child runs, its group gets SIGTERM (and SIGCONT, so a stopped group can
// act on it), then SIGKILL after the grace period, or at once on a hard stop (WithHardStop). Once
// the child has exited, and before it is reaped (so its group id cannot be reused), the rest of
// its group gets SIGKILL.
//
// When ctx has already ended, nothing is started: the Result says Cancelled and the error wraps
// ctx.Err().
func Run(ctx context.Context, spec Spec) (Result, error) {
	res := Result{ExitCode: -1}
	if err := ctx.Err(); err != nil {
		res.Cancelled = true
		return res, fmt.Errorf("proc: %s not started: %w", spec.describe(), err)
	}
	grace := spec.grace()
	cmd, report, err := spec.command(grace)
	if err != nil {
		return res, fmt.Errorf("proc: start %s: %w", spec.describe(), err)
	}
	supervised := report != nil
	if spec.Foreground {
		defer takeTerminal(cmd.SysProcAttr, spec.Stdin)()
	}

	began := time.Now()
	err = cmd.Start()
	if supervised {
		report.started(err == nil)
	}
	if err != nil {
		return res, fmt.Errorf("proc: start %s: %w", spec.describe(), err)
	}
	pid := cmd.Process.Pid

	exited := make(chan struct{})
	stopperDone := make(chan bool, 1)
	go func() {
		stopperDone <- stopOnCancel(ctx, pid, grace, spec.KillTree || supervised, supervised, exited)
	}()
	// Whatever happens below, the child is reaped and the stopper ends before Run returns.
	finished := false
	defer func() {
		if !finished {
			if supervised {
				_ = killTreeOf(pid)
			}
			_ = KillGroup(pid, syscall.SIGKILL)
			close(exited)
			<-stopperDone
			_ = cmd.Wait()
			if supervised {
				report.result()
			}
		}
	}()

	if spec.OnStart != nil {
		spec.OnStart(pid)
	}

	waited := waitExited(pid)
	var waitErr error
	reaped := false
	if !waited && !waitsUnreaped {
		// The child cannot be waited for here without reaping it: reap it while the stopper still
		// watches ctx, so that a cancellation still stops it.
		waitErr, reaped = cmd.Wait(), true
	}
	res.Wall = time.Since(began)
	res.Cancelled = ctx.Err() != nil
	close(exited)
	if <-stopperDone {
		res.Cancelled = true
	}
	if waited {
		// The child is a zombie: its pid, and so its group id, is still reserved.
		_ = KillGroup(pid, syscall.SIGKILL)
	}
	finished = true
	if !reaped {
		waitErr = cmd.Wait()
	}
	if !waited && hasProcessGroups {
		_ = KillGroup(pid, syscall.SIGKILL)
	}
	return spec.result(res, cmd, report, pid, waitErr)
}

// result completes res from the reaped child's state and its supervisor's report (nil when not
// supervised), and says what went wrong with the wait, if anything.
func (s Spec) result(res Result, cmd *exec.Cmd, report *reportPipe, pid int, waitErr error) (Result, error) {
	res.fill(cmd.ProcessState)
	if report != nil {
		// The supervisor has exited, so its report is whole; without one (it was killed), the
		// supervisor's own status stands.
		if rep, ok := report.result(); ok {
			if rep.Err != "" {
				res.ExitCode = -1
				return res, fmt.Errorf("proc: start %s: %s", s.describe(), rep.Err)
			}
			res.fillReport(rep)
		}
	}

	var exitErr *exec.ExitError
	switch {
	case waitErr == nil, errors.As(waitErr, &exitErr):
		return res, nil
	case errors.Is(waitErr, exec.ErrWaitDelay):
		res.OutputCut = true
		return res, nil
	case cmd.ProcessState == nil:
		return res, fmt.Errorf("proc: wait for %s (pid %d): %w", s.describe(), pid, waitErr)
	default:
		return res, fmt.Errorf("proc: output of %s (pid %d): %w", s.describe(), pid, waitErr)
	}
}

// stopOnCancel waits for ctx to end or for exited to close. On ctx's end it sends SIGTERM to the
// group, waits grace (cut short by a hard stop), then SIGKILL (to the whole tree when killTree).
// A supervisor is given a moment to reap its tree and report before it is killed itself. It
// reports whether it signalled.
func stopOnCancel(ctx context.Context, pid int, grace time.Duration, killTree, supervised bool, exited <-chan struct{}) bool {
	select {
	case <-exited:
		return false
	case <-ctx.Done():
	}
	hard := hardStopOf(ctx)
	if grace > 0 && !isClosed(hard) {
		// A supervisor is alone in its group: it passes these on to the child's group.
		_ = KillGroup(pid, syscall.SIGTERM)
		resumeGroup(pid)
		timer := time.NewTimer(grace)
		defer timer.Stop()
		select {
		case <-exited:
			return true
		case <-timer.C:
		case <-hard:
		}
	}
	if killTree {
		_ = killTreeOf(pid)
	}
	if supervised {
		wait := time.NewTimer(supervisorExitWait)
		defer wait.Stop()
		select {
		case <-exited:
			return true
		case <-wait.C:
		}
	}
	_ = KillGroup(pid, syscall.SIGKILL)
	return true
}

func (s Spec) grace() time.Duration {
	switch {
	case s.Grace == 0:
		return DefaultGrace
	case s.Grace < 0:
		return 0
	}
	return s.Grace
}

// describe names the child in error messages.
func (s Spec) describe() string {
	if s.Shell != "" {
		const maxLen = 60
		for i := range s.Shell { // cut on a rune boundary
			if i >= maxLen {
				return fmt.Sprintf("sh -c %q", s.Shell[:i]+"…")
			}
		}
		return fmt.Sprintf("sh -c %q", s.Shell)
	}
	return fmt.Sprintf("%q", s.Path)
}

// command is the child's command, or its supervisor's with the pipe of its report.
func (s Spec) command(grace time.Duration) (*exec.Cmd, *reportPipe, error) {
	var cmd *exec.Cmd
	var report *reportPipe
	extraFiles := s.ExtraFiles
	switch {
	case s.Supervisor != nil && supervisorSupported:
		argv, err := s.supervisedArgv()
		if err != nil {
			return nil, nil, err
		}
		if report, err = newReportPipe(); err != nil {
			return nil, nil, err
		}
		// The child's extra files keep their numbers; the report comes after them.
		cmd = s.Supervisor.command(3+len(s.ExtraFiles), argv)
		extraFiles = append(slices.Clip(s.ExtraFiles), report.w)
	case s.Shell != "":
		var err error
		if cmd, err = shellCommand(s.Shell); err != nil {
			return nil, nil, err
		}
	default:
		cmd = exec.Command(s.Path, s.Args...)
		if s.Name != "" {
			cmd.Args[0] = s.Name
		}
	}
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Stdin = s.Stdin
	cmd.Stdout, cmd.Stderr = pipedWriters(s.Stdout, s.Stderr)
	cmd.ExtraFiles = extraFiles
	cmd.SysProcAttr = newGroupAttr()
	setParentDeathSignal(cmd.SysProcAttr, s.ParentDeathSignal)
	if report != nil {
		superviseAttr(cmd.SysProcAttr)
		if s.Supervisor.Attr != nil {
			s.Supervisor.Attr(cmd.SysProcAttr)
		}
	}
	// Without a Context on the Cmd, WaitDelay only bounds the copying of output after the child
	// exited: a process that escaped the group and holds the pipes cannot hang Run.
	cmd.WaitDelay = max(grace, 100*time.Millisecond)
	return cmd, report, nil
}

// pipedWriters hides *os.File writers behind a plain io.Writer so that os/exec pipes them instead
// of handing the file to the child, keeping one writer shared when both streams go to it.
func pipedWriters(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	same := stdout != nil && sameWriter(stdout, stderr)
	stdout = hideFile(stdout)
	if same {
		return stdout, stdout
	}
	return stdout, hideFile(stderr)
}

type plainWriter struct{ io.Writer }

func hideFile(w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		return plainWriter{f}
	}
	return w
}

// sameWriter compares two writers, which may be of uncomparable dynamic types.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}

func (r *Result) fill(state *os.ProcessState) {
	if state == nil {
		return
	}
	r.ExitCode = state.ExitCode()
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		r.ExitCode = -1
		r.Signal = ws.Signal().String()
	}
	r.fillUsage(state)
}
