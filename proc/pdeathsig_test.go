//go:build linux

package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestParentDeathSignal: a child started with ParentDeathSignal dies when its supervisor is
// killed with SIGKILL, which no cancellation of the supervisor's can handle.
func TestParentDeathSignal(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), helperKey+"=orphaned-parent", markerKey+"="+markerValue())
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		t.Fatalf("read the child's pid: %v", err)
	}
	child, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("pid line %q", line)
	}
	_ = parent.Process.Signal(syscall.SIGKILL)
	_ = parent.Wait()
	waitDead(t, child)
}

// orphanedParentHelper starts `sleep 100` with ParentDeathSignal, prints its pid and waits to be
// killed.
func orphanedParentHelper() int {
	_, err := Run(context.Background(), Spec{
		Path: "sleep", Args: []string{"100"}, Env: testEnv(),
		ParentDeathSignal: syscall.SIGTERM,
		OnStart:           func(pid int) { fmt.Println(pid) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
