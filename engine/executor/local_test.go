package executor

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vzn/vx/proc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// buffer is a LogWriter that keeps everything.
type buffer struct{ bytes.Buffer }

func (b *buffer) Log() []byte { return b.Bytes() }

// TestLocal runs real commands: one that passes (its log, its usage, its outputs in its folder and
// the input check asked once it started), one that fails (no check), one that outlives its
// timeout, and one its preparation refuses (nothing starts).
func TestLocal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var started, checked int
	task := func(cmd string) Task {
		return Task{ID: "p#t", Command: cmd, Dir: dir, Root: dir, Env: []string{"PATH=" + os.Getenv("PATH")}, Output: &buffer{},
			Started: func() { started++ },
			CheckInputs: func(context.Context) ([]string, error) {
				checked++
				return []string{"src/in.txt"}, nil
			}}
	}
	res, err := Local{}.Run(ctx, task("echo out; echo err >&2; echo made > out.txt"))
	if err != nil || !res.Passed() || string(res.Log) != "out\nerr\n" || res.Usage.Wall <= 0 || res.OutputsDir != dir {
		t.Fatalf("a passing command: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(res.OutputsDir, "out.txt")); err != nil {
		t.Fatalf("its output is not in its folder: %v", err)
	}
	if !res.Inputs.Checked || !slices.Equal(res.Inputs.Changed, []string{"src/in.txt"}) || !res.Inputs.Moved() || started != 1 || checked != 1 {
		t.Fatalf("the input check after a pass: %+v (started %d, checked %d)", res.Inputs, started, checked)
	}

	res, err = Local{}.Run(ctx, task("exit 3"))
	if err != nil || res.Passed() || res.ExitCode != 3 || res.Inputs.Checked || checked != 1 {
		t.Fatalf("a failing command: %+v, %v (checked %d)", res, err, checked)
	}

	slow := task("sleep 30")
	slow.Timeout, slow.Grace = 50*time.Millisecond, 10*time.Millisecond
	if res, err = (Local{}).Run(ctx, slow); err != nil || !res.Cancelled || !res.TimedOut || res.Passed() {
		t.Fatalf("a command past its timeout: %+v, %v", res, err)
	}

	refused := task("echo never > refused.txt")
	refused.Confine = func(*proc.Spec) error { return &Refusal{Message: "vx: no sandbox here\n"} }
	var r *Refusal
	if _, err = (Local{}).Run(ctx, refused); !errors.As(err, &r) || r.Message != "vx: no sandbox here\n" || started != 3 {
		t.Fatalf("a refused command: %v (started %d)", err, started)
	}
	if _, err := os.Stat(filepath.Join(dir, "refused.txt")); err == nil {
		t.Fatal("a refused command ran")
	}
}
