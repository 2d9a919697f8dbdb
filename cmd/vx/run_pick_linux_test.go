package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTYPair opens a pseudo-terminal and answers both its ends: the controlling one (what a
// terminal emulator reads and types into) and the terminal one (the program's stdin and stderr).
func openPTYPair(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ptmx, tty
}

// pickWorkspace is a workspace of two projects whose tasks the picker lists.
func pickWorkspace(t *testing.T) string {
	return writeWorkspace(t, map[string]string{
		"vx.workspace.ts":           "export default { projects: ['packages/*'] }\n",
		"packages/app/package.json": `{ "name": "app" }`,
		"packages/app/vx.project.ts": "export default { tasks: { build: { command: 'touch built', description: 'Bundle the app' }, " +
			"lint: { command: 'touch linted' } } }\n",
		"packages/lib/package.json":  `{ "name": "lib" }`,
		"packages/lib/vx.project.ts": "export default { tasks: { test: { command: 'touch tested', description: 'Unit tests' } } }\n",
	})
}

// On a terminal (stdin and stderr), vx run with no task lists each project#task with its
// description and runs the one typed; the picker is driven through a real pseudo-terminal.
func TestRunPicksATaskOnATerminal(t *testing.T) {
	dir := pickWorkspace(t)
	ptmx, tty := openPTYPair(t)
	var screen bytes.Buffer
	var reading sync.WaitGroup
	reading.Add(1)
	go func() {
		defer reading.Done()
		_, _ = io.Copy(&screen, ptmx) // ends when both ends are closed
	}()
	if _, err := ptmx.WriteString("2\n"); err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd := vxCommand(t, dir, "run")
	cmd.Stdin, cmd.Stderr, cmd.Stdout = tty, tty, &stdout
	runErr := cmd.Run()
	tty.Close()
	ptmx.Close()
	reading.Wait()
	if runErr != nil {
		t.Fatalf("vx run on a terminal: %v\nstdout:\n%s\nterminal:\n%s", runErr, stdout.String(), screen.String())
	}
	shown := strings.ReplaceAll(screen.String(), "\r\n", "\n")
	for _, want := range []string{"  1  app#build  Bundle the app\n", "  2  app#lint\n", "  3  lib#test   Unit tests\n", "Run which task? (1-3"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the terminal does not show %q:\n%s", want, shown)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "packages/app/linted")); err != nil {
		t.Errorf("app#lint, the task chosen, did not run: %v\nstdout:\n%s", err, stdout.String())
	}
	for _, other := range []string{"packages/app/built", "packages/lib/tested"} {
		if _, err := os.Stat(filepath.Join(dir, other)); err == nil {
			t.Errorf("%s: a task not chosen ran", other)
		}
	}
	if !strings.Contains(stdout.String(), "ok: 1 tasks") {
		t.Errorf("the summary:\n%s", stdout.String())
	}
}

// Without a terminal on stderr (or on stdin) nothing is asked: vx run with no task is refused as
// ever, before anything is read.
func TestRunPicksNothingWithoutATerminal(t *testing.T) {
	dir := pickWorkspace(t)
	ptmx, tty := openPTYPair(t)
	defer ptmx.Close()
	defer tty.Close()
	for name, wire := range map[string]func(c *bytes.Buffer) (stdin, stderr any){
		"stderr a pipe": func(c *bytes.Buffer) (any, any) { return tty, c },
		"stdin a pipe":  func(c *bytes.Buffer) (any, any) { return strings.NewReader("1\n"), tty },
	} {
		var stderr bytes.Buffer
		cmd := vxCommand(t, dir, "run")
		in, errOut := wire(&stderr)
		cmd.Stdin = in.(io.Reader)
		cmd.Stderr = errOut.(io.Writer)
		out, err := cmd.Output()
		if err == nil {
			t.Errorf("%s: vx run with no task passed: %s", name, out)
		}
		if name == "stderr a pipe" && !strings.Contains(stderr.String(), "vx: name the tasks to run, or --all") {
			t.Errorf("%s: stderr %q", name, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "packages/app/built")); err == nil {
			t.Errorf("%s: a task ran", name)
		}
	}
}
