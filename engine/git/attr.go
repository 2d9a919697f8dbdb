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

// CheckAttr answers the attributes names of each of paths (relative to dir) as
// `git check-attr --stdin -z` gives them, in one git process: path → attribute → value, where a
// value is "set", "unset", "unspecified" or the attribute's text.
func CheckAttr(ctx context.Context, dir string, paths, names []string) (map[string]map[string]string, error) {
	out := make(map[string]map[string]string, len(paths))
	if len(paths) == 0 {
		return out, nil
	}
	var stdin, stdout, stderr bytes.Buffer
	for _, p := range paths {
		stdin.WriteString(p)
		stdin.WriteByte(0)
	}
	args := append([]string{"check-attr", "--stdin", "-z"}, names...)
	counters.From(ctx).Spawn()
	res, err := proc.Run(ctx, proc.Spec{
		Path: "git", Args: args, Dir: dir,
		Env:   append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"),
		Stdin: &stdin, Stdout: &stdout, Stderr: &stderr,
	})
	if err != nil {
		return nil, fmt.Errorf("git check-attr: %w", err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("git check-attr: exit %d: %s", res.ExitCode, strings.TrimSpace(stderr.String()))
	}
	fields := strings.Split(stdout.String(), "\x00")
	if n := len(fields); n > 0 && fields[n-1] == "" {
		fields = fields[:n-1]
	}
	if len(fields)%3 != 0 {
		return nil, fmt.Errorf("git check-attr: %d fields, not triples", len(fields))
	}
	for i := 0; i < len(fields); i += 3 {
		path, name, value := fields[i], fields[i+1], fields[i+2]
		if out[path] == nil {
			out[path] = map[string]string{}
		}
		out[path][name] = value
	}
	return out, nil
}

// Config answers the value of a git config variable in the repository holding dir, "" when it is
// not set.
func Config(ctx context.Context, dir, name string) (string, error) {
	out, err := Run(ctx, dir, "config", "--default", "", "--get", name)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}
