package main

import (
	"context"
	"crypto/subtle"
	"fmt"
	"io"
	"os"

	"github.com/rs/zerolog"

	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/runner"
)

// readHandoff reads the hand-off vx mcp wrote to r for a run in root and stateDir, and answers
// it when the run may take it: nil (and the run asks the watcher, or scans) when none came, it is
// of another workspace, or it is refused (handoffAllowed).
func (a *app) readHandoff(ctx context.Context, r io.Reader, root, stateDir string) *handoff.Handoff {
	region := profilerec.StartBackground(ctx, "read the hand-off")
	h, err := handoff.Read(r)
	region.End()
	switch {
	case err != nil:
		a.log.Debug().Err(err).Msg("file state: no hand-off")
	case !a.handoffAllowed(h):
	case h.Root != root || h.StateDir != stateDir:
		a.log.Debug().Str("root", h.Root).Msg("file state: a hand-off of another workspace")
	case h.Files == nil:
		a.log.Debug().Int("keys", len(h.Keys)).Int("intact", len(h.Intact)).Msg("file state: keys handed over, no file state")
		return h
	default:
		a.log.Debug().Int("folders", h.Files.Dirs()).Int("keys", len(h.Keys)).Int("intact", len(h.Intact)).Msg("file state: handed over")
		return h
	}
	return nil
}

// handoffAllowed reports whether this run may take the hand-off h: only when vx mcp ordered it
// (awaitRun) and h carries its order's key, a secret the server made for this child and sent
// down the order's pipe alone. Anything else (a `vx run --handoff-fd` that any process started,
// a hand-off without the key) is refused on stderr, and the run goes on as a plain vx run.
func (a *app) handoffAllowed(h *handoff.Handoff) bool {
	var why string
	switch {
	case a.order == nil || a.order.Key == "":
		why = "this run was not ordered by a vx mcp, the only one that hands over"
	case subtle.ConstantTimeCompare([]byte(h.Key), []byte(a.order.Key)) != 1:
		why = "it does not carry the key of this run's order"
	default:
		return true
	}
	fmt.Fprintf(a.stderr, "vx: --handoff-fd: refused the hand-off: %s; the run hashes every task\n", why)
	return false
}

// handed answers what was handed over for a run of opts (the keys, what the server knew of the
// index for them, the hits it found in place), when the run's file state is the hand-off's and
// its stamp (handoff.Stamp of its workspace, tasks and environment) is the one they were made
// with; else nil, and the run hashes every task. stale says that an output of a hit the server
// found in place is no longer as it saw it (handoff.StaleIntact): the hand-off's file state is
// older than the disk, and the run scans.
func (q *fileStateAsk) handed(opts runner.Options, log *zerolog.Logger) (known *handoff.Known, stale bool) {
	if q == nil || q.handoff == nil || opts.Files == nil || opts.Files != q.answer {
		return nil, false
	}
	if handoff.Stamp(opts.Workspace, opts.TaskIDs, os.Environ()) != q.handoff.Stamp {
		log.Debug().Msg("file state: the handed keys are of another config, selection or environment: hashing")
		return nil, false
	}
	if id := handoff.StaleIntact(opts.Workspace, q.handoff.Intact); id != "" {
		log.Debug().Str("task", id).Msg("file state: outputs changed since vx mcp found them in place: scanning")
		return nil, true
	}
	log.Debug().Int("keys", len(q.handoff.Keys)).Bool("index", q.handoff.Index != nil).Msg("file state: taking the keys handed over")
	return &q.handoff.Known, false
}
