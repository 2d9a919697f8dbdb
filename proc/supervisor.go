package proc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// SuperviseArg is the first argument that makes a program embedding Supervise run it:
//
//	vx __supervise [--report-fd N] -- PROGRAM [ARGS…]
//
// The program must hand the rest of its arguments to Supervise before doing anything else (vx
// does so at the top of main, before cobra), so that a supervisor starts fast and holds nothing
// of vx.
const SuperviseArg = "__supervise"

// exitSupervisorFailed is Supervise's exit status for its own failures (a bad command line, no
// subreaper), as env(1) and docker use 125; 126 and 127 keep the shell's meaning (the program
// could not be executed, or not found).
const exitSupervisorFailed = 125

// supervisorExitWait bounds how long Run waits, after it killed a supervised child's tree, for the
// supervisor to reap it and report, before it kills the supervisor too.
const supervisorExitWait = time.Second

// maxReportBytes bounds what Run reads of a supervisor's report.
const maxReportBytes = 64 << 10

// Supervisor names the program that Run starts as a supervised child's supervisor: a process of
// its own (one per child) that starts the child and reaps everything it leaves. Only Linux has
// supervisors: elsewhere Run starts the child directly.
//
// The supervisor is a child subreaper (PR_SET_CHILD_SUBREAPER): every descendant of the child that
// is orphaned (a double fork, setsid, nohup, an intermediate process that died) is re-parented to
// it, whatever its session, group or environment. It starts the child in a process group of its
// own and forwards SIGTERM, SIGINT and SIGQUIT to that group. When the child exits it kills
// (SIGKILL) whatever is left of the tree and reaps it, then exits with the child's status and
// reports the child's exit status and rusage to Run over a pipe. So when Run returns, the child
// and everything it started are gone. Should vx die, the kernel tells the supervisor
// (PR_SET_PDEATHSIG, SIGHUP), which then kills the whole tree at once.
//
// The supervisor is the last of vx to run before the child's program is executed, so it is where
// a sandbox is applied (proc/sandbox): Args carries its policy, Attr the namespaces the supervisor
// starts in, and SuperviseOptions.Restrict restricts the locked thread that then forks the child.
type Supervisor struct {
	// Path is the executable that runs Supervise when started with SuperviseArg: vx-sandbox, or
	// vx itself. On Linux "/proc/self/exe" names vx's own binary even if its file was replaced
	// since it started.
	Path string
	// Name is the supervisor's argv[0]; "" means Path. A binary that picks what to run by the
	// name it was started under (a test binary standing for vx) needs it.
	Name string
	// Args are options of the supervisor program's own, put after SuperviseArg and before
	// Supervise's: the program peels them off before it hands the rest to SuperviseWith (the
	// sandbox's policy, for proc/sandbox's helper).
	Args []string
	// Attr, when set, adjusts the attributes the supervisor is started with (Linux: new
	// namespaces for it and so for everything it starts).
	Attr func(*syscall.SysProcAttr)
}

// command is the supervisor's command line running argv, its report going to fd reportFD.
func (s *Supervisor) command(reportFD int, argv []string) *exec.Cmd {
	name := s.Name
	if name == "" {
		name = s.Path
	}
	cmd := exec.Command(s.Path)
	cmd.Args = append(append([]string{name, SuperviseArg}, s.Args...), "--report-fd", strconv.Itoa(reportFD), "--")
	cmd.Args = append(cmd.Args, argv...)
	return cmd
}

// SuperviseOptions restrict what a supervisor starts: proc/sandbox's helper applies a task's
// sandbox through them.
type SuperviseOptions struct {
	// Restrict, when set, is called on the locked OS thread that then starts the child, just
	// before it does: what it applies to that thread (Landlock, no_new_privs) the child inherits,
	// and the supervisor's other threads do not. An error fails the start (exit 125, reported).
	Restrict func() error
}

// superviseArgs is Supervise's command line.
type superviseArgs struct {
	reportFD int // 0: no report
	argv     []string
}

func parseSuperviseArgs(args []string) (superviseArgs, error) {
	var sa superviseArgs
	for len(args) > 0 {
		switch arg := args[0]; arg {
		case "--":
			sa.argv = args[1:]
			if len(sa.argv) == 0 {
				return sa, errors.New("no program after --")
			}
			return sa, nil
		case "--report-fd":
			if len(args) < 2 {
				return sa, errors.New("--report-fd needs a file descriptor")
			}
			fd, err := strconv.Atoi(args[1])
			if err != nil || fd < 3 {
				return sa, fmt.Errorf("--report-fd %q: want a file descriptor above 2", args[1])
			}
			sa.reportFD = fd
			args = args[2:]
		default:
			return sa, fmt.Errorf("unknown argument %q (want [--report-fd N] -- PROGRAM [ARGS…])", arg)
		}
	}
	return sa, errors.New("no -- before the program (want [--report-fd N] -- PROGRAM [ARGS…])")
}

// report is what a supervisor tells Run, as one JSON document on its report fd, once the child's
// whole tree is gone.
type report struct {
	// Err says why the child could not be started; nothing else is set then.
	Err string `json:"err,omitempty"`
	// ExitCode is the child's exit status; Signal, when not zero, the signal that killed it.
	ExitCode int `json:"exitCode"`
	Signal   int `json:"signal,omitempty"`
	// The rusage of every process of the tree the supervisor reaped (RUSAGE_CHILDREN): CPU time
	// summed, peak RSS the largest; not the supervisor's own.
	UserCPUNs    int64 `json:"userCpuNs"`
	SysCPUNs     int64 `json:"sysCpuNs"`
	PeakRSSBytes int64 `json:"peakRssBytes"`
}

// status is the supervisor's own exit status: the child's, or 128+signal.
func (r report) status() int {
	switch {
	case r.Err != "":
		return exitSupervisorFailed
	case r.Signal != 0:
		return 128 + r.Signal
	}
	return r.ExitCode
}

func (r report) write(w io.Writer) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// reportPipe is Run's end of a supervisor's report.
type reportPipe struct {
	r, w *os.File // w is the supervisor's end, closed here once it started
	read chan reportRead
}

type reportRead struct {
	rep report
	ok  bool // a whole report was read
}

func newReportPipe() (*reportPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("report pipe: %w", err)
	}
	return &reportPipe{r: r, w: w, read: make(chan reportRead, 1)}, nil
}

// started is called once the supervisor started, or failed to: from then on it holds the only
// write end, so the reader sees EOF when it exits.
func (p *reportPipe) started(ok bool) {
	p.w.Close()
	if !ok {
		p.r.Close()
		close(p.read)
		return
	}
	go func() {
		defer p.r.Close()
		data, err := io.ReadAll(io.LimitReader(p.r, maxReportBytes))
		var rep report
		ok := err == nil && len(data) > 0 && json.Unmarshal(data, &rep) == nil
		p.read <- reportRead{rep: rep, ok: ok}
	}()
}

// result waits for the report, which is there once the supervisor exited.
func (p *reportPipe) result() (report, bool) {
	got := <-p.read
	return got.rep, got.ok
}

// fillReport replaces what Run knows of the supervisor by what it reported of the child.
func (r *Result) fillReport(rep report) {
	r.ExitCode, r.Signal = rep.ExitCode, ""
	if rep.Signal != 0 {
		r.ExitCode, r.Signal = -1, syscall.Signal(rep.Signal).String()
	}
	r.UserCPU = time.Duration(rep.UserCPUNs)
	r.SysCPU = time.Duration(rep.SysCPUNs)
	r.PeakRSSBytes = rep.PeakRSSBytes
}

// supervisedArgv is the command line the supervisor runs for s: a program without a slash is
// looked up here, in vx's PATH, as Run does for an unsupervised child.
func (s Spec) supervisedArgv() ([]string, error) {
	if s.Shell != "" {
		return []string{"/bin/sh", "-c", s.Shell}, nil
	}
	path := s.Path
	if !strings.Contains(path, "/") {
		found, err := exec.LookPath(path)
		if err != nil {
			return nil, err
		}
		path = found
	}
	return append([]string{path}, s.Args...), nil
}
