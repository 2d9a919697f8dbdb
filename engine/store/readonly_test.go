package store

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/internal/testkit"
)

// recordHistory writes a state folder with one finished run of one task and closes it, as a vx
// run leaves it: the WAL checkpointed into index.db.
func recordHistory(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	st, err := Open(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	id := NewRunID(start)
	exit := 0
	for _, err := range []error{
		st.BeginRun(ctx, Run{ID: id, Started: start, PID: os.Getpid(), Host: "h"}),
		st.Record(ctx, Batch{Executions: []Execution{Execution{RunID: id, TaskID: "app#build", Project: "app", Task: "build", Status: "miss", ExitCode: &exit, Started: start, Hash: "abc"}}}),
		st.FinishRun(ctx, id, "ok", 0, start.Add(time.Second)),
		st.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// folderState lists a folder's entries with their size, mode and modification time.
func folderState(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %v %d", p, fi.Size(), fi.Mode(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readHistory reads the folder as the history readers do (vx last, vx why, the MCP history
// tools): runs, a run's executions, the cache counts and a snapshot.
func readHistory(ctx context.Context, dir string) error {
	st, err := OpenReadOnly(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := st.Runs(ctx, RunQuery{})
	if err != nil {
		return err
	}
	if len(runs) != 1 {
		return fmt.Errorf("%d runs, want 1", len(runs))
	}
	execs, err := st.Executions(ctx, runs[0].ID)
	if err != nil || len(execs) != 1 {
		return fmt.Errorf("executions %v: %v", execs, err)
	}
	if _, err := st.CountCache(ctx, "", time.Now().Add(-time.Hour)); err != nil {
		return err
	}
	if _, err := st.FlakyTasks(ctx); err != nil {
		return err
	}
	return st.Snapshot(ctx, func(sn *Snapshot) error {
		_, err := sn.Runs(ctx, RunQuery{})
		return err
	})
}

// makeReadOnly is `chmod -R a-w` of dir, undone when the test ends.
func makeReadOnly(t *testing.T, dir string) {
	t.Helper()
	var paths []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	})
	slices.Reverse(paths) // the files before their folder
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, fi.Mode().Perm()&^0o222); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(p, fi.Mode().Perm()) })
	}
}

// A read-only state folder (another user's checkout, a CI cache restored read-only) is read, and
// nothing in it is written: no -wal or -shm file, no index, the index file untouched. Tests run
// as root, whom no permission stops, so what is checked is that no write happened at all.
func TestReadOnlyFolderIsReadAndNotWritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".vx")
	recordHistory(t, dir)
	makeReadOnly(t, dir)
	before := folderState(t, dir)
	if err := readHistory(context.Background(), dir); err != nil {
		t.Fatalf("reading a read-only state folder: %v", err)
	}
	if after := folderState(t, dir); !slices.Equal(before, after) {
		t.Fatalf("reading a read-only state folder changed it:\nbefore %s\nafter  %s", strings.Join(before, "\n       "), strings.Join(after, "\n       "))
	}
	if got := Inspect(context.Background(), dir); got.State != "ok" {
		t.Fatalf("inspect: %+v", got)
	}
}

// readOnlyHelperEnv names the state folder TestReadOnlyHelper reads, in a child run as another user.
const readOnlyHelperEnv = "VX_STORE_READ_AS_OTHER_USER"

// TestReadOnlyHelper is the child of TestReadOnlyFolderReadByAnotherUser: it reads the folder.
func TestReadOnlyHelper(t *testing.T) {
	dir := os.Getenv(readOnlyHelperEnv)
	if dir == "" {
		t.Skip("run by TestReadOnlyFolderReadByAnotherUser")
	}
	if err := readHistory(context.Background(), dir); err != nil {
		t.Fatalf("uid %d reading %s: %v", os.Getuid(), dir, err)
	}
}

// A user who may not write the state folder at all reads it: SQLite cannot create the -shm file a
// WAL reader needs there, so the index is opened immutable. Run as nobody through setpriv.
func TestReadOnlyFolderReadByAnotherUser(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if os.Getuid() != 0 || err != nil {
		t.Skip("needs root and setpriv to run a child as another user")
	}
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} { // let nobody reach the folder
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(base, ".vx")
	recordHistory(t, dir)
	// The test binary's own folder is root's alone: nobody runs a copy.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(base, "store.test")
	testkit.CopyFile(t, self, bin, 0o755)
	before := folderState(t, dir)
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", bin, "-test.run=^TestReadOnlyHelper$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), readOnlyHelperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestReadOnlyHelper") {
		t.Fatalf("reading as nobody: %v\n%s", err, out)
	}
	if after := folderState(t, dir); !slices.Equal(before, after) {
		t.Fatalf("reading as nobody changed the folder:\nbefore %s\nafter  %s", strings.Join(before, "\n       "), strings.Join(after, "\n       "))
	}
}
