package runner

import (
	"path/filepath"
	"strings"

	"github.com/vzn/vx/engine/vxerr"
)

// The variables every task's command gets that mark it as run by vx: the task's id and the
// workspace root of its run. A `vx run` started with both, for the same root, is a task of that
// run running vx on its own workspace: it would wait on its own task's lock (a run of itself), or
// run beside the run that started it, outside its graph. Run refuses it.
const (
	EnvOuterTask = "VX_OUTER_TASK"
	EnvOuterRoot = "VX_OUTER_ROOT"
)

// outerMarks answers env with the marks of task of the run of root in place of any it held.
func outerMarks(env []string, taskID, root string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if !strings.HasPrefix(kv, EnvOuterTask+"=") && !strings.HasPrefix(kv, EnvOuterRoot+"=") {
			out = append(out, kv)
		}
	}
	return append(out, EnvOuterTask+"="+taskID, EnvOuterRoot+"="+root)
}

// refuseNested answers the refusal of a run started by a task of a run of the same workspace
// (getenv holds its marks), naming that task; nil otherwise.
func refuseNested(root string, getenv func(string) string) error {
	outerRoot, outerTask := getenv(EnvOuterRoot), getenv(EnvOuterTask)
	if outerRoot == "" || outerTask == "" || !sameDir(outerRoot, root) {
		return nil
	}
	return vxerr.Usagef("vx run inside %s, a task of a run of this workspace: a task cannot run vx run in its own workspace (declare what it needs in dependsOn)", outerTask)
}

// sameDir reports whether a and b name one folder, through symlinks where they resolve.
func sameDir(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}
