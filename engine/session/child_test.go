package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The session keeps a child started ahead of the next call (KeepChild), which the next call in
// the same folder takes (TakeChild) rather than starting one: it has started and loaded its config
// by then. A kept child that died, or that was started for another folder, is let go and the call
// starts its own; Close ends the kept child.
func TestChildKeptAhead(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "children.log")
	exe := filepath.Join(dir, "vx")
	script := "#!/bin/sh\necho \"started $$\" >> " + log + "\norder=$(cat <&5)\n[ -n \"$order\" ] && echo \"ordered $$\" >> " + log + "\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s := Open(Options{Exe: exe, KeepChild: true, Environ: []string{"PATH=" + os.Getenv("PATH")}})
	defer s.Close()
	root := t.TempDir()
	// run is one call: it takes the kept child or starts one, orders it, waits for it, and keeps
	// one for the next call, as runTasks does.
	run := func() {
		t.Helper()
		c := s.TakeChild(root)
		if c == nil {
			var err error
			if c, err = s.StartChild(root); err != nil {
				t.Fatal(err)
			}
		}
		defer s.KeepChild(root)
		if _, err := c.Order.Write([]byte("{}")); err != nil {
			t.Fatal(err)
		}
		c.Order.Close()
		<-c.Done()
		c.ClosePipes()
		if res, err := c.Result(); err != nil || res.ExitCode != 0 {
			t.Fatalf("the child ended %+v, %v", res, err)
		}
	}
	lines := func() []string {
		data, _ := os.ReadFile(log)
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	// kept waits for the child kept after a call, and answers its pid.
	kept := func() string {
		t.Helper()
		for {
			s.child.mu.Lock()
			c := s.child.kept
			s.child.mu.Unlock()
			if c != nil {
				for {
					if l := lines(); strings.HasPrefix(l[len(l)-1], "started ") {
						return strings.TrimPrefix(l[len(l)-1], "started ")
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	lastOrdered := func() string {
		l := lines()
		for i := len(l) - 1; i >= 0; i-- {
			if strings.HasPrefix(l[i], "ordered ") {
				return strings.TrimPrefix(l[i], "ordered ")
			}
		}
		return ""
	}

	run() // no child kept yet: the call starts its own
	pid := kept()
	run()
	if got := lastOrdered(); got != pid {
		t.Fatalf("the second call ordered %s, not the child kept for it (%s): %q", got, pid, lines())
	}

	// A kept child that died is let go.
	pid = kept()
	n, _ := strconv.Atoi(pid)
	if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.child.mu.Lock()
	dead := s.child.kept
	s.child.mu.Unlock()
	<-dead.Done()
	run()
	if got := lastOrdered(); got == pid {
		t.Fatalf("the call ordered the kept child that died: %q", lines())
	}

	// One kept for another folder is let go.
	pid = kept()
	n, _ = strconv.Atoi(pid)
	root = t.TempDir()
	run()
	if got := lastOrdered(); got == pid {
		t.Fatalf("a call in another folder ordered the child kept for the first: %q", lines())
	}
	if err := syscall.Kill(n, 0); err == nil {
		t.Fatalf("the kept child %d of the first folder is still alive", n)
	}

	pid = kept()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	n, _ = strconv.Atoi(pid)
	if err := syscall.Kill(n, 0); err == nil {
		t.Fatalf("the kept child %d is alive after Close", n)
	}
	if l := lines(); l[len(l)-1] != "started "+pid {
		t.Fatalf("the kept child was ordered after Close: %q", l)
	}
}
