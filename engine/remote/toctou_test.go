package remote_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/summary"
)

// TestBazelRemoteInputEditedWhileItRuns: checkout A builds lib from v2 while v3 is written into
// its source; lib's build reads v3. Nothing of that run reaches the shared cache under v2's keys
// (neither lib's entry nor those of mid and app, which ran on lib's outputs): A, back at v2, runs
// lib again, and a clean checkout at v2 gets no hit and builds v2's outputs.
func TestBazelRemoteInputEditedWhileItRuns(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	cfg := bazelConfig(srv.URL, "")
	gate := t.TempDir()
	// lib's build waits at the gate, once it began, before it reads its source.
	wait := `if [ "$(basename "$PWD")" = lib ]; then touch '` + gate + `/started'; while [ ! -f '` + gate + `/go' ]; do sleep 0.02; done; fi
`
	a := checkout(t, cfg, wait)
	libSource := filepath.Join(a, "packages/lib/src/a.txt")
	v2, err := os.ReadFile(libSource)
	if err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(vxBinary(t), "run", "build", "--format", "json")
	cmd.Dir = a
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "VX_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "TASK_SECRET="+secretValue)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(ended)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-ended
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(gate, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lib's build never started:\n%s", stderr.String())
		}
	}
	if err := os.WriteFile(libSource, []byte("lib source v3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ended:
	case <-time.After(90 * time.Second):
		t.Fatal("vx run did not end")
	}
	var sum summary.Summary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("vx run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	want := map[string][]string{"lib#build": {"src/a.txt"}, "mid#build": {"//packages/lib/src/a.txt"}, "app#build": {"//packages/lib/src/a.txt"}}
	for _, task := range sum.Tasks {
		if task.Status != "miss" || !slices.Equal(task.InputsChangedDuringRun, want[task.TaskID]) {
			t.Errorf("%s: %s with inputsChangedDuringRun %q, want a miss with %q", task.TaskID, task.Status,
				task.InputsChangedDuringRun, want[task.TaskID])
		}
	}
	if rc := sum.RemoteCache; rc == nil || rc.Uploads != 0 {
		t.Errorf("A uploaded what its run made: %+v\n%s", rc, stderr.String())
	}

	// A back at v2, its remote cache off: its local cache holds no entry of that run either.
	if err := os.WriteFile(libSource, v2, 0o644); err != nil {
		t.Fatal(err)
	}
	ra := vxRun(t, a, nil, "build", "--remote-cache=off")
	mustPass(t, "A at v2", ra)
	for _, task := range ra.sum.Tasks {
		if task.TaskID == "lib#build" && task.Status != "miss" {
			t.Errorf("A at v2: lib#build %s, want a miss", task.Status)
		}
	}
	// (lib's build also reads the other projects' outputs, which A's run left.)
	if out, _ := os.ReadFile(filepath.Join(a, "packages/lib/dist/out.txt")); !bytes.HasPrefix(out, v2) {
		t.Errorf("A at v2: lib's outputs are not v2's:\n%s", out)
	}

	// A clean checkout at v2 (lib's gate open), the remote cache on: no entry of v2's keys
	// holds v3's outputs.
	if err := os.WriteFile(filepath.Join(gate, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	b := checkout(t, cfg, wait)
	rb := vxRun(t, b, nil, "build")
	mustPass(t, "B", rb)
	if got := sources(rb); got["run"] != 3 {
		t.Errorf("a clean checkout at v2: %v, want 3 tasks run (no remote hit)", got)
	}
	for _, p := range []string{"lib", "mid", "app"} {
		out, err := os.ReadFile(filepath.Join(b, "packages", p, "dist/out.txt"))
		if err != nil || bytes.Contains(out, []byte("v3")) {
			t.Errorf("the clean checkout's %s outputs hold v3's (%v):\n%s", p, err, out)
		}
	}
}
