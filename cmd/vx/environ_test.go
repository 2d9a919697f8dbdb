//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// procEnvironWorkspace has a task, plain and sandboxed, that tries to read the environment of
// its parent (the task's supervisor) and of its grandparent (vx) through /proc, as a task running
// as vx's own user can, and says what it found.
var procEnvironWorkspace = map[string]string{
	"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
const probe = 'sup=$PPID; vx=$(cut -d" " -f4 /proc/$sup/stat); ' +
  'for p in $sup $vx; do what=$(cat /proc/$p/comm); ' +
  'if cat /proc/$p/environ >/dev/null 2>&1; then echo "read the environ of $what"; ' +
  'else echo "denied the environ of $what"; fi; ' +
  'ls /proc/$p/fd >/dev/null 2>&1 && echo "listed the fds of $what"; done; echo probed uid $(id -u)'
export default defineWorkspace({
  projects: ['app'],
  tasks: {
    plain: { command: probe, cache: false },
    boxed: { command: probe, cache: false, sandbox: true },
  },
})
`,
	"app/package.json": `{ "name": "app" }`,
}

// A task running as vx's user cannot read the environment vx was started with (a token held
// there included) through /proc/PID/environ, neither vx's nor its supervisor's, nor list their
// descriptors: every vx process that starts tasks is non-dumpable. Root with CAP_SYS_PTRACE reads
// any process's environ, so as root the test runs vx (and so its tasks) as uid 65534, the same user
// for vx and its tasks: what it proves is the same-user case, not what root can read.
func TestTaskCannotReadVxEnviron(t *testing.T) {
	dir := writeWorkspace(t, procEnvironWorkspace)
	exe := os.Args[0]
	var cred *syscall.Credential
	if os.Getuid() == 0 {
		// The other user needs to reach the binary and own the workspace.
		bin := filepath.Join(t.TempDir(), "vx.test")
		testkit.CopyFile(t, exe, bin, 0o755)
		for _, d := range []string{filepath.Dir(bin), dir} {
			// t.TempDir's folders are 0700, up to the test's own under $TMPDIR.
			for ; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
				if err := os.Chmod(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(path, 65534, 65534)
		}); err != nil {
			t.Fatal(err)
		}
		exe, cred = bin, &syscall.Credential{Uid: 65534, Gid: 65534}
	}
	cmd := exec.Command(exe, "run", "plain", "boxed")
	cmd.Dir = dir
	// The test's cache home is root's: nobody keeps its store in the state folder it owns.
	cmd.Env = append(cleanEnv(), "VX_TEST_MAIN=1", "HOME="+dir, "PROBE_TOKEN=tok-in-vx-environ", "VX_CACHE_DIR=.vx/store")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	out, err := cmd.CombinedOutput()
	text := string(out)
	if err != nil || strings.Count(text, "probed uid") != 2 {
		t.Fatalf("vx run: %v\n%s", err, text)
	}
	if cred != nil && strings.Count(text, "probed uid 65534") != 2 {
		t.Fatalf("the tasks did not run as uid 65534:\n%s", text)
	}
	for _, task := range []string{"app#plain", "app#boxed"} {
		for _, who := range []string{"vx-supervise", "vx.test"} {
			if want := task + " | denied the environ of " + who; !strings.Contains(text, want) {
				t.Errorf("want %q in\n%s", want, text)
			}
		}
	}
	if strings.Contains(text, "read the environ") || strings.Contains(text, "listed the fds") {
		t.Errorf("a task read what vx holds:\n%s", text)
	}
}
