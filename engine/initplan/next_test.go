package initplan

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// checkoutRoot is the root of the vx checkout these tests run in (a clone of vx).
func checkoutRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// shell runs script with sh -c in dir and answers its stdout; a failure ends the test, with
// what the script wrote on stderr.
func shell(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("in %s: %s: %v\n%s%s", dir, script, err, out, stderr.String())
	}
	return string(out)
}

// unpublishedLines answers the commands of the plan's steps for vx before it is published: the
// indented comment lines after the install step, "#" taken away.
func unpublishedLines(t *testing.T, p *Plan) []string {
	t.Helper()
	var lines []string
	for _, n := range p.Next {
		if cmd, ok := strings.CutPrefix(n, "#   "); ok {
			lines = append(lines, cmd)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("next steps: %q, want two indented commands after the install step", p.Next)
	}
	return lines
}

// TestInitNextStepsBeforePublishing runs the next steps vx init gives for vx before its packages
// are on the npm registry, as written: npm/build.sh in this clone for this platform, then the
// repository's package manager adding the tarballs from npm/dist — offline, so that nothing comes
// from the registry — after which the installed vx runs; and go install of both programs.
func TestInitNextStepsBeforePublishing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds vx's npm packages and installs them: not in -short")
	}
	for _, tool := range []string{"node", "npm", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s on PATH: the steps need it", tool)
		}
	}
	repoDir := writeFiles(t, map[string]string{
		"package.json":            `{"name": "r", "private": true, "workspaces": ["packages/*"]}`,
		"packages/a/package.json": `{"name": "a", "scripts": {"build": "echo built"}}`,
	})
	p, err := Init(Options{Dir: repoDir, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Next[0] != "npm install -D @vzn/vx @vzn/vx-mcp" {
		t.Fatalf("next steps: %q", p.Next)
	}
	lines := unpublishedLines(t, p)
	clone := checkoutRoot(t)
	dist := t.TempDir()

	// In the clone: the build, into a folder of the test's rather than the checkout's npm/dist.
	build, ok := strings.CutSuffix(lines[0], "   # in the clone")
	if !ok || !strings.Contains(build, "bash npm/build.sh --platforms $p") {
		t.Fatalf("the build step: %q", lines[0])
	}
	platform := strings.TrimSpace(shell(t, clone, nil, build+" --out "+dist+" >&2 && echo $p"))
	// Here: the add, from that folder.
	add := strings.Replace(lines[1], "d=/path/to/vx/npm/dist;", "d="+dist+"; p="+platform+";", 1)
	shell(t, repoDir, []string{"npm_config_offline=true", "npm_config_audit=false", "npm_config_fund=false"}, add)
	if out := shell(t, repoDir, nil, "node_modules/.bin/vx --version"); !strings.Contains(out, "vx") {
		t.Errorf("the installed vx says %q", out)
	}
	pkg, _ := os.ReadFile(filepath.Join(repoDir, "package.json"))
	if !strings.Contains(string(pkg), `"@vzn/vx"`) || !strings.Contains(string(pkg), `"@vzn/vx-mcp"`) {
		t.Errorf("package.json after the step: %s", pkg)
	}

	// Without the packages: go install, from the clone, of both programs.
	last := p.Next[slices.Index(p.Next, "# before @vzn/vx is on the npm registry, build its packages for this platform in a clone of vx and add them from there:")+3]
	_, inClone, ok := strings.Cut(last, "in a clone of vx: ")
	if !ok {
		t.Fatalf("the go install step: %q", last)
	}
	bin := t.TempDir()
	shell(t, clone, []string{"GOBIN=" + bin}, strings.TrimSuffix(inClone, ")"))
	for _, prog := range []string{"vx", "vx-sandbox"} {
		if _, err := os.Stat(filepath.Join(bin, prog)); err != nil {
			t.Errorf("go install as the step says did not install %s: %v", prog, err)
		}
	}
}
