package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/vzn/vx/engine/workspace"
)

// fakeVX writes a shell script that stands in for the `vx run` child of runTasks.
func fakeVX(t *testing.T, script string) *Deps {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "vx")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := &Deps{Loader: workspace.NewLoader(workspace.Options{Dir: dir}), Exe: exe,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "FROM_ENVIRON=the server's"}}
	t.Cleanup(func() { d.Close() })
	return d
}

// runTasks answers the message of the child's error event, not what its stderr ends on; a child
// that wrote none is read from its stderr.
func TestRunChildMessage(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"error event", `printf '%s\n' '{"type":"error","message":"the refusal"}' >&3
echo 'vx: something else' >&2
exit 2`, "the refusal"},
		{"no event", `echo 'vx: last words' >&2
echo 'a panic trace' >&2
exit 2`, "last words"},
		// The child starts from Env.Environ, not the process's environment, plus the call's marker.
		{"the environment", `printf '{"type":"error","message":"%s, %s, %s"}\n' "$FROM_ENVIRON" "${HOME-no HOME}" "$(env | grep -c '^VX_MCP_RUN_CALL_')" >&3
exit 2`, "the server's, no HOME, 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := fakeVX(t, tc.script)
			ans, err := d.runChild(context.Background(), t.TempDir(), &runTasksArgs{taskSelectionArgs: taskSelectionArgs{All: true}}, nil,
				func(float64, float64, string) {})
			if err != nil || ans.ExitCode != 2 || ans.Summary != nil || ans.Error != tc.want {
				t.Fatalf("answer %+v, %v; want exit code 2 and error %q", ans, err, tc.want)
			}
		})
	}
}
