//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/watch"
	"github.com/vzn/vx/internal/testkit"
)

// watchWorkspace: a chain a ← b ← c and a lone d, each build logging its project to $LOG/ran;
// two projects with a persistent dev server each, one interruptible, each logging its starts.
func watchWorkspace() map[string]string {
	files := map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  passThroughEnv: ['LOG'],
  tasks: {
    build: { command: 'basename "$PWD" >> "$LOG/ran"; mkdir -p dist && cat src/*.js > dist/out.js', dependsOn: ['^build'], inputs: ['src/**'], outputs: ['dist/**'] },
  },
})
`,
		".gitignore":              "dist/\n.vx/\n",
		"packages/a/package.json": `{"name": "a"}`,
		"packages/b/package.json": `{"name": "b", "dependencies": {"a": "*"}}`,
		"packages/c/package.json": `{"name": "c", "dependencies": {"b": "*"}}`,
		"packages/d/package.json": `{"name": "d"}`,
	}
	for _, p := range []string{"a", "b", "c", "d", "srv", "still"} {
		files["packages/"+p+"/src/index.js"] = "export const " + p + " = 1\n"
	}
	server := func(interruptible bool) string {
		return fmt.Sprintf(`import { defineProject } from '@vzn/vx/config'
export default defineProject({ tasks: { dev: {
  command: 'echo $$ >> "$LOG/$(basename "$PWD")-dev"; exec sleep 300',
  persistent: true, interruptible: %v, inputs: ['src/**'] } } })
`, interruptible)
	}
	files["packages/srv/package.json"] = `{"name": "srv"}`
	files["packages/srv/vx.project.ts"] = server(true)
	files["packages/still/package.json"] = `{"name": "still"}`
	files["packages/still/vx.project.ts"] = server(false)
	return files
}

// watcher is a running vx watch and the status lines it has printed.
type watcher struct {
	cmd   *exec.Cmd
	lines chan string
	seen  []string
	// other holds the lines of stderr that are not status lines (the tasks' output), closed
	// with lines; nil for a watcher that drops them.
	other chan string
}

// next waits for a status line matching pattern and answers it with its submatches.
func (w *watcher) next(t *testing.T, pattern string) []string {
	t.Helper()
	re := regexp.MustCompile(pattern)
	timeout := time.After(90 * time.Second)
	for {
		select {
		case line, ok := <-w.lines:
			if !ok {
				t.Fatalf("vx watch ended before %q; it said:\n%s", pattern, strings.Join(w.seen, "\n"))
			}
			w.seen = append(w.seen, line)
			if m := re.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("no line %q; vx watch said:\n%s", pattern, strings.Join(w.seen, "\n"))
		}
	}
}

// ranSince answers the projects whose build ran after the first n lines of $LOG/ran, and the
// new count.
func ranSince(t *testing.T, log string, n int) ([]string, int) {
	t.Helper()
	data, _ := os.ReadFile(filepath.Join(log, "ran"))
	all := strings.Fields(string(data))
	ran := slices.Clone(all[n:])
	slices.Sort(ran)
	return ran, len(all)
}

func pidsIn(t *testing.T, file string) []int { return readRunPids(t, file, 0) }

// TestWatch drives vx watch through real edits: the first run, a leaf edit that re-runs it and its
// dependents only, the persistent tasks restarted on their own change only when interruptible, a
// config edit, a burst of 1,000 edits that is one run, and Ctrl-C, after which no process is left.
func TestWatch(t *testing.T) {
	dir := writeWorkspace(t, watchWorkspace())
	gitInit(t, dir)
	log := t.TempDir()
	killRunLeftovers(t, filepath.Join(log, "srv-dev"))
	killRunLeftovers(t, filepath.Join(log, "still-dev"))
	w := startWatch(t, dir, []string{"LOG=" + log}, "build", "dev", "--debounce", "300ms")
	cmd := w.cmd
	edit := func(rel, text string) { testkit.WriteTree(t, dir, map[string]string{rel: text}) }

	w.next(t, `^run 1 \(first run\) re-ran .*: 6 miss in`)
	w.next(t, `^started srv#dev`)
	w.next(t, `^started still#dev`)
	readRunPids(t, filepath.Join(log, "srv-dev"), 1)
	still := readRunPids(t, filepath.Join(log, "still-dev"), 1)
	_, n := ranSince(t, log, 0)

	// A leaf edit: b and what depends on it run again, nothing else.
	edit("packages/b/src/index.js", "export const b = 2\n")
	w.next(t, `^run 2 \(packages/b/src/index.js changed\) re-ran .*in`)
	ran, _ := ranSince(t, log, n)
	if !slices.Equal(ran, []string{"b", "c"}) {
		t.Fatalf("a leaf edit re-ran %q, want b and c", ran)
	}

	// The interruptible server restarts on its own change; the other is left running.
	edit("packages/srv/src/index.js", "export const srv = 2\n")
	w.next(t, `^restarting srv#dev: its key moved`)
	srv := readRunPids(t, filepath.Join(log, "srv-dev"), 2)
	expectRunGone(t, "the restarted server's first process", srv[:1], 30*time.Second)
	edit("packages/still/src/index.js", "export const still = 2\n")
	w.next(t, `^still#dev: its key moved; not interruptible: left running`)
	_, n = ranSince(t, log, 0) // srv's and still's own builds ran too
	if pids := pidsIn(t, filepath.Join(log, "still-dev")); len(pids) != 1 || runProcessGone(still[0]) {
		t.Fatalf("the server that is not interruptible was restarted or stopped: %v", pids)
	}
	if pids := pidsIn(t, filepath.Join(log, "srv-dev")); len(pids) != 2 {
		t.Fatalf("the interruptible server started %d times, want 2 (an edit elsewhere restarts nothing)", len(pids))
	}

	// A config edit: it is loaded again, and the builds whose command moved run again.
	data, _ := os.ReadFile(filepath.Join(dir, "vx.workspace.ts"))
	edit("vx.workspace.ts", strings.Replace(string(data), `cat src/*.js`, `cat src/*.js src/*.js`, 1))
	m := w.next(t, `^run (\d+) \(vx.workspace.ts changed: config loaded again\) re-ran`)
	ran, n = ranSince(t, log, n)
	if !slices.Equal(ran, []string{"a", "b", "c", "d", "srv", "still"}) {
		t.Fatalf("after the config edit, builds re-ran: %q, want all six", ran)
	}

	// A burst of 1,000 edits is one run.
	var runAfter int
	fmt.Sscan(m[1], &runAfter)
	for i := range 1000 {
		edit(fmt.Sprintf("packages/d/src/f%d.js", i%50), fmt.Sprintf("export const n = %d\n", i))
	}
	w.next(t, fmt.Sprintf(`^run %d \(packages/d/src/.* changed\) re-ran d#build: 1 miss`, runAfter+1))
	edit("packages/a/src/index.js", "export const a = 3\n")
	w.next(t, fmt.Sprintf(`^run %d \(packages/a/src/index.js changed\)`, runAfter+2))
	if ran, _ := ranSince(t, log, n); !slices.Contains(ran, "d") || strings.Count(strings.Join(ran, " "), "d") != 1 {
		t.Fatalf("the burst ran d's build %d times (%q), want once", strings.Count(strings.Join(ran, " "), "d"), ran)
	}

	// Ctrl-C: vx watch stops everything and exits, leaving no process.
	servers := append(pidsIn(t, filepath.Join(log, "srv-dev")), pidsIn(t, filepath.Join(log, "still-dev"))...)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range w.lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("vx watch after Ctrl-C: %v", err)
	}
	expectRunGone(t, "after Ctrl-C", append(servers, cmd.Process.Pid), 10*time.Second)
}

// gitInit makes dir a git repository with one commit of everything in it.
func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "-m", "initial"}} {
		c := exec.Command("git", args...)
		c.Dir = dir
		c.Env = append(os.Environ(), "GIT_AUTHOR_NAME=vx", "GIT_AUTHOR_EMAIL=vx@example.com",
			"GIT_COMMITTER_NAME=vx", "GIT_COMMITTER_EMAIL=vx@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestRunAsksTheWatcher: beside a vx mcp, vx run takes the file state from the server's watcher,
// and sees an edit made just before it; VX_FILE_STATE=scan makes it scan.
func TestRunAsksTheWatcher(t *testing.T) {
	files := watchWorkspace()
	files["vx.workspace.ts"] = strings.Replace(strings.Replace(files["vx.workspace.ts"], "projects: ['packages/*'],",
		"projects: ['packages/*'], plugins: [mcp()],", 1), "import { defineWorkspace } from '@vzn/vx/config'",
		"import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'", 1)
	dir := writeWorkspace(t, files)
	gitInit(t, dir)
	log := t.TempDir()
	run := func(env ...string) (stdout, stderr string) {
		t.Helper()
		cmd := vxCommand(t, dir, "run", "build", "--format", "json", "--log-level", "debug")
		cmd.Env = append(append(cmd.Env, "LOG="+log), env...)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("vx run: %v\n%s", err, errOut.String())
		}
		return out.String(), errOut.String()
	}
	run()
	srv := vxCommand(t, dir, "mcp")
	stdin, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = srv.Wait()
	}()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// As a client does: the server starts its watcher once the handshake goes on.
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, errOut := run("VX_FILE_STATE_WAIT=5s")
		if strings.Contains(errOut, "file state: from the watcher") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("vx run never took the watcher's file state:\n%s", errOut)
		}
		time.Sleep(100 * time.Millisecond)
	}
	testkit.WriteTree(t, dir, map[string]string{"packages/d/src/index.js": "export const d = 42\n"})
	out, errOut := run("VX_FILE_STATE_WAIT=5s")
	if !strings.Contains(errOut, "file state: from the watcher") {
		t.Fatalf("after the edit, vx run scanned:\n%s", errOut)
	}
	for _, want := range []string{`"taskId": "d#build",` + "\n" + `      "status": "miss"`, `"taskId": "a#build",` + "\n" + `      "status": "hit"`} {
		if !strings.Contains(out, want) {
			t.Fatalf("the run beside the watcher: want %q in\n%s", want, out)
		}
	}
	if _, errOut := run("VX_FILE_STATE=scan"); strings.Contains(errOut, "file state: from the watcher") {
		t.Fatalf("VX_FILE_STATE=scan asked the watcher:\n%s", errOut)
	}
}

// fakeWorkspace is one project whose build copies its input into its output.
func fakeWorkspace() map[string]string {
	return map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: { build: { command: 'mkdir -p dist && cat src/in.txt > dist/out.txt', inputs: ['src/**'], outputs: ['dist/**'] } },
})
`,
		".gitignore":                  "dist/\n.vx/\n",
		"packages/a/package.json":     `{"name": "a"}`,
		"packages/a/src/in.txt":       "v1\n",
		"packages/a/src/other/n.txt":  "n\n",
		"packages/a/src/other/m.txt":  "m\n",
		"packages/a/README.md":        "a\n",
		"packages/a/src/other/o/p.md": "p\n",
	}
}

// runBuild runs vx run build in dir asking the socket (waiting long for it) and answers the
// build's status, the output's content and what vx said on stderr.
func runBuild(t *testing.T, dir string) (status, out, stderr string) {
	t.Helper()
	cmd := vxCommand(t, dir, "run", "build", "--format", "json", "--log-level", "debug")
	cmd.Env = append(cmd.Env, "VX_FILE_STATE_WAIT=5s")
	var stdout, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("vx run: %v\n%s", err, errOut.String())
	}
	m := regexp.MustCompile(`"taskId": "a#build",\s*"status": "(\w+)"`).FindStringSubmatch(stdout.String())
	if m == nil {
		t.Fatalf("no status of a#build in\n%s", stdout.String())
	}
	data, _ := os.ReadFile(filepath.Join(dir, "packages/a/dist/out.txt"))
	return m[1], string(data), errOut.String()
}

// A fake server of this user on the workspace's socket replays a snapshot a real watcher made
// before an edit, then sends a 300 MB answer: each vx run doubts it, scans, and builds the edited
// input; none takes the old snapshot's hit.
func TestRunDoubtsAFakeWatcher(t *testing.T) {
	dir := writeWorkspace(t, fakeWorkspace())
	gitInit(t, dir)
	if status, out, _ := runBuild(t, dir); status != "miss" || out != "v1\n" {
		t.Fatalf("the first build: %s %q", status, out)
	}
	state := filepath.Join(dir, ".vx")
	w, err := watch.Start(watch.Options{Root: dir, StateDir: state})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitHashed(context.Background()); err != nil {
		t.Fatal(err)
	}
	old, err := w.Snapshot(context.Background())
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	testkit.WriteTree(t, dir, map[string]string{"packages/a/src/in.txt": "v2\n"})
	srv, err := filestate.Listen(state, dir, func(context.Context) (*filestate.Snapshot, error) { return old, nil })
	if err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runBuild(t, dir)
	srv.Close()
	if status != "miss" || out != "v2\n" {
		t.Fatalf("beside a server replaying an old snapshot: %s %q\n%s", status, out, errOut)
	}
	if !strings.Contains(errOut, "older than the disk") {
		t.Fatalf("vx run did not say why it scanned:\n%s", errOut)
	}

	ln, err := net.Listen("unix", filestate.SocketPath(state))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(filestate.SocketPath(state), 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			head := make([]byte, 10)
			head[0], head[1] = 2, 0
			binary.BigEndian.PutUint64(head[2:], 300<<20)
			_, _ = c.Write(head)
			_, _ = c.Write(make([]byte, 1<<20))
			c.Close()
		}
	}()
	testkit.WriteTree(t, dir, map[string]string{"packages/a/src/in.txt": "v3\n"})
	status, out, errOut = runBuild(t, dir)
	if status != "miss" || out != "v3\n" || !strings.Contains(errOut, "file state: scanning") {
		t.Fatalf("beside a server sending 300 MB: %s %q\n%s", status, out, errOut)
	}
}

// probeScript asks the workspace's socket (two folders up) for the file state as a vx run does and
// prints the answer's first byte after the question's acknowledgement, and the reason of a refusal.
const probeScript = `import os, socket, struct
root = os.path.abspath('../..')
s = socket.socket(socket.AF_UNIX)
s.connect(os.path.join(root, '.vx/watch.sock'))
s.sendall(('VXFS2 ' + root + '\n').encode())
b = s.recv(1)
if b == b'\x02':
    b = s.recv(1)
head = b''
while len(head) < 8:
    head += s.recv(8 - len(head))
n = struct.unpack('>Q', head)[0]
body = b''
while len(body) < min(n, 200):
    body += s.recv(200)
print('status=%d %s' % (b[0], body[:200].decode(errors='replace') if b[0] == 1 else ''))
`

// A sandboxed task that reads src/** only (with no network: a network namespace of its own; with
// network: no_new_privs under Landlock) asks the watcher's socket for the workspace's file state:
// it is refused, where the same question from outside the sandbox is answered.
func TestSandboxedTaskGetsNoFileState(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3 to ask the socket with")
	}
	files := map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    probe: { command: '/usr/bin/python3 src/probe.py', cache: false, sandbox: { read: ['src/**'], required: true } },
    probenet: { command: '/usr/bin/python3 src/probe.py', cache: false, sandbox: { network: true, read: ['src/**'], required: true } },
    open: { command: '/usr/bin/python3 src/probe.py', cache: false },
  },
})
`,
		"packages/a/src/probe.py": probeScript,
		".gitignore":              ".vx/\n",
		"packages/a/package.json": `{"name": "a"}`,
		"packages/a/src/in.txt":   "v1\n",
	}
	dir := writeWorkspace(t, files)
	gitInit(t, dir)
	state := filepath.Join(dir, ".vx")
	if err := os.MkdirAll(state, 0o755); err != nil {
		t.Fatal(err)
	}
	svc, err := watch.Serve(dir, state, nil, func(msg string) { t.Log(msg) })
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := svc.Watcher().WaitHashed(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !svc.Serving() {
		t.Fatal("the watcher does not serve its socket")
	}
	probe := func(task string) string {
		cmd := vxCommand(t, dir, "run", "a#"+task)
		out, err := cmd.CombinedOutput()
		if err != nil {
			if strings.Contains(string(out), "cannot be enforced") || strings.Contains(string(out), "not enforced") {
				t.Skipf("the sandbox cannot be enforced here:\n%s", out)
			}
			t.Fatalf("vx run a#%s: %v\n%s", task, err, out)
		}
		m := regexp.MustCompile(`status=\d.*`).FindString(string(out))
		if m == "" {
			t.Fatalf("vx run a#%s printed no answer:\n%s", task, out)
		}
		return m
	}
	if got := probe("open"); !strings.HasPrefix(got, "status=0") {
		t.Fatalf("an unsandboxed task's question: %s", got)
	}
	for _, task := range []string{"probe", "probenet"} {
		if got := probe(task); !strings.HasPrefix(got, "status=1 a sandboxed task gets no file state") {
			t.Fatalf("the sandboxed task %s was answered: %s", task, got)
		}
	}
}

// asNobody makes cmd run as an unprivileged user where the test runs as root (root reads a folder
// chmod 000): the user "nobody" (65534) gets dir's files and a copy of the test binary it may run;
// outside root it changes nothing.
func asNobody(t *testing.T, cmd *exec.Cmd, dir string) {
	t.Helper()
	if os.Getuid() != 0 {
		return
	}
	const nobody = 65534
	bin := filepath.Join(t.TempDir(), "vx")
	data, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(bin), dir} {
		for p := d; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, nobody, nobody)
	}); err != nil {
		t.Fatal(err)
	}
	cmd.Path, cmd.Args[0] = bin, bin
	// The test's cache home is root's: nobody keeps its store in the state folder it owns.
	cmd.Env = append(cmd.Env, "HOME="+dir, "VX_CACHE_DIR=.vx/store")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
}

// A folder vx watch cannot read (chmod 000) is named ("vx watch: cannot watch …"), not for good:
// made readable again, it is watched again, and vx watch keeps re-running on later edits.
func TestWatchUnreadableFolder(t *testing.T) {
	files := fakeWorkspace()
	files["packages/a/private/notes.txt"] = "n\n"
	dir := writeWorkspace(t, files)
	gitInit(t, dir)
	private := filepath.Join(dir, "packages/a/private")
	cmd := vxCommand(t, dir, "watch", "build", "--debounce", "100ms")
	asNobody(t, cmd, dir)
	if err := os.Chmod(private, 0); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(private, 0o755)
	w := startWatchCmd(t, cmd)
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		for range w.lines {
		}
		_ = cmd.Wait()
	}()
	w.next(t, `^cannot watch packages/a/private: permission denied`)
	w.next(t, `^run 1 \(first run\) re-ran a#build: 1 miss`)
	if err := os.Chmod(private, 0o755); err != nil {
		t.Fatal(err)
	}
	w.next(t, `^every folder is watched again`)
	testkit.WriteTree(t, dir, map[string]string{"packages/a/src/in.txt": "v2\n"})
	w.next(t, `^run 2 \(packages/a/src/in.txt changed\) re-ran a#build: 1 miss`)
	// The lines before run 2's are all read by now: a fault said without its path is among them.
	for drained := false; !drained; {
		select {
		case line := <-w.other:
			if strings.HasPrefix(line, "vx: permission denied") {
				t.Fatalf("a fault without its path: %q", line)
			}
		default:
			drained = true
		}
	}
}

// A real watcher flooded by connections that send an endless line or nothing at all stays up: a
// vx run meanwhile builds what it must (asking, then scanning), and once the flood ends the next
// run takes the watcher's file state again.
func TestRunBesideAFloodedWatcher(t *testing.T) {
	dir := writeWorkspace(t, fakeWorkspace())
	gitInit(t, dir)
	if status, _, _ := runBuild(t, dir); status != "miss" {
		t.Fatalf("the first build: %s", status)
	}
	svc, err := watch.Serve(dir, filepath.Join(dir, ".vx"), nil, func(msg string) { t.Log(msg) })
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	if err := svc.Watcher().WaitHashed(context.Background()); err != nil {
		t.Fatal(err)
	}
	sock := filestate.SocketPath(filepath.Join(dir, ".vx"))
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for i := range 64 {
		c, err := net.Dial("unix", sock)
		if err != nil {
			break // the backlog is full
		}
		flood = append(flood, c)
		if i%16 == 0 {
			go func() {
				chunk := make([]byte, 64<<10)
				for {
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
		}
	}
	testkit.WriteTree(t, dir, map[string]string{"packages/a/src/in.txt": "v2\n"})
	if status, out, errOut := runBuild(t, dir); status != "miss" || out != "v2\n" {
		t.Fatalf("beside a flooded watcher: %s %q\n%s", status, out, errOut)
	}
	for _, c := range flood {
		c.Close()
	}
	flood = nil
	deadline := time.Now().Add(time.Minute)
	for v := 3; ; v++ {
		want := fmt.Sprintf("v%d\n", v)
		testkit.WriteTree(t, dir, map[string]string{"packages/a/src/in.txt": want})
		status, out, errOut := runBuild(t, dir)
		if status != "miss" || out != want {
			t.Fatalf("after the flood: %s %q, want a miss building %q\n%s", status, out, want, errOut)
		}
		if strings.Contains(errOut, "file state: from the watcher") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the watcher never answered again after the flood:\n%s", errOut)
		}
	}
}

// startWatch starts vx watch args in dir with env added, and reads its status lines; the process
// is killed at the test's end unless stopWatch ended it.
func startWatch(t *testing.T, dir string, env []string, args ...string) *watcher {
	t.Helper()
	cmd := vxCommand(t, dir, append([]string{"watch"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	return startWatchCmd(t, cmd)
}

// startWatchCmd starts cmd, a vx watch made ready to run, and reads its status lines, as
// startWatch does.
func startWatchCmd(t *testing.T, cmd *exec.Cmd) *watcher {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := &watcher{cmd: cmd, lines: make(chan string, 1024), other: make(chan string, 4096)}
	go func() {
		defer close(w.lines)
		defer close(w.other)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "vx watch: "); ok {
				w.lines <- line
				continue
			}
			select {
			case w.other <- sc.Text():
			default:
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return w
}

// stopWatch sends Ctrl-C and waits for vx watch to exit 0.
func stopWatch(t *testing.T, w *watcher) {
	t.Helper()
	if err := w.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	for range w.lines {
	}
	if err := w.cmd.Wait(); err != nil {
		t.Fatalf("vx watch after Ctrl-C: %v", err)
	}
}

// tshyLikeWorkspace: one package whose build does what tshy does beside its sources — it writes
// src/package.json and .tshy-build/ (neither ignored by git), then waits for $LOG/go, then
// removes both and writes dist/. Each start is logged to $LOG/started; a stopped build removes
// its temporary files, as a tool that cleans up on SIGTERM does.
func tshyLikeWorkspace() map[string]string {
	return map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  passThroughEnv: ['LOG'],
  tasks: { build: { command: 'sh build.sh', outputs: ['dist/**'] } },
})
`,
		".gitignore":                "dist/\n.vx/\n",
		"packages/lib/package.json": `{"name": "lib"}`,
		"packages/lib/src/index.js": "export const lib = 1\n",
		"packages/lib/build.sh": `trap 'rm -rf .tshy-build src/package.json; exit 143' TERM
mkdir -p .tshy-build && echo tmp > .tshy-build/x
echo '{"type": "module"}' > src/package.json
echo started >> "$LOG/started"
while [ ! -e "$LOG/go" ]; do sleep 0.05; done
rm -rf .tshy-build src/package.json
mkdir -p dist && cat src/index.js > dist/index.js
`,
	}
}

// waitLines waits until file holds n lines.
func waitLines(t *testing.T, file string, n int) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(file)
		if strings.Count(string(data), "\n") >= n {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never held %d lines", file, n)
}

// TestWatchBesideAToolThatWritesIntoItsSources: the files a build creates beside its sources and
// removes before it ends never stop or repeat its run — vx watch settles after one run — while a
// real edit of a source during the run still stops it and runs it again.
func TestWatchBesideAToolThatWritesIntoItsSources(t *testing.T) {
	dir := writeWorkspace(t, tshyLikeWorkspace())
	gitInit(t, dir)
	log := t.TempDir()
	w := startWatch(t, dir, []string{"LOG=" + log}, "build", "--debounce", "200ms")
	lib := filepath.Join(dir, "packages/lib")
	edit := func(text string) { testkit.WriteTree(t, lib, map[string]string{"src/index.js": text}) }

	// The build's temporary files settle during its run: no task of it moved.
	m := w.next(t, `^(.*: no task of run 1 moved: after it|.*stopping run 1 to start again)$`)
	if strings.Contains(m[1], "stopping") {
		t.Fatalf("the build's own temporary files stopped its run: %s", m[1])
	}
	testkit.WriteTree(t, log, map[string]string{"go": ""})
	w.next(t, `^run 1 \(first run\) re-ran lib#build: 1 miss`)
	w.next(t, `: no task's key moved after run 1; watching`)

	// Settled: the next run is the one a real edit starts.
	edit("export const lib = 2\n")
	m = w.next(t, `^run (\d+) \((.*)\): `)
	if m[1] != "2" || !strings.HasPrefix(m[2], "packages/lib/src/index.js") {
		t.Fatalf("after the first run, run %s started on %q; want run 2 on the edit of src/index.js; it said:\n%s", m[1], m[2], strings.Join(w.seen, "\n"))
	}
	w.next(t, `^run 2 \(.*\) re-ran lib#build: 1 miss`)

	// A real edit of a source while the build runs stops it and runs it again.
	if err := os.Remove(filepath.Join(log, "go")); err != nil {
		t.Fatal(err)
	}
	edit("export const lib = 3\n")
	w.next(t, `^run 3 \(packages/lib/src/index.js[,) ]`)
	waitLines(t, filepath.Join(log, "started"), 3)
	edit("export const lib = 4\n")
	w.next(t, `lib#build moved: stopping run 3 to start again`)
	w.next(t, `^run 4 \(`)
	testkit.WriteTree(t, log, map[string]string{"go": ""})
	w.next(t, `^run 4 \(.*\) re-ran lib#build: 1 miss`)
	if out, _ := os.ReadFile(filepath.Join(lib, "dist/index.js")); string(out) != "export const lib = 4\n" {
		t.Fatalf("dist/index.js after the edit during the run: %q", out)
	}

	// Ctrl-C leaves no file the build had not left itself: here, none.
	stopWatch(t, w)
	for _, rel := range []string{"src/package.json", ".tshy-build"} {
		if _, err := os.Lstat(filepath.Join(lib, rel)); err == nil {
			t.Errorf("%s is left after Ctrl-C", rel)
		}
	}
}

// TestWatchNamesTheSourceNotTheEditorsFiles: a save that changes an editor's files beside the
// source — vim's swap file .index.js.swp, written on the save too, with its probe 4913 and backup
// index.js~; emacs' lock .#index.js, removed on the save — starts a run named after index.js
// alone. An editor's file that changed alone is named.
func TestWatchNamesTheSourceNotTheEditorsFiles(t *testing.T) {
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({ projects: ['packages/*'],
  tasks: { build: { command: 'mkdir -p dist && cat src/*.js > dist/out.js', inputs: ['src/**'], outputs: ['dist/**'] } } })
`,
		".gitignore":              "dist/\n.vx/\n",
		"packages/a/package.json": `{"name": "a"}`,
		"packages/a/src/index.js": "export const a = 1\n",
	})
	gitInit(t, dir)
	w := startWatch(t, dir, nil, "build", "--debounce", "300ms")
	w.next(t, `^run 1 \(first run\) re-ran a#build: 1 miss`)
	src := filepath.Join(dir, "packages/a/src")
	at := func(name string) string { return filepath.Join(src, name) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// vim opens the file (its swap file), then saves it (backupcopy=no): the swap file written
	// again, a probe, the old file kept as a backup until the new one is written.
	must(os.WriteFile(at(".index.js.swp"), []byte("b0VIM 9.0\n"), 0o644))
	w.next(t, `^run 2 \(packages/a/src/\.index\.js\.swp changed\): a#build$`)
	must(os.WriteFile(at(".index.js.swp"), []byte("b0VIM 9.0 saved\n"), 0o644))
	must(os.WriteFile(at("4913"), nil, 0o644))
	must(os.Remove(at("4913")))
	must(os.Rename(at("index.js"), at("index.js~")))
	must(os.WriteFile(at("index.js"), []byte("export const a = 2\n"), 0o644))
	must(os.Remove(at("index.js~")))
	w.next(t, `^run 3 \(packages/a/src/index\.js changed\): a#build$`)

	// emacs locks the file while it is modified and unlocks it on the save.
	must(os.Symlink("vx@localhost.4242:1700000000", at(".#index.js")))
	w.next(t, `^run 4 \(packages/a/src/\.#index\.js changed\): a#build$`)
	must(os.WriteFile(at("index.js"), []byte("export const a = 3\n"), 0o644))
	must(os.Remove(at(".#index.js")))
	w.next(t, `^run 5 \(packages/a/src/index\.js changed\): a#build$`)
	stopWatch(t, w)
}

// TestWatchTakesRunsFlags: vx watch takes vx run's --concurrency (a share of the CPUs),
// --output-logs, --log-order and the arguments after --, and refuses their bad values as vx run
// does.
func TestWatchTakesRunsFlags(t *testing.T) {
	build := `if ! mkdir "$LOG/running"; then echo overlap >> "$LOG/overlap"; fi
echo "LOUD $(basename "$PWD")"
printf '%s\n' "$@" > "$LOG/args-$(basename "$PWD")"
sleep 0.2
rmdir "$LOG/running"
`
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({ projects: ['packages/*'], passThroughEnv: ['LOG'],
  tasks: { build: { command: 'sh build.sh' } } })
`,
		".gitignore":              ".vx/\n",
		"packages/a/package.json": `{"name": "a"}`, "packages/a/build.sh": build,
		"packages/b/package.json": `{"name": "b"}`, "packages/b/build.sh": build,
	})
	gitInit(t, dir)
	for _, bad := range [][]string{{"--concurrency", "0"}, {"--output-logs", "loud"}, {"--log-order", "random"}} {
		// A vx watch that takes a bad value watches until the test stops it.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := vxCommand(t, dir, append([]string{"watch", "build"}, bad...)...)
		c := exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
		c.Dir, c.Env = cmd.Dir, cmd.Env
		out, err := c.CombinedOutput()
		stopped := ctx.Err() != nil
		cancel()
		if stopped {
			t.Errorf("vx watch build %s %s watched instead of refusing it", bad[0], bad[1])
			continue
		}
		if err == nil || !strings.Contains(string(out), bad[0]+" "+bad[1]) && !strings.Contains(string(out), bad[0]+"="+bad[1]) {
			t.Errorf("vx watch build %s %s: %v, said %q; want a refusal naming it", bad[0], bad[1], err, out)
		}
	}

	log := t.TempDir()
	// 1% of the CPUs is one worker on any machine with fewer than 200.
	w := startWatch(t, dir, []string{"LOG=" + log}, "build", "--concurrency", "1%", "--output-logs", "errors-only",
		"--log-order", "grouped", "--", "--mode=prod", "two words")
	w.next(t, `^run 1 \(first run\) re-ran .*: 2 miss`)
	stopWatch(t, w)
	if data, err := os.ReadFile(filepath.Join(log, "overlap")); err == nil {
		t.Errorf("two builds ran at once under --concurrency 1%%: %s", data)
	}
	for _, p := range []string{"a", "b"} {
		if data, _ := os.ReadFile(filepath.Join(log, "args-"+p)); string(data) != "--mode=prod\ntwo words\n" {
			t.Errorf("%s#build got the arguments %q, want --mode=prod and \"two words\"", p, data)
		}
	}
	for line := range w.other {
		if strings.Contains(line, "LOUD") {
			t.Errorf("a passing task's output was shown under --output-logs errors-only: %q", line)
		}
	}
}

// TestWatchBesideABuildThatRewritesItsInputs: a build that writes one of its inputs again with
// the bytes it held — tshy writes its package.json's exports on every build, unchanged — moves
// that input while it runs on every run. vx watch runs it once more (an edit undone during a run
// is run again) and, seeing the same key move the same way, settles: the next run is the one a
// real edit starts, and that one is not repeated. It ran again and again (14 runs in 6 minutes on
// trigger.dev's react-hooks).
func TestWatchBesideABuildThatRewritesItsInputs(t *testing.T) {
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: { build: { command: 'sh build.sh', outputs: ['dist/**'] } },
})
`,
		".gitignore":                "dist/\n.vx/\n",
		"packages/lib/package.json": `{"name": "lib", "exports": "./dist/index.js"}` + "\n",
		"packages/lib/src/index.js": "export const lib = 1\n",
		"packages/lib/build.sh": `mkdir -p dist && cat src/index.js > dist/index.js
cat package.json > dist/package.json && cat dist/package.json > package.json
`,
	})
	gitInit(t, dir)
	w := startWatch(t, dir, nil, "build", "--debounce", "200ms")
	m := w.next(t, `^(lib#build changed package.json again while it ran.*|run 4 \(.*)$`)
	if strings.HasPrefix(m[1], "run 4") {
		t.Fatalf("vx watch never settles beside a build that rewrites its package.json; it said:\n%s", strings.Join(w.seen, "\n"))
	}
	lib := filepath.Join(dir, "packages/lib")
	for i, text := range []string{"export const lib = 2\n", "export const lib = 3\n"} {
		testkit.WriteTree(t, lib, map[string]string{"src/index.js": text})
		m = w.next(t, `^run (\d+) \((.*)\): `)
		if want := strconv.Itoa(3 + i); m[1] != want || !strings.Contains(m[2], "packages/lib/src/index.js") {
			t.Fatalf("after edit %d, run %s started on %q; want run %s on src/index.js; it said:\n%s", i+1, m[1], m[2], want, strings.Join(w.seen, "\n"))
		}
		w.next(t, `^run `+m[1]+` \(.*\) re-ran lib#build: 1 miss`)
	}
	stopWatch(t, w)
}
