package hasher

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/taskenv"
	"github.com/vzn/vx/proc"
)

// probeMemo holds the answer of each runtime probe a hasher ran: a probe runs once per hasher
// (once per run), whichever task asks first; a run its asker's context cancelled is not kept.
type probeMemo struct {
	mu      sync.Mutex
	answers map[string]*probeAnswer
}

// probeAnswer is one probe's trimmed standard output, or why it failed, once done; mu is held
// while it runs, so that the tasks asking at once wait for one run.
type probeAnswer struct {
	mu   sync.Mutex
	done bool
	out  string
	err  error
}

// maxProbeOutput bounds what a probe may print on each stream: a version, not a log.
const maxProbeOutput = 64 << 10

// runtimeInputs answers the task's runtime probes and the workspace's, command → trimmed output;
// nil when there are none. A probe that fails is an error naming it.
func (h *Hasher) runtimeInputs(ctx context.Context, t *graph.Task) (map[string]string, error) {
	var cmds []string
	if ws := h.opts.Workspace; ws != nil {
		cmds = ws.GlobalRuntimeInputs
	}
	cmds = slices.Concat(cmds, t.RuntimeInputs)
	if len(cmds) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(cmds))
	for _, c := range cmds {
		v, err := h.probe(ctx, c)
		if err != nil {
			return nil, err
		}
		out[c] = v
	}
	return out, nil
}

// probe answers one probe's output, running it the first time it is asked.
func (h *Hasher) probe(ctx context.Context, cmd string) (string, error) {
	h.probes.mu.Lock()
	if h.probes.answers == nil {
		h.probes.answers = map[string]*probeAnswer{}
	}
	a, ok := h.probes.answers[cmd]
	if !ok {
		a = &probeAnswer{}
		h.probes.answers[cmd] = a
	}
	h.probes.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		out, err := h.runProbe(ctx, cmd)
		if ctx.Err() != nil {
			return "", err // the asker's own cancellation: the next asker runs it again
		}
		a.done, a.out, a.err = true, out, err
	}
	return a.out, a.err
}

// runProbe runs cmd through sh in the workspace root, with the environment a task of the
// workspace gets that declares nothing of its own, and answers its standard output trimmed.
func (h *Hasher) runProbe(ctx context.Context, cmd string) (string, error) {
	environ := h.opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	var stdout, stderr boundedBuffer
	counters.From(ctx).Spawn()
	res, err := proc.Run(ctx, proc.Spec{Shell: cmd, Dir: h.opts.Root, Stdout: &stdout, Stderr: &stderr,
		Env: taskenv.Env(h.opts.Workspace, &graph.Task{}, environ, h.opts.Getenv)})
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", fmt.Errorf("runtime input %q: %w", cmd, err)
	case res.Signal != "":
		return "", fmt.Errorf("runtime input %q was killed by %s%s", cmd, res.Signal, firstLine(stderr.Bytes()))
	case res.ExitCode != 0:
		return "", fmt.Errorf("runtime input %q failed with exit code %d%s", cmd, res.ExitCode, firstLine(stderr.Bytes()))
	}
	return strings.TrimSpace(logtext.Plain(stdout.String())), nil
}

// firstLine is ": " and the first non-empty line of a probe's standard error, "" for none.
func firstLine(b []byte) string {
	for line := range strings.SplitSeq(logtext.Plain(string(b)), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return ": " + logtext.Escape(line)
		}
	}
	return ""
}

// boundedBuffer keeps the first maxProbeOutput bytes written to it and drops the rest.
type boundedBuffer struct{ bytes.Buffer }

// Write keeps what fits and reports everything written, so that the child is never blocked.
func (b *boundedBuffer) Write(p []byte) (int, error) {
	if room := maxProbeOutput - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
