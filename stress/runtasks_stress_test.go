//go:build unix

package stress

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vzn/vx/internal/testkit"
)

// TestRunTasksStress drives `vx mcp` (the real binary) with concurrent runTasks calls on one
// workspace: tasks that pass, fail, hang, and detach a process; calls cancelled at random moments;
// `vx run` children killed with SIGKILL mid-run; refusals. Every call not cancelled must be answered
// exactly once, and when the calls are over no process the runs started may be left: every process
// of the session carries a marker in its environment, and only the server may still hold it. Then
// EOF must end the server with status 0. -short runs 16 calls; the full run 60.
func TestRunTasksStress(t *testing.T) {
	calls := 60
	if testing.Short() {
		calls = 16
	}
	seed := uint64(time.Now().UnixNano())
	if s := envSeed(); s != 0 {
		seed = s
	}
	t.Logf("seed %d (set VX_STRESS_SEED to replay)", seed)
	rng := rand.New(rand.NewPCG(seed, 0x7a5c))

	bin := buildVX(t)
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "vx.workspace.ts"), `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  tasks: {
    build: { command: 'sleep 0.0$(($$ % 9)); mkdir -p dist; echo built > dist/out.txt', dependsOn: ['^build'], outputs: ['dist/**'] },
    test: { command: 'echo tested', dependsOn: ['build'], cache: false },
    fail: { command: 'echo failing; exit 3', cache: false },
    hang: { command: 'sleep 300 & sleep 300 & wait', cache: false },
    detach: { command: 'setsid sleep 300 >/dev/null 2>&1 3>&- & sleep 0.1', cache: false },
  },
})
`)
	for i := range 4 {
		deps := ""
		if i > 0 {
			deps = fmt.Sprintf(`, "dependencies": { "p%d": "*" }`, i-1)
		}
		writeFile(t, filepath.Join(ws, "packages", fmt.Sprintf("p%d", i), "package.json"), fmt.Sprintf(`{ "name": "p%d"%s }`, i, deps))
	}
	// all: true runs p0's tasks: none of them hangs.
	writeFile(t, filepath.Join(ws, "packages", "p0", "vx.project.ts"), "export default { tasks: { hang: false } }\n")
	marker := fmt.Sprintf("VX_RUNTASKS_STRESS=%d-%d", os.Getpid(), seed)
	t.Cleanup(func() { // a failing run leaves nothing behind either
		for _, pid := range markedPids(marker, -1) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	cmd := exec.Command(bin, "mcp")
	cmd.Dir, cmd.Env = ws, append(crashEnv(), marker)
	var stderr testkit.SyncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	server := cmd.Process.Pid
	replies := newReplyLog()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		replies.read(stdout)
	}()
	send := func(line string) {
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write: %v\nstderr:\n%s", err, stderr.String())
		}
	}
	send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stress","version":"1"}}}`)
	if missing := replies.wait([]string{"init"}, 30*time.Second); len(missing) > 0 {
		t.Fatalf("no reply to initialize\nstderr:\n%s", stderr.String())
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	type plannedCall struct {
		id     string
		cancel bool
	}
	choices := []string{`{"tasks":["test"]}`, `{"tasks":["build"],"force":true}`, `{"tasks":["p3#fail"]}`,
		`{"tasks":["hang"],"filter":"p1"}`, `{"tasks":["detach"],"filter":["p0","p2"]}`, `{"tasks":["nope"]}`,
		`{"all":true,"filter":"p0"}`, `{"tasks":["#build"]}`}
	var planned []plannedCall
	var mustAnswer []string
	killed := 0
	start := time.Now()
	for i := range calls {
		args := choices[rng.IntN(len(choices))]
		c := plannedCall{id: fmt.Sprintf("run%d", i)}
		// A hanging run ends only by a cancel or a killed child.
		c.cancel = strings.Contains(args, "hang") || rng.IntN(4) == 0
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"tools/call","params":{"name":"runTasks","arguments":%s,"_meta":{"progressToken":%q}}}`,
			c.id, args, c.id))
		planned = append(planned, c)
		if !c.cancel {
			mustAnswer = append(mustAnswer, c.id)
		}
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond)
		// Now and then a vx run child dies of SIGKILL, whatever it was doing.
		if rng.IntN(5) == 0 {
			if kids := runChildren(server); len(kids) > 0 {
				_ = syscall.Kill(kids[rng.IntN(len(kids))], syscall.SIGKILL)
				killed++
			}
		}
		// Cancel some of the earlier calls: queued, running or finished by now.
		for j := range planned {
			if planned[j].cancel && rng.IntN(3) == 0 {
				send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%q}}`, planned[j].id))
				planned[j].cancel = false // sent
				planned[j].id = ""
			}
		}
	}
	for _, c := range planned {
		if c.cancel {
			send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%q}}`, c.id))
		}
	}
	if missing := replies.wait(mustAnswer, time.Minute); len(missing) > 0 {
		// Say what is still running, and what the server is doing (SIGQUIT dumps its goroutines).
		t.Errorf("no reply to %v; processes of the session: %s", missing, describePids(markedPids(marker, -1)))
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		stdin.Close()
		<-readDone
		_ = cmd.Wait()
		t.Fatalf("server stderr:\n%s", stderr.String())
	}
	t.Logf("%d calls (%d to answer), %d vx run children killed, in %s", calls, len(mustAnswer), killed, time.Since(start).Round(time.Millisecond))

	// Every answered call was answered once, each with a result.
	for id, n := range replies.counts() {
		if n != 1 {
			t.Errorf("call %s answered %d times", id, n)
		}
	}
	// The cancelled runs end within their grace: then only the server holds the marker, and the
	// child it keeps started ahead of the next call, which waits for its order and has started
	// nothing.
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := slices.DeleteFunc(markedPids(marker, server), func(pid int) bool { return isKeptChild(server, pid) })
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of the runs still alive: %s\nserver stderr:\n%s", describePids(left), stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}

	// EOF: the server exits 0, leaving nothing.
	stdin.Close()
	<-readDone
	if err := cmd.Wait(); err != nil {
		t.Errorf("vx mcp after EOF: %v\nstderr:\n%s", err, stderr.String())
	}
	if left := markedPids(marker, -1); len(left) > 0 {
		t.Errorf("processes left after the server exited: %s", describePids(left))
	}
	if bad := replies.bad(); len(bad) > 0 {
		t.Errorf("lines that are not JSON-RPC: %q", bad)
	}
}

// replyLog counts the replies of a server by id.
type replyLog struct {
	mu      sync.Mutex
	replies map[string]int
	badLine []string
	changed chan struct{}
}

func newReplyLog() *replyLog {
	return &replyLog{replies: map[string]int{}, changed: make(chan struct{}, 1)}
}

func (r *replyLog) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 1<<16), 16<<20)
	for sc.Scan() {
		var msg struct {
			ID     *string         `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		r.mu.Lock()
		switch {
		case json.Unmarshal(sc.Bytes(), &msg) != nil:
			r.badLine = append(r.badLine, sc.Text())
		case msg.ID != nil && msg.Result != nil:
			r.replies[*msg.ID]++
		case msg.Method == "notifications/progress":
		default:
			r.badLine = append(r.badLine, sc.Text())
		}
		r.mu.Unlock()
		select {
		case r.changed <- struct{}{}:
		default:
		}
	}
}

func (r *replyLog) counts() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.replies))
	for k, v := range r.replies {
		out[k] = v
	}
	return out
}

func (r *replyLog) bad() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.badLine...)
}

// wait blocks until every id in ids has a reply, or timeout; it returns those still unanswered.
func (r *replyLog) wait(ids []string, timeout time.Duration) []string {
	deadline := time.After(timeout)
	for {
		got := r.counts()
		var missing []string
		for _, id := range ids {
			if got[id] == 0 {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		select {
		case <-r.changed:
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			return missing
		}
	}
}

// markedPids lists the live processes (zombies excluded) whose environment holds marker, but not
// except.
func markedPids(marker string, except int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == except || pid == os.Getpid() {
			continue
		}
		environ, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(environ, []byte{0}) {
			if string(kv) == marker {
				found = append(found, pid)
				break
			}
		}
	}
	return found
}

// isKeptChild reports whether pid is the child that server keeps started ahead of the next
// runTasks call, idle: `vx __await-run`, with no process of its own.
func isKeptChild(server, pid int) bool {
	if !slices.Contains(runChildren(server), pid) {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !bytes.Contains(cmdline, []byte("\x00__await-run\x00")) {
		return false
	}
	return len(childrenOf(pid)) == 0
}

// childrenOf lists the live processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var kids []int
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if len(fields) > 1 && string(fields[0]) != "Z" && string(fields[1]) == strconv.Itoa(pid) {
			kid, _ := strconv.Atoi(e.Name())
			kids = append(kids, kid)
		}
	}
	return kids
}

// runChildren lists the children of server that run `vx run`: those started for a call, and the
// one it keeps started ahead of the next (`vx __await-run`), idle or ordered.
func runChildren(server int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var kids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		fields := bytes.Fields(stat[bytes.LastIndexByte(stat, ')')+1:])
		if len(fields) < 2 || string(fields[1]) != strconv.Itoa(server) {
			continue
		}
		if cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && (bytes.Contains(cmdline, []byte("\x00run\x00")) ||
			bytes.Contains(cmdline, []byte("\x00__await-run\x00"))) {
			kids = append(kids, pid)
		}
	}
	return kids
}

// describePids names each pid with its command line.
func describePids(pids []int) string {
	var parts []string
	for _, pid := range pids {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		parts = append(parts, fmt.Sprintf("%d %q", pid, strings.ReplaceAll(string(cmdline), "\x00", " ")))
	}
	return strings.Join(parts, ", ")
}
