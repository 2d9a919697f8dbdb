// Package executor runs one task's command: it prepares it (the sandbox that confines it), runs
// it, collects its log and its outputs, reports what it used (wall time, CPU, peak memory), and
// checks that the inputs its key was made from are still the files it read. The runner decides
// what runs when and what is cached; an Executor decides where and how one command runs. Local
// is today's: a child process on this machine, under proc's supervision. A remote executor
// (REAPI) implements the same interface, running the command elsewhere from the same Task.
package executor

import (
	"context"
	"io"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/proc"
)

// Executor runs one task's command to its end.
type Executor interface {
	// Run prepares, runs and collects one task. A non-zero exit, a timeout or a cancellation is
	// a Result, not an error; the error says that the command could not be run as asked: a
	// *Refusal when its preparation refused it (nothing ran), anything else when it could not be
	// started or its output not read (the Result then holds what is known).
	Run(ctx context.Context, t Task) (Result, error)
}

// ExecFunc starts one child process and waits for it; proc.Run is the real one, and the
// runner's callers pass another to supervise each child (vx run under a supervisor of its own).
type ExecFunc func(ctx context.Context, spec proc.Spec) (proc.Result, error)

// Spec is the local process spec that Task.Confine readies: proc's, so that the runner's sandbox
// hook names the spec through the executor that runs it.
type Spec = proc.Spec

// Task is everything an executor needs to run one task's command, resolved by the runner: the
// same value whether the command runs here or elsewhere.
type Task struct {
	// ID is the task's id (project#task), for messages.
	ID string
	// Command is the shell command, run as `sh -c Command`.
	Command string
	// Dir is the absolute working folder: the task's project folder.
	Dir string
	// Root is the absolute workspace root; Dir lies in it.
	Root string
	// Env is the command's whole environment (its declared variables, exec.env, secrets and the
	// fixed base), as name=value.
	Env []string
	// Sandbox is the sandbox policy the task runs under (its declared one, or the agent's
	// confinement), nil for none. An executor that confines by itself enforces it; Local leaves
	// that to Confine.
	Sandbox *graph.Sandbox
	// Inputs and Outputs are the task's declared input and output globs, relative to Dir
	// ("//"-prefixed from Root); nil Inputs means every file of the project git shows.
	Inputs, Outputs []string
	// Timeout bounds the command; 0 for none. Grace is the delay between the stop signal and
	// the kill; 0 means proc's default.
	Timeout, Grace time.Duration
	// Output receives what the command prints (stdout and stderr, one stream) as it comes, and
	// keeps its log.
	Output LogWriter
	// Confine, when set, makes a local process spec run under the task's sandbox (the runner's
	// enforcement of Sandbox on this machine); a *Refusal from it ends the run before anything
	// starts.
	Confine func(spec *Spec) error
	// Started, when set, is called just before the command starts: from then on the task may
	// write anywhere it is allowed to.
	Started func()
	// CheckInputs, when set, is asked once a command has exited 0: it answers the input files
	// that changed while the command ran (none when its key still describes them).
	CheckInputs func(ctx context.Context) ([]string, error)
	// Stdin, when set, is the command's standard input (an interactive task's: vx's own), and
	// a terminal there is handed to the command while it runs; nil gives it none (/dev/null).
	Stdin io.Reader
	// DeclaredEnv is the task's declared environment by name (its env and exec.env values, its
	// secrets), without the fixed base: what a remote executor sends, with its own PATH and HOME.
	DeclaredEnv map[string]string
	// InputFiles are the files the task's key was made from, slash-separated and relative to
	// Root: a remote executor's input root.
	InputFiles []string
	// Written is the task's command as its config writes it, where Command is what vx runs for
	// it here (a package script's text, run without its manager, with this machine's paths): a
	// remote executor sends Written, for the worker's own package manager to run. "" means Command.
	Written string
	// Grafted are the outputs of the tasks it depends on, by digest from their cache entries'
	// listings (paths relative to Root): a remote executor's input root holds them without reading
	// the workspace. A file's blob is in the local blob store, or at the workspace path it names
	// when Source is set, or else held by the engine only (an output that stayed remote).
	Grafted []GraftedInput
	// KeepOutputsRemote says that a remote command's outputs are not brought into the local blob
	// store: Result.RemoteOutputs names them by digest, their blobs stay in the engine's CAS.
	KeepOutputsRemote bool
}

// GraftedInput is one upstream output of a remote input root: the output by digest, and where
// its content is when the engine lacks it (Source, an absolute path; "" for the local blob store
// or, failing that, none).
type GraftedInput struct {
	RemoteOutput
	Source string
}

// Result is what running one task's command came to.
type Result struct {
	// ExitCode is the command's exit status; -1 when a signal ended it or it never started.
	ExitCode int
	// Signal names the signal that ended the command; "" when it exited.
	Signal string
	// Cancelled says that the command was stopped before it ended on its own: by ctx, or by
	// Task.Timeout (then TimedOut is set too).
	Cancelled, TimedOut bool
	// Usage is what the command used.
	Usage Usage
	// Log is what the command printed, as Task.Output kept it (unmasked).
	Log []byte
	// OutputsDir is the absolute folder holding the outputs the command made, which the cache
	// archives from there: Task.Dir for a local run; an executor that runs elsewhere fetches
	// them into it.
	OutputsDir string
	// Inputs is the verdict of Task.CheckInputs.
	Inputs InputCheck
	// Executor names where the command ran (ExecutorLocal or ExecutorRemote) when a Chooser ran it; "" else.
	Executor string
	// RemoteOutputs are the outputs a remote command made, by content digest, already in the
	// local blob store the executor was given: the cache makes its entry of them and restores it
	// into the workspace through its checked restore. Nil for a local run (OutputsDir holds them).
	RemoteOutputs []RemoteOutput
}

// RemoteOutput is one output a remote command made: a file (its content's SHA-256 and size,
// executable or not) or, with Link set, a symbolic link. Path is slash-separated and relative to
// the workspace root.
type RemoteOutput struct {
	Path       string
	Hash       string
	Size       int64
	Executable bool
	Link       string
}

// Passed reports whether the command exited 0 on its own.
func (r Result) Passed() bool { return !r.Cancelled && r.Signal == "" && r.ExitCode == 0 }

// LogWriter receives a command's output as it comes and keeps its log.
type LogWriter interface {
	io.Writer
	// Log ends the output (a last line without a newline is shown) and answers what was kept.
	// It is called once, after the command ended.
	Log() []byte
}

// Usage is what a command used: its wall time, its CPU time (with the descendants it waited
// for), and its peak resident memory.
type Usage struct {
	Wall, UserCPU, SysCPU time.Duration
	PeakRSSBytes          int64
}

// InputCheck is the verdict on a task's inputs after its command passed.
type InputCheck struct {
	// Checked says that Task.CheckInputs was asked (the command passed and it was set).
	Checked bool
	// Changed lists the input files that changed while the command ran, as its inputs name
	// them; none when its key still describes them.
	Changed []string
	// Err says that the inputs could not be looked at again: the key cannot be vouched for.
	Err error
}

// Moved reports whether the outputs are not what the key describes: an input changed, or the
// check could not be made.
func (c InputCheck) Moved() bool { return c.Err != nil || len(c.Changed) > 0 }

// Refusal is the error of a task its preparation refused to run (a sandbox the host cannot
// enforce): nothing ran. Message is the line (or lines) to show, newline-terminated.
type Refusal struct {
	Message string
}

func (r *Refusal) Error() string { return r.Message }
