//go:build linux

package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// inheritedHelper is the body of TestInheritedDescriptors' child, which was handed a file at fd 7
// without close-on-exec, as `exec 7>file; vx run` hands it to vx. With guard set it does what vx
// does at start (CloseInheritedOnExec). It runs a child that writes to fd 7, under a supervisor
// or not, and prints what the child said.
func inheritedHelper() int {
	if os.Getenv("VX_PROC_TEST_GUARD") == "1" {
		if err := CloseInheritedOnExec(); err != nil {
			fmt.Println(err)
			return 1
		}
	}
	var sup *Supervisor
	if os.Getenv("VX_PROC_TEST_SUPERVISED") == "1" {
		sup = testSupervisor()
	}
	var out bytes.Buffer
	_, err := Run(context.Background(), Spec{Shell: `(echo leaked >&7) 2>/dev/null && echo "fd 7 open"; echo done`, Env: testEnv(),
		Stdout: &out, Stderr: &out, Supervisor: sup})
	fmt.Print(out.String())
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// A descriptor vx inherited without close-on-exec reaches no child: a supervisor keeps it from its
// child on its own, and a process that called CloseInheritedOnExec keeps it from every child.
func TestInheritedDescriptors(t *testing.T) {
	for _, tc := range []struct {
		name              string
		guard, supervised bool
	}{
		{"supervised, the supervisor alone", false, true},
		{"unsupervised, CloseInheritedOnExec", true, false},
		{"supervised, both", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leak := filepath.Join(t.TempDir(), "leak.txt")
			f, err := os.Create(leak)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), helperKey+"=inherited", markerKey+"="+markerValue(),
				fmt.Sprintf("VX_PROC_TEST_GUARD=%d", b2i(tc.guard)), fmt.Sprintf("VX_PROC_TEST_SUPERVISED=%d", b2i(tc.supervised)))
			cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, f} // fd 7, without close-on-exec in the helper (3 is the supervisor's report)
			out, err := cmd.CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("done")) {
				t.Fatalf("helper: %v\n%s", err, out)
			}
			data, _ := os.ReadFile(leak)
			if bytes.Contains(out, []byte("fd 7 open")) || len(data) > 0 {
				t.Errorf("the child wrote to the inherited fd 7: output %q, file %q", out, data)
			}
		})
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
