package tools

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/workspace"
)

// fakeVX writes a shell script that stands in for the `vx run` child of runTasks: started as
// `vx __await-run 5`, it reads its order (JSON, in $order) and runs script.
func fakeVX(t *testing.T, script string) *Deps {
	t.Helper()
	dir := t.TempDir()
	exe := filepath.Join(dir, "vx")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\norder=$(cat <&5)\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := testDeps(t, session.Options{Loader: workspace.NewLoader(workspace.Options{Dir: dir}), Exe: exe,
		Environ: []string{"PATH=" + os.Getenv("PATH"), "FROM_ENVIRON=the server's"}})
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
		// The child starts from Env.Environ, not the process's environment, and its order adds the
		// call's marker.
		{"the environment", `printf '{"type":"error","message":"%s, %s, %s, %s"}\n' "$FROM_ENVIRON" "${HOME-no HOME}" "$(env | grep -c '^VX_MCP_RUN_CALL_')" \
	"$(printf '%s' "$order" | grep -c '"env":\["VX_MCP_RUN_CALL_[A-Z0-9]*=1"\]')" >&3
exit 2`, "the server's, no HOME, 0, 1"},
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

// runChild takes the child the session kept for the call, or starts one, and has the session
// keep one for the next call; whichever child answers, the call answers its summary, and Close
// leaves none of the children alive. Which child a call takes is engine/session's
// TestChildKeptAhead.
func TestRunChildKeptAhead(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "children.log")
	exe := filepath.Join(dir, "vx")
	script := `#!/bin/sh
echo "started $$" >> ` + log + `
order=$(cat <&5)
[ -n "$order" ] && echo "ordered $$" >> ` + log + `
echo '{"runId":"r","ok":true,"exitCode":0,"status":"ok","tasks":[]}'
`
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	d := testDeps(t, session.Options{Loader: workspace.NewLoader(workspace.Options{Dir: dir}), Exe: exe, KeepChild: true,
		Environ: []string{"PATH=" + os.Getenv("PATH")}})
	for _, root := range []string{t.TempDir(), t.TempDir()} {
		for range 2 {
			ans, err := d.runChild(context.Background(), root, &runTasksArgs{taskSelectionArgs: taskSelectionArgs{All: true}}, nil, nil)
			if err != nil || ans.Summary == nil || ans.Summary.RunID != "r" {
				t.Fatalf("answer %+v, %v", ans, err)
			}
		}
	}
	if err := d.Session.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if ordered := strings.Count(string(data), "ordered "); ordered != 4 {
		t.Fatalf("%d children ordered for 4 calls: %q", ordered, lines)
	}
	for _, l := range lines {
		pid, _ := strconv.Atoi(strings.Fields(l)[1])
		if err := syscall.Kill(pid, 0); err == nil {
			t.Fatalf("child %d is alive after Close: %q", pid, lines)
		}
	}
}

// Each child's order carries a key of its own, which the child's hand-off carries too and which
// neither its command line nor its environment shows: the child takes a hand-off only with its
// order's key (cmd/vx's TestRunRefusesAForgedHandOff).
func TestRunChildHandsItsKey(t *testing.T) {
	d := fakeVX(t, `key=$(printf '%s' "$order" | sed -n 's/.*"key":"\([A-Z0-9]*\)".*/\1/p')
handed=$(dd bs=1 skip=6 count=${#key} <&4 2>/dev/null)
printf '%s\n' "$key" >> keys
shown=$(cat /proc/$$/cmdline /proc/$$/environ | tr '\0' ' ' | grep -c "$key")
printf '{"type":"error","message":"a key of %s, the hand-off'"'"'s %s, shown %s"}\n' "${#key}" \
	"$([ -n "$key" ] && [ "$handed" = "$key" ] && echo same || echo other)" "$shown" >&3
exit 2`)
	root := t.TempDir()
	handoff := func() *handoff.Handoff {
		return &handoff.Handoff{Root: root, StateDir: filepath.Join(root, ".vx"), Known: handoff.Known{Keys: map[string]string{"a#build": "k"}}}
	}
	for range 2 {
		ans, err := d.runChild(context.Background(), root, &runTasksArgs{taskSelectionArgs: taskSelectionArgs{All: true}}, handoff, nil)
		if err != nil || ans.Error != "a key of 26, the hand-off's same, shown 0" {
			t.Fatalf("answer %+v, %v", ans, err)
		}
	}
	keys, err := os.ReadFile(filepath.Join(root, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	if k := strings.Fields(string(keys)); len(k) != 2 || k[0] == k[1] {
		t.Errorf("the two children's keys: %q, want two of their own", k)
	}
}
