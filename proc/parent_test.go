//go:build linux

package proc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// WatchParent tells a parent that asked for a death signal and died (the vx mcp of a `vx run`,
// SIGKILLed) from one that did not ask (a shell that ran `nohup vx run`).
func TestWatchParent(t *testing.T) {
	for _, deathSignal := range []bool{true, false} {
		t.Run(fmt.Sprintf("deathSignal=%v", deathSignal), func(t *testing.T) {
			report := filepath.Join(t.TempDir(), "report")
			parent := exec.Command(os.Args[0], "-test.run=^$")
			parent.Env = append(os.Environ(), helperKey+"=watch-parent-middle", markerKey+"="+markerValue(),
				"VX_PROC_TEST_REPORT="+report, "VX_PROC_TEST_DEATH_SIGNAL="+strconv.FormatBool(deathSignal))
			out, err := parent.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := parent.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			child, convErr := strconv.Atoi(strings.TrimSpace(line))
			if err != nil || convErr != nil {
				_ = parent.Process.Kill()
				_ = parent.Wait()
				t.Fatalf("the child's pid: %q, %v", line, err)
			}
			defer waitDead(t, child)
			_ = parent.Process.Signal(syscall.SIGKILL)
			_ = parent.Wait()
			if !deathSignal {
				// No death signal: the child learns of nothing until told, and then it is not
				// its parent's death it is told of, even re-parented.
				_ = syscall.Kill(child, syscall.SIGHUP)
			}
			want := "deathSignal=0 died=false"
			if deathSignal {
				want = fmt.Sprintf("deathSignal=%d died=true", syscall.SIGHUP)
			}
			deadline := time.Now().Add(5 * time.Second)
			for {
				got, _ := os.ReadFile(report)
				if strings.Count(string(got), "=") == 2 {
					if string(got) != want {
						t.Errorf("the child reported %q, want %q", got, want)
					}
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("the child reported %q", got)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// watchParentMiddle starts watchParentChild, with a death signal or not, prints its pid and waits
// to be killed.
func watchParentMiddle() int {
	spec := Spec{
		Path: os.Args[0], Args: []string{"-test.run=^$"},
		Env:    append(os.Environ(), helperKey+"=watch-parent-child"),
		Stdout: os.Stdout,
	}
	if os.Getenv("VX_PROC_TEST_DEATH_SIGNAL") == "true" {
		spec.ParentDeathSignal = syscall.SIGHUP
	}
	if _, err := Run(context.Background(), spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// watchParentChild prints its pid, then on SIGHUP or SIGTERM writes to $VX_PROC_TEST_REPORT
// the death signal its parent asked for and whether the signal it got tells of its parent's death.
func watchParentChild() int {
	parent := WatchParent()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGHUP)
	fmt.Println(os.Getpid())
	report := fmt.Sprintf("deathSignal=%d died=%v", parent.DeathSignal(), parent.Died(<-signals))
	if err := os.WriteFile(os.Getenv("VX_PROC_TEST_REPORT"), []byte(report), 0o644); err != nil {
		return 1
	}
	return 0
}

func TestParentDied(t *testing.T) {
	self, other := os.Getppid(), os.Getppid()+1
	for _, tc := range []struct {
		parent Parent
		sig    os.Signal
		want   bool
	}{
		{Parent{pid: self}, syscall.SIGHUP, false},                                // no death signal asked for
		{Parent{pid: other}, syscall.SIGTERM, false},                              // re-parented, no death signal
		{Parent{pid: self, deathSignal: syscall.SIGHUP}, syscall.SIGHUP, true},    // a signal the parent never sends
		{Parent{pid: self, deathSignal: syscall.SIGHUP}, syscall.SIGTERM, false},  // a stop, not a death
		{Parent{pid: self, deathSignal: syscall.SIGTERM}, syscall.SIGTERM, false}, // ambiguous, still its child
		{Parent{pid: other, deathSignal: syscall.SIGTERM}, syscall.SIGTERM, true}, // ambiguous, re-parented
		{Parent{pid: other, deathSignal: syscall.SIGINT}, syscall.SIGTERM, false}, // not the death signal
	} {
		if got := tc.parent.Died(tc.sig); got != tc.want {
			t.Errorf("%+v.Died(%v) = %v, want %v", tc.parent, tc.sig, got, tc.want)
		}
	}
}
