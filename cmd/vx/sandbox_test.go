//go:build linux

package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"

	"github.com/vzn/vx/proc/sandbox"
)

// TestSandboxScripts runs testdata/sandbox/*.txtar: sandboxed tasks against the real kernel, with a
// TCP listener (`tcplisten FILE`) and a DNS server over UDP (`dnsserve FILE`) the script starts on
// 127.0.0.1, their address written to FILE. Conditions: [landlock] the host enforces a sandbox's
// filesystem part, [netns] a task can get a network namespace of its own.
func TestSandboxScripts(t *testing.T) {
	t.Parallel()
	verdict := sandbox.Probe()
	params := scriptParams("testdata/sandbox")
	params.Condition = func(cond string) (bool, error) {
		switch cond {
		case "landlock":
			return verdict.Enforced.Filesystem, nil
		case "landlocknet":
			return verdict.Enforced.TCP, nil
		case "netns":
			return verdict.Enforced.Network, nil
		}
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	params.Cmds["tcplisten"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: tcplisten FILE")
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				conn.Close()
			}
		})
		ts.Defer(func() { ln.Close(); wg.Wait() })
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(ln.Addr().String()), 0o644))
	}
	params.Cmds["dnsserve"] = func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 {
			ts.Fatalf("usage: dnsserve FILE")
		}
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		ts.Check(err)
		var wg sync.WaitGroup
		wg.Go(func() { serveDNS(pc) })
		ts.Defer(func() { pc.Close(); wg.Wait() })
		ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(pc.LocalAddr().String()), 0o644))
	}
	testscript.Run(t, params)
}

// serveDNS answers every A question with 127.0.0.1 and every other with no answer, until pc is
// closed.
func serveDNS(pc net.PacketConn) {
	buf := make([]byte, 512)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		q := buf[:n]
		if n < 12 {
			continue
		}
		// The question: labels up to a zero byte, then type and class.
		end := 12
		for end < n && q[end] != 0 {
			end += int(q[end]) + 1
		}
		end += 5
		if end > n {
			continue
		}
		qtype := binary.BigEndian.Uint16(q[end-4:])
		resp := append([]byte{}, q[:end]...)
		resp[2], resp[3] = 0x81, 0x80            // a response, recursion available, no error
		binary.BigEndian.PutUint16(resp[4:], 1)  // one question
		binary.BigEndian.PutUint16(resp[8:], 0)  // no authority
		binary.BigEndian.PutUint16(resp[10:], 0) // no additional
		binary.BigEndian.PutUint16(resp[6:], 0)  // no answer, unless:
		if qtype == 1 {
			binary.BigEndian.PutUint16(resp[6:], 1)
			resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
		}
		_, _ = pc.WriteTo(resp, from)
	}
}

// TestSandboxInfoVerdict: vx info reports the Landlock ABI the kernel answers.
func TestSandboxInfoVerdict(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": "export default { projects: ['packages/*'], tasks: { build: { command: 'true', sandbox: true }, " +
			"lint: { command: 'true', sandbox: { network: true, required: true } } } }\n",
		"packages/app/package.json": `{"name": "app"}`,
	})
	abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		abi = 0
	}
	var doc struct {
		Sandbox struct {
			Value struct {
				Enforced bool `json:"enforced"`
				Host     struct {
					LandlockABI int `json:"landlockAbi"`
				} `json:"host"`
				TasksDeclaring int `json:"tasksDeclaring"`
				TasksRequiring int `json:"tasksRequiring"`
			} `json:"value"`
		} `json:"sandboxReport"`
	}
	if err := json.Unmarshal(cliJSON(t, dir, "info"), &doc); err != nil {
		t.Fatal(err)
	}
	v := doc.Sandbox.Value
	if v.Host.LandlockABI != int(abi) || v.Enforced != (abi > 0) {
		t.Errorf("vx info says Landlock ABI %d (enforced %v); the kernel says %d", v.Host.LandlockABI, v.Enforced, abi)
	}
	if v.TasksDeclaring != 2 || v.TasksRequiring != 1 {
		t.Errorf("tasks declaring %d, requiring %d; want 2 and 1", v.TasksDeclaring, v.TasksRequiring)
	}
}

// TestMCPSandboxRunTasks: under mcp({ sandbox: true }) every task runTasks runs is sandboxed, even
// one that declares none; vx run outside the server runs it as declared; the two keys differ.
func TestMCPSandboxRunTasks(t *testing.T) {
	t.Parallel()
	if !sandbox.Probe().Enforced.Filesystem {
		t.Skip("this host has no Landlock")
	}
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp({ sandbox: true })],
  tasks: {
    build: { command: 'mkdir -p dist && echo built > dist/out.txt', outputs: ['dist/**'] },
    reach: { command: 'echo agent > ../agent.txt', cache: false },
  },
})
`,
		"packages/app/package.json": `{"name": "app"}`,
	})
	s := startRunSession(t, dir)
	var sum struct {
		Summary struct {
			Tasks []struct {
				TaskID            string   `json:"taskId"`
				Status            string   `json:"status"`
				Hash              string   `json:"hash"`
				SandboxViolations []string `json:"sandboxViolations"`
			} `json:"tasks"`
		} `json:"summary"`
	}
	r := mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"reach"}}, "")
	if err := json.Unmarshal(r.structured, &sum); err != nil || len(sum.Summary.Tasks) != 1 {
		t.Fatalf("runTasks(reach): %v %s", err, r.text)
	}
	if task := sum.Summary.Tasks[0]; task.Status != "failed" || len(task.SandboxViolations) == 0 ||
		!strings.Contains(task.SandboxViolations[0], "packages/agent.txt") {
		t.Errorf("runTasks(reach) = %+v, want failed with a violation naming packages/agent.txt", task)
	}
	if _, err := os.Stat(filepath.Join(dir, "packages", "agent.txt")); err == nil {
		t.Errorf("the agent's task wrote outside the workspace's outputs")
	}

	// getRunHistory's row of that run names the violation too.
	h := mustCallRunTool(t, s.cs, "getRunHistory", map[string]any{"task": "reach"}, "")
	if !strings.Contains(string(h.structured), `"sandboxViolations":["packages/agent.txt: write denied by the sandbox"]`) {
		t.Errorf("getRunHistory: %s", h.structured)
	}

	r = mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"build"}}, "")
	if err := json.Unmarshal(r.structured, &sum); err != nil || len(sum.Summary.Tasks) != 1 || sum.Summary.Tasks[0].Status != "miss" {
		t.Fatalf("runTasks(build): %v %s", err, r.text)
	}
	agentHash := sum.Summary.Tasks[0].Hash

	// Outside the server the task runs as declared: unsandboxed, and under another key.
	cliJSON(t, dir, "run", "reach")
	if _, err := os.Stat(filepath.Join(dir, "packages", "agent.txt")); err != nil {
		t.Errorf("vx run reach (no sandbox declared) did not write: %v", err)
	}
	if err := json.Unmarshal(cliJSON(t, dir, "run", "build"), &sum.Summary); err != nil || sum.Summary.Tasks[0].Status != "miss" ||
		sum.Summary.Tasks[0].Hash == agentHash {
		t.Errorf("vx run build after the agent's run: %+v (agent's key %s), want a miss under another key", sum.Summary.Tasks, agentHash)
	}
}
