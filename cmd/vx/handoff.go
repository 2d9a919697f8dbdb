package main

import (
	"crypto/subtle"
	"fmt"

	"github.com/vzn/vx/engine/runner"
)

// handoffAllowed reports whether this run may take the hand-off h: only when vx mcp ordered it
// (awaitRun) and h carries its order's key, a secret the server made for this child and sent
// down the order's pipe alone. Anything else (a `vx run --handoff-fd` that any process started,
// a hand-off without the key) is refused on stderr, and the run goes on as a plain vx run.
func (a *app) handoffAllowed(h *runner.Handoff) bool {
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
