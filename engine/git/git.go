// Package git runs git for the engine (affected files, status, default inputs) through proc, the
// one supervisor of every child vx starts.
package git

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/vzn/vx/engine/counters"
	"github.com/vzn/vx/proc"
)

// Run runs git with args in dir and returns its stdout; a non-zero exit is an error carrying
// git's own message. Each call counts as a process spawned (counters.From(ctx)).
func Run(ctx context.Context, dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	counters.From(ctx).Spawn()
	res, err := proc.Run(ctx, proc.Spec{
		Path: "git", Args: args, Dir: dir,
		Env:    append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"),
		Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	if res.ExitCode != 0 {
		return "", fmt.Errorf("git %s: exit %d: %s", strings.Join(args, " "), res.ExitCode, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
