package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// supervisorSupported: Run starts supervised children under their Supervisor.
const supervisorSupported = true

// rescanEvery is how often a supervisor whose child has exited looks again for descendants to
// kill while some are still to be reaped (a process forked while the last scan ran).
const rescanEvery = 100 * time.Millisecond

// SuperviseWith is the supervisor's main: args are what follows SuperviseArg on its command line,
// `[--report-fd N] -- PROGRAM [ARGS…]`, and opts restrict the child (see SuperviseOptions). It
// returns the exit status: the program's, 128+signal when a signal killed it, 125 for the
// supervisor's own failure. See Supervisor for what it does.
//
// It is a process's whole life, not a library call: it makes the process a subreaper, reaps every
// child of it, and handles SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGCHLD until it returns.
func SuperviseWith(args []string, opts SuperviseOptions) int {
	sa, err := parseSuperviseArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vx %s: %v\n", SuperviseArg, err)
		return exitSupervisorFailed
	}
	// What this process inherited is not the child's, but for the descriptors below the report's,
	// which startSupervised passes on by name (clearing their close-on-exec for the child alone).
	if err := CloseInheritedOnExec(); err != nil {
		fmt.Fprintf(os.Stderr, "vx %s: %v\n", SuperviseArg, err)
	}
	var out *os.File
	if sa.reportFD > 0 {
		// The report is Run's alone: the program must not inherit it (nor hold it open).
		syscall.CloseOnExec(sa.reportFD)
		out = os.NewFile(uintptr(sa.reportFD), "report")
	}
	rep := supervise(sa, opts)
	if rep.Err != "" {
		fmt.Fprintf(os.Stderr, "vx %s: %s\n", SuperviseArg, rep.Err)
	}
	if out != nil {
		// Run reads it once this process has exited; should vx be gone, there is no one to tell.
		_ = rep.write(out)
		_ = out.Close()
	}
	return rep.status()
}

// supervise runs sa.argv and everything it starts to their end.
func supervise(sa superviseArgs, opts SuperviseOptions) report {
	if err := BecomeSubreaper(); err != nil {
		return report{Err: err.Error()}
	}
	// Named in ps and top as what it is rather than "exe" (it is started as /proc/self/exe).
	_ = os.WriteFile("/proc/self/comm", []byte("vx-supervise"), 0)
	// It holds the task's environment and vx's report pipe; a task of the same user must not read
	// them through /proc. (After the write above: /proc/self/comm is root's from here on.)
	if err := Undumpable(); err != nil {
		return report{Err: err.Error()}
	}
	parent := WatchParent()
	// Before the child exists, so that neither its end nor a signal for it is missed.
	signals := make(chan os.Signal, 16)
	signal.Notify(signals, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(signals)

	pid, release, err := startRestricted(sa, opts.Restrict)
	defer release()
	if err != nil {
		return report{Err: err.Error()}
	}
	var status syscall.WaitStatus
	exited, left := false, true
	for !exited {
		switch sig := <-signals; sig {
		case syscall.SIGCHLD:
			exited, left = reapChildren(pid, &status)
		default:
			if parent.Died(sig) {
				// vx died (PR_SET_PDEATHSIG): no one will stop the tree, nor wait for it.
				_ = killTreeOf(os.Getpid())
				continue
			}
			_ = syscall.Kill(-pid, sig.(syscall.Signal))
			_ = syscall.Kill(-pid, syscall.SIGCONT) // a stopped group must be able to act on it
		}
	}
	// The child has exited: nothing it started may outlive it. Orphans are all children of this
	// process now, or descendants of them; when none is left, there is nothing to scan for.
	if left {
		_ = killTreeOf(os.Getpid())
		rescan := time.NewTicker(rescanEvery)
		for left {
			select {
			case sig := <-signals:
				if sig == syscall.SIGCHLD {
					_, left = reapChildren(0, nil)
				}
			case <-rescan.C:
				_ = killTreeOf(os.Getpid())
				_, left = reapChildren(0, nil)
			}
		}
		rescan.Stop()
	}
	rep := report{ExitCode: status.ExitStatus()}
	if status.Signaled() {
		rep.ExitCode, rep.Signal = -1, int(status.Signal())
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err == nil {
		rep.UserCPUNs, rep.SysCPUNs, rep.PeakRSSBytes = ru.Utime.Nano(), ru.Stime.Nano(), taskPeakRSS(maxRSSBytes(&ru))
	}
	return rep
}

// startRestricted starts the program as startSupervised does; with restrict, from a thread of its
// own that restrict has restricted first (Landlock applies to the thread that asks, and a child
// inherits what the thread that forked it has), so that the supervisor itself stays unrestricted:
// it must still read /proc, kill and reap whatever the child leaves, and report. That thread lives
// until release is called, once the child is gone: the child's PR_SET_PDEATHSIG fires when the
// thread that forked it ends, not the process.
func startRestricted(sa superviseArgs, restrict func() error) (pid int, release func(), err error) {
	if restrict == nil {
		pid, err = startSupervised(sa)
		return pid, func() {}, err
	}
	type started struct {
		pid int
		err error
	}
	done := make(chan started, 1)
	end := make(chan struct{})
	go func() {
		// Never unlocked: the runtime ends a thread whose goroutine exits locked, so no other
		// goroutine ever runs on the restricted thread.
		runtime.LockOSThread()
		if err := restrict(); err != nil {
			done <- started{err: err}
			return
		}
		pid, err := startSupervised(sa)
		done <- started{pid, err}
		<-end
	}()
	s := <-done
	return s.pid, sync.OnceFunc(func() { close(end) }), s.err
}

// startSupervised starts the program in a process group of its own, with this process's
// environment, folder, standard streams and the fds below the report fd, and no other.
func startSupervised(sa superviseArgs) (int, error) {
	path := sa.argv[0]
	if !strings.Contains(path, "/") {
		found, err := exec.LookPath(path)
		if err != nil {
			return 0, err
		}
		path = found
	}
	files := []uintptr{0, 1, 2}
	for fd := 3; fd < sa.reportFD; fd++ {
		files = append(files, uintptr(fd))
	}
	sys := &syscall.SysProcAttr{
		Setpgid: true,
		// Should this process die first, the child does not run on unsupervised.
		Pdeathsig: syscall.SIGKILL,
	}
	if holdsTerminal(0) {
		// vx handed this process the terminal (Spec.Foreground): the program reads it, so its
		// group takes it on; vx takes it back once this process was reaped.
		sys.Foreground, sys.Ctty = true, 0
	}
	pid, err := syscall.ForkExec(path, sa.argv, &syscall.ProcAttr{
		Env:   os.Environ(),
		Files: files,
		Sys:   sys,
	})
	if err != nil {
		return 0, fmt.Errorf("start %q: %w", path, err)
	}
	return pid, nil
}

// reapChildren reaps every child of this process that has exited, without blocking. It reports
// whether child was among them (its status then in *status) and whether any child is left.
func reapChildren(child int, status *syscall.WaitStatus) (exited, left bool) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.ECHILD):
			return exited, false
		case err != nil, pid == 0:
			return exited, true
		case pid == child:
			exited = true
			*status = ws
		}
	}
}

// superviseAttr sets what a supervisor process needs of the kernel: PR_SET_PDEATHSIG, so that it
// learns of vx's death (Go checks, between fork and exec, that vx is still its parent then). The
// signal is SIGHUP, which vx never sends it otherwise: see Parent.Died.
func superviseAttr(attr *syscall.SysProcAttr) {
	attr.Pdeathsig = syscall.SIGHUP
}

// holdsTerminal reports whether fd is a terminal whose foreground process group is this
// process's own.
func holdsTerminal(fd int) bool {
	pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pgrp == syscall.Getpgrp()
}
