package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/vxerr"
)

// isAwaitRun reports whether vx was started as `vx __await-run FD`.
func isAwaitRun(args []string) bool {
	return len(args) == 3 && args[1] == handoff.AwaitRunArg
}

// maxRunOrder bounds what an awaiting vx reads of its order.
const maxRunOrder = 1 << 20

// awaitRun is `vx __await-run FD`, the `vx run` child of vx mcp's runTasks started before the
// server knows what it will run: it loads the workspace of its folder, then reads its order from
// file descriptor FD (handoff.Order, one JSON document; none, when the server closes the pipe
// or stops it, and it ends with 0), adds the order's variables to its environment and runs the
// order's command line as vx does. The server keeps one started ahead of the next call, which
// then costs neither the start of vx nor the evaluation of its config; the load the run does
// again only checks that the config's files stat as they did.
func (a *app) awaitRun(ctx context.Context, fdArg string) int {
	fd, err := strconv.Atoi(fdArg)
	if err != nil || fd < 3 {
		fmt.Fprintf(a.stderr, "vx: %s %q: want a file descriptor above 2\n", handoff.AwaitRunArg, fdArg)
		return vxerr.ExitUsage
	}
	order, err := a.readRunOrder(ctx, fd)
	if err != nil {
		fmt.Fprintf(a.stderr, "vx: %v\n", err)
		return vxerr.ExitUsage
	}
	if order == nil {
		return vxerr.ExitOK
	}
	a.order = order
	for _, kv := range order.Env {
		name, value, _ := strings.Cut(kv, "=")
		if err := os.Setenv(name, value); err != nil {
			fmt.Fprintf(a.stderr, "vx: %s: %v\n", handoff.AwaitRunArg, err)
			return vxerr.ExitUsage
		}
	}
	return a.execute(ctx, order.Args)
}

// recordedArgs answers the command line a run records (vx last --list): a terminal's
// as it was typed; an ordered run's (a runTasks call's) without what the server adds for itself
// (--format json, --events-fd, --handoff-fd), which leaves the call's selection.
func (a *app) recordedArgs() []string {
	if a.order == nil {
		return os.Args[1:]
	}
	args := make([]string, 0, len(a.order.Args))
	for i := 0; i < len(a.order.Args); i++ {
		arg := a.order.Args[i]
		switch {
		case arg == "--":
			return append(args, a.order.Args[i:]...)
		case arg == "--format" || arg == "--events-fd" || arg == "--handoff-fd":
			i++ // and its value
		case strings.HasPrefix(arg, "--format=") || strings.HasPrefix(arg, "--events-fd=") || strings.HasPrefix(arg, "--handoff-fd="):
		default:
			args = append(args, arg)
		}
	}
	return args
}

// readRunOrder loads the workspace, then reads the order from fd; nil when the pipe closed empty
// or ctx ended first (the server stopped the child).
func (a *app) readRunOrder(ctx context.Context, fd int) (*handoff.Order, error) {
	// Non-blocking, so that the read below is the runtime poller's, which closing the file
	// interrupts.
	if err := setNonblock(fd); err != nil {
		return nil, fmt.Errorf("%s %d: %w", handoff.AwaitRunArg, fd, err)
	}
	f, err := inheritedFile(handoff.AwaitRunArg, fd)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	// What the run would load first; its error is the run's to say, when it loads again.
	_, _ = a.load(ctx)
	data, err := io.ReadAll(io.LimitReader(f, maxRunOrder+1))
	switch {
	case ctx.Err() != nil, len(data) == 0 && (err == nil || errors.Is(err, os.ErrClosed)):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%s: read the order: %w", handoff.AwaitRunArg, err)
	case len(data) > maxRunOrder:
		return nil, fmt.Errorf("%s: an order longer than %d bytes", handoff.AwaitRunArg, maxRunOrder)
	}
	var order handoff.Order
	if err := json.Unmarshal(data, &order); err != nil || len(order.Args) == 0 {
		return nil, fmt.Errorf("%s: not an order: %.80q", handoff.AwaitRunArg, data)
	}
	return &order, nil
}
