package info

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const workspaceTS = `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  tasks: {
    build: { command: 'true', outputs: ['dist/**'] },
    test: { command: 'true', dependsOn: ['build'], sandbox: { required: false } },
  },
})
`

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func answer(t *testing.T, dir string, getenv func(string) string, concurrency int) *Document {
	t.Helper()
	doc, err := Answer(context.Background(), workspace.NewLoader(workspace.Options{Dir: dir, Getenv: getenv}), "v9.9.9", concurrency, getenv)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestAnswerCountsAndSources(t *testing.T) {
	dir := testkit.TempTree(t, map[string]string{
		"vx.workspace.ts":     workspaceTS,
		"packages/a/index.js": "",
		"packages/b/index.js": "",
		"packages/b/vx.project.ts": `import { defineProject } from '@vzn/vx/config'
export default defineProject({ tasks: { test: false } })
`,
	})
	doc := answer(t, dir, env(map[string]string{"VX_MEMORY_BUDGET": "2GiB"}), 3)
	if doc.Versions.VX != "v9.9.9" || !strings.HasPrefix(doc.Versions.Go, "go") {
		t.Errorf("versions: %+v", doc.Versions)
	}
	if doc.Projects != 2 || doc.Tasks != 3 {
		t.Errorf("projects %d tasks %d, want 2 and 3 (b opts out of test)", doc.Projects, doc.Tasks)
	}
	if doc.Workers.Value != 3 || doc.Workers.Source == "" {
		t.Errorf("workers: %+v, want 3 from the flag", doc.Workers)
	}
	if doc.MemoryBudget.Value != 2<<30 || doc.MemoryBudget.Source != "env" {
		t.Errorf("memory budget: %+v", doc.MemoryBudget)
	}
	if len(doc.ConfigErrors) != 0 {
		t.Errorf("config errors: %+v", doc.ConfigErrors)
	}
	if doc.Git.Available {
		t.Errorf("a folder outside git reads as a repository: %+v", doc.Git)
	}
	// info is a read: it never creates the state folder.
	if _, err := os.Stat(filepath.Join(dir, ".vx")); !os.IsNotExist(err) {
		t.Fatalf("info created .vx: %v", err)
	}
	if !doc.Cache.Known {
		t.Errorf("cache section unknown: %+v", doc.Cache)
	}
	var text bytes.Buffer
	if err := doc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"vx v9.9.9", "projects   2, tasks 3", "workers    3", "memory     2048 MiB", "no index yet", "git        not a git repository"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}

func TestAnswerReportsABrokenProjectConfig(t *testing.T) {
	dir := testkit.TempTree(t, map[string]string{
		"vx.workspace.ts":          workspaceTS,
		"packages/a/index.js":      "",
		"packages/b/vx.project.ts": "export default {\n  name: ,\n}\n",
	})
	doc := answer(t, dir, env(nil), 0)
	if len(doc.ConfigErrors) != 1 {
		t.Fatalf("config errors: %+v", doc.ConfigErrors)
	}
	e := doc.ConfigErrors[0]
	if e.File != "packages/b/vx.project.ts" || e.Line != 2 {
		t.Errorf("error location: %+v", e)
	}
	if doc.Projects != 1 {
		t.Errorf("projects %d, want the one that loaded", doc.Projects)
	}
	var text bytes.Buffer
	if err := doc.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "config     did not load: packages/b/vx.project.ts:2:") {
		t.Errorf("text does not name the broken config:\n%s", text.String())
	}
}

func TestAnswerGitState(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := testkit.TempTree(t, map[string]string{"vx.workspace.ts": workspaceTS, "packages/a/index.js": ""})
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "trunk")
	doc := answer(t, dir, env(nil), 0)
	if !doc.Git.Available || doc.Git.Branch != "trunk" || doc.Git.Head != "" || !doc.Git.Dirty {
		t.Errorf("fresh repository: %+v", doc.Git)
	}
	run("add", ".")
	run("commit", "-q", "-m", "x")
	doc = answer(t, dir, env(nil), 0)
	if doc.Git.Dirty || len(doc.Git.Head) != 40 {
		t.Errorf("clean commit: %+v", doc.Git)
	}
}

func TestInfoWithoutWorkspace(t *testing.T) {
	doc, err := Info(context.Background(), Options{Version: "v1", Root: t.TempDir(), Getenv: env(nil),
		LoadErrs: []error{os.ErrNotExist}})
	if err != nil {
		t.Fatal(err)
	}
	if doc.Sandbox.Known || !strings.Contains(doc.Sandbox.Note, "not yet known") {
		t.Errorf("a section nobody fills: %+v", doc.Sandbox)
	}
	if len(doc.ConfigErrors) != 1 || doc.ConfigErrors[0].Message != os.ErrNotExist.Error() {
		t.Errorf("config errors: %+v", doc.ConfigErrors)
	}
	// The document's lists are never null: clients index them.
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(`"plugins":null`)) || bytes.Contains(raw, []byte(`"configErrors":null`)) {
		t.Errorf("null list in %s", raw)
	}
}

func TestWorkersRefusesBadEnv(t *testing.T) {
	if _, err := Workers(0, env(map[string]string{"VX_CONCURRENCY": "lots"})); err == nil {
		t.Fatal("VX_CONCURRENCY=lots accepted")
	}
	s, err := Workers(0, env(map[string]string{"VX_CONCURRENCY": "5"}))
	if err != nil || s.Value != 5 {
		t.Fatalf("VX_CONCURRENCY=5: %+v %v", s, err)
	}
}

// TestSupervisorNamed checks that the text answer names the supervisor a run uses: the program
// VX_SANDBOX_HELPER names, vx itself without vx-sandbox next to vx, none off Linux.
func TestSupervisorNamed(t *testing.T) {
	helper := filepath.Join(t.TempDir(), "my-supervisor")
	for _, tc := range []struct {
		goos   string
		getenv func(string) string
		kind   string
		want   string
	}{
		{"linux", env(map[string]string{"VX_SANDBOX_HELPER": helper}), "helper", "supervisor " + helper + " (VX_SANDBOX_HELPER)\n"},
		{"linux", env(nil), "vx", "supervisor vx itself (vx __supervise: no vx-sandbox next to vx, so each task pays a start of vx)\n"},
		{"darwin", env(nil), "none", "supervisor none: tasks are not supervised on darwin"},
	} {
		s := SupervisorFor(tc.goos, tc.getenv)
		var b bytes.Buffer
		if err := (&Document{Supervisor: s}).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if s.Kind != tc.kind || !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s: kind %q, text\n%s\nwant a line %q", tc.goos, s.Kind, b.String(), tc.want)
		}
	}
	dir := testkit.TempTree(t, map[string]string{"vx.workspace.ts": workspaceTS, "packages/a/index.js": ""})
	doc := answer(t, dir, env(map[string]string{"VX_SANDBOX_HELPER": helper}), 0)
	if runtime.GOOS == "linux" && (doc.Supervisor.Program != helper ||
		doc.Sandbox.Value.(SandboxReport).Helper != doc.Supervisor.Note) {
		t.Errorf("the answer's supervisor %+v, sandbox helper %+v", doc.Supervisor, doc.Sandbox.Value)
	}
}

// vx info's text names the orphan blobs when there are some, and says nothing of them otherwise.
func TestTextNamesOrphans(t *testing.T) {
	for orphans, want := range map[Orphans]string{
		{Artifacts: 3, Bytes: 5 << 10}: "orphans    3 blob(s), 5 KiB, that no cache entry references: vx cache prune removes them\n",
		{}:                             "",
	} {
		var b bytes.Buffer
		if err := (&Document{Facts: Facts{Orphans: orphans}}).WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); (want == "") == strings.Contains(got, "orphans") || !strings.Contains(got, want) {
			t.Errorf("orphans %+v: text %q, want %q", orphans, got, want)
		}
	}
}
