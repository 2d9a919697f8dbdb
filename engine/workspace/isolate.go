package workspace

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vzn/vx/engine/config"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/proc"
)

// EvalConfigArg is the first argument of the hidden verb that evaluates a workspace's config in a
// child process (see Isolation and ServeEval).
const EvalConfigArg = "__eval-config"

// Isolation says how a Loader evaluates config in a child process of its own, where the bounds on
// its time and memory hold whatever the config does: native code inside the JavaScript runtime
// (JSON.stringify of a shared-reference graph, Array.from of a huge length) neither checks for
// interrupts nor allocates where an in-process sampler sees it in time. The child is this
// program started with EvalConfigArg; it runs everything that runs config JavaScript (bundling,
// the configs, plugin stages) and answers the resolved workspace.
type Isolation struct {
	// Path is the program to start; on Linux "/proc/self/exe" names vx's own binary.
	Path string
	// Name is the child's argv[0]; "" means Path.
	Name string
	// Timeout bounds each step of the evaluation (a bundle, a config's run, a plugin stage); zero
	// means config.DefaultTimeout.
	Timeout time.Duration
	// MemoryLimit bounds the child's memory, in bytes; zero means config.DefaultMemoryLimit.
	MemoryLimit uint64
	// noCgroup leaves the memory cgroup out even where one can be made, unjoinable hands the
	// child a cgroup it cannot join, and alwaysChild evaluates a config that is only data in the
	// child too (tests of the other way).
	noCgroup, unjoinable, alwaysChild bool
}

// stepSlack is how long past its timeout a step may run before the parent kills the child: the
// child's own interrupt, which names the config's position, comes first when it can.
const stepSlack = time.Second

// discoveryBound bounds, in steps' time, the search for project folders: work of vx's own over
// the workspace's folders, not config JavaScript, which a large repository may need more than one
// step's time for.
const discoveryBound = 12

// discoveryMark is the step mark that starts the search for project folders.
const discoveryMark = "\x00discovery"

// maxReplyShare is the part of the memory limit a child's answer may take: the parent holds it.
const maxReplyShare = 4

func (iso *Isolation) timeout() time.Duration {
	if iso.Timeout > 0 {
		return iso.Timeout
	}
	return config.DefaultTimeout
}

func (iso *Isolation) memoryLimit() uint64 {
	if iso.MemoryLimit > 0 {
		return iso.MemoryLimit
	}
	return config.DefaultMemoryLimit
}

// evalRequest is what the parent asks of the child, on its stdin.
type evalRequest struct {
	Root, CacheDir, Version string
	// Skip are project folders left out (a partial load, see LoadPartial).
	Skip        []string
	Timeout     time.Duration
	MemoryLimit uint64
	// Cgroup is the cgroup.procs file of the memory cgroup the child joins before anything else;
	// "" when there is none.
	Cgroup string
	// AddressSpace, when not zero, is how far past its address space at start the child lets the
	// kernel grow it (RLIMIT_AS), set before anything else when it has no cgroup to join (none
	// was made, or joining it failed).
	AddressSpace uint64
}

// evalOutcome is the child's answer, on its stdout: an error, or (Err nil) the loaded workspace
// after it in the form resolved.gob keeps.
type evalOutcome struct {
	Err *evalError
	// SecretNames are the secrets met before the error, for masking it.
	SecretNames []string
}

// evalError is a load error across the process boundary, keeping its kind.
type evalError struct {
	Kind      string // "config", "usage" or "other"
	File      string
	Line, Col int
	Msg       string
}

func toEvalError(err error) *evalError {
	var ce *vxerr.ConfigError
	if errors.As(err, &ce) {
		return &evalError{Kind: "config", File: ce.File, Line: ce.Line, Col: ce.Col, Msg: ce.Msg}
	}
	var ue *vxerr.UsageError
	if errors.As(err, &ue) {
		return &evalError{Kind: "usage", Msg: ue.Msg}
	}
	return &evalError{Kind: "other", Msg: err.Error()}
}

func (e *evalError) err() error {
	switch e.Kind {
	case "config":
		return &vxerr.ConfigError{File: e.File, Line: e.Line, Col: e.Col, Msg: e.Msg}
	case "usage":
		return &vxerr.UsageError{Msg: e.Msg}
	}
	return errors.New(e.Msg)
}

// evalChild is one run of the child: what it reported while it ran, and how it ended.
type evalChild struct {
	iso   *Isolation
	reply cappedBuffer
	// stderr keeps the start and the end of the child's stderr: the runtime's own last words.
	stderr headTail
	// lastStep is the file of the last step the child began, for a limit error.
	lastStep string
	// overran is set when a step ran past its deadline and the parent killed the child;
	// overranDiscovery when that step was the search for project folders.
	overran, overranDiscovery bool
	mu                        sync.Mutex
}

// evalIsolated runs the evaluation in a child process and answers what it loaded, or its one
// error: the config's own, or a limit's, naming it. secretNames are those met before an error.
func (l *Loader) evalIsolated(ctx context.Context, root, cacheDir string, skip map[string]bool) (c *loaded, secretNames []string, err error) {
	iso := l.opts.Isolate
	req := evalRequest{Root: root, CacheDir: cacheDir, Version: l.opts.Version, Timeout: iso.timeout(), MemoryLimit: iso.memoryLimit()}
	for d := range skip {
		req.Skip = append(req.Skip, d)
	}
	var cg *memoryCgroup
	if !iso.noCgroup {
		cg = newMemoryCgroup(req.MemoryLimit)
	}
	if cg != nil {
		defer cg.remove()
		req.Cgroup = cg.procsFile()
	}
	if iso.unjoinable {
		req.Cgroup = filepath.Join(os.TempDir(), "vx-no-such-cgroup", "cgroup.procs")
	}
	if !raceEnabled {
		req.AddressSpace = req.MemoryLimit
	}
	ch := &evalChild{iso: iso, reply: cappedBuffer{limit: int(req.MemoryLimit / maxReplyShare)}, stderr: headTail{limit: 4 << 10}}
	res, runErr := ch.run(ctx, req, l.opts.Console)
	if runErr != nil {
		return nil, nil, fmt.Errorf("evaluate config in a child process: %w", runErr)
	}
	return ch.answer(ctx, res, cg, root, l.opts.Version)
}

// run starts the child and waits for it, killing its process group when a step overruns.
func (ch *evalChild) run(ctx context.Context, req evalRequest, console io.Writer) (proc.Result, error) {
	var stdin bytes.Buffer
	if err := gob.NewEncoder(&stdin).Encode(&req); err != nil {
		return proc.Result{}, fmt.Errorf("encode request: %w", err)
	}
	consoleR, consoleW, err := os.Pipe()
	if err != nil {
		return proc.Result{}, err
	}
	stepsR, stepsW, err := os.Pipe()
	if err != nil {
		consoleR.Close()
		consoleW.Close()
		return proc.Result{}, err
	}
	runCtx, kill := context.WithCancel(ctx)
	defer kill()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer consoleR.Close()
		if console == nil {
			console = io.Discard
		}
		_, _ = io.Copy(console, consoleR)
	})
	wg.Go(func() {
		defer stepsR.Close()
		ch.watchSteps(stepsR, req.Timeout+stepSlack, kill)
	})
	res, err := proc.Run(runCtx, proc.Spec{
		Path: ch.iso.Path, Name: ch.iso.Name, Args: []string{EvalConfigArg}, Dir: req.Root,
		Stdin: &stdin, Stdout: &ch.reply, Stderr: &ch.stderr,
		ExtraFiles: []*os.File{consoleW, stepsW}, Grace: -1, ParentDeathSignal: syscall.SIGKILL,
	})
	// The child is gone and its group killed: closing the write ends lets both readers end.
	consoleW.Close()
	stepsW.Close()
	wg.Wait()
	return res, err
}

// watchSteps reads the child's step marks and kills it when one step (or the gap between two)
// lasts longer than perStep. It ends when the child closed the steps pipe.
func (ch *evalChild) watchSteps(r io.Reader, perStep time.Duration, kill func()) {
	marks := make(chan string)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			marks <- sc.Text()
		}
		close(marks)
	}()
	defer func() { <-done }()
	deadline := time.NewTimer(perStep)
	defer deadline.Stop()
	discovering := false
	for {
		select {
		case m, ok := <-marks:
			if !ok {
				return
			}
			ch.mu.Lock()
			discovering = m == discoveryMark
			if !discovering {
				ch.lastStep = m
			}
			ch.mu.Unlock()
			if discovering {
				deadline.Reset(discoveryBound * perStep)
			} else {
				deadline.Reset(perStep)
			}
		case <-deadline.C:
			ch.mu.Lock()
			ch.overran, ch.overranDiscovery = true, discovering
			ch.mu.Unlock()
			kill()
			// Drain the marks until the dead child's pipe closes.
			for range marks {
			}
			return
		}
	}
}

// answer reads the child's reply, or says which limit ended it.
func (ch *evalChild) answer(ctx context.Context, res proc.Result, cg *memoryCgroup, root, version string) (*loaded, []string, error) {
	ch.mu.Lock()
	overran, discovering, step := ch.overran, ch.overranDiscovery, ch.lastStep
	ch.mu.Unlock()
	limitErr := func(msg string) error { return &vxerr.ConfigError{File: step, Msg: msg} }
	switch {
	case overran && discovering:
		return nil, nil, limitErr(fmt.Sprintf("finding the project folders took longer than %s and was stopped", discoveryBound*ch.iso.timeout()))
	case overran:
		return nil, nil, limitErr(fmt.Sprintf("config evaluation ran longer than %s and was stopped", ch.iso.timeout()))
	case cg != nil && cg.oomKilled(), res.ExitCode != 0 && ch.stderr.outOfMemory():
		return nil, nil, limitErr(fmt.Sprintf("config evaluation used more than %s and was stopped", formatBytes(ch.iso.memoryLimit())))
	case res.Cancelled && ctx.Err() != nil:
		return nil, nil, fmt.Errorf("evaluate config: %w", ctx.Err())
	case ch.reply.overflow:
		return nil, nil, limitErr(fmt.Sprintf("config evaluation answered more than %s and was refused", formatBytes(uint64(ch.reply.limit))))
	}
	dec := gob.NewDecoder(bytes.NewReader(ch.reply.buf.Bytes()))
	var out evalOutcome
	if err := dec.Decode(&out); err != nil {
		return nil, nil, ch.died(res)
	}
	if out.Err != nil {
		return nil, out.SecretNames, out.Err.err()
	}
	c, err := decodeLoaded(dec)
	if err != nil || c.Root != root || c.Version != version+"/"+resolvedFormat {
		return nil, nil, ch.died(res)
	}
	c.Version = version
	c.WS.Index()
	return c, nil, nil
}

// died describes a child that ended without an answer and not through a limit.
func (ch *evalChild) died(res proc.Result) error {
	how := fmt.Sprintf("exit status %d", res.ExitCode)
	if res.Signal != "" {
		how = "signal: " + res.Signal
	}
	last, _, _ := strings.Cut(strings.TrimSpace(string(ch.stderr.head)), "\n")
	if last != "" {
		how += ": " + last
	}
	return &vxerr.ConfigError{Msg: "config evaluation ended without an answer (" + how + ")"}
}

// formatBytes renders a limit as people write it: 1 GiB, 64 MiB, 1500 bytes.
func formatBytes(n uint64) string {
	for _, u := range []struct {
		size uint64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// cappedBuffer keeps what is written up to limit bytes and drops the rest, noting it: a writer
// that failed would leave the child blocked on a full pipe.
type cappedBuffer struct {
	buf      bytes.Buffer
	limit    int
	overflow bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.buf.Len()+len(p) > b.limit {
		b.overflow = true
		return len(p), nil
	}
	return b.buf.Write(p)
}

// headTail keeps the first and the last limit bytes written to it.
type headTail struct {
	head, tail []byte
	limit      int
}

func (h *headTail) Write(p []byte) (int, error) {
	n := len(p)
	if room := h.limit - len(h.head); room > 0 {
		take := min(room, len(p))
		h.head, p = append(h.head, p[:take]...), p[take:]
	}
	h.tail = append(h.tail, p...)
	if over := len(h.tail) - h.limit; over > 0 {
		h.tail = append(h.tail[:0], h.tail[over:]...)
	}
	return n, nil
}

// outOfMemory reports whether the Go runtime said it ran out of memory (under RLIMIT_AS an
// allocation fails, and the runtime ends the process saying so).
func (h *headTail) outOfMemory() bool {
	for _, part := range [][]byte{h.head, h.tail} {
		if bytes.Contains(part, []byte("out of memory")) || bytes.Contains(part, []byte("cannot allocate memory")) {
			return true
		}
	}
	return false
}
