//go:build linux

package proc

import (
	"bytes"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// KillMarked finds a marked process wherever it went (here a session of its own, its parent
// gone), and its descendants that cleared their environment; it leaves unmarked ones alone.
func TestKillMarked(t *testing.T) {
	const marker = "VX_PROC_TEST_SWEEP=" + "1"
	var out bytes.Buffer
	res := run(t, Spec{
		// Each daemon in a session of its own, its parent gone; one of them cleared its environment.
		Shell: `setsid sh -c 'env -i sleep 100 & echo $! > inner; exec sleep 100' & a=$!; echo $a; ` +
			`setsid sleep 100 & b=$!; echo $b; ` +
			`until [ -s inner ]; do sleep 0.01; done; cat inner; ` +
			`for p in $a $b; do until [ "$(cut -d' ' -f6 /proc/$p/stat)" = "$p" ]; do sleep 0.01; done; done`,
		Dir:    t.TempDir(),
		Env:    testEnv(marker),
		Stdout: &out,
		Grace:  100 * time.Millisecond, // the daemons hold stdout
	})
	if res.ExitCode != 0 {
		t.Fatalf("got %+v", res)
	}
	var pids []int
	for _, f := range strings.Fields(out.String()) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("output %q", out.String())
		}
		pids = append(pids, pid)
	}
	if len(pids) != 3 {
		t.Fatalf("output %q", out.String())
	}
	unmarked := exec.Command("sleep", "100")
	unmarked.Env = testEnv()
	unmarked.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := unmarked.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = unmarked.Process.Kill()
		_ = unmarked.Wait()
	}()

	if err := KillMarked(marker, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		waitDead(t, pid)
	}
	if !alive(unmarked.Process.Pid) {
		t.Errorf("an unmarked process was killed")
	}
	if err := KillMarked(marker, time.Second); err != nil {
		t.Errorf("a sweep with nothing to find: %v", err)
	}
}
