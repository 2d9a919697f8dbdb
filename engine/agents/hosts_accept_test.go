package agents_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// The real hosts, pinned (checked with npm view NAME version), installed once into the user's
// cache folder outside the checkout.
const (
	claudePackage = "@anthropic-ai/claude-code@2.1.332"
	geminiPackage = "@google/gemini-cli@0.61.0"
)

// hostCLI installs pkg (once) under ~/.cache/vx-test and returns the path of its bin; the test is
// skipped, saying why, only where npm cannot install it.
func hostCLI(t *testing.T, pkg, bin string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("installs " + pkg + " (minutes the first time): not in -short; TestHostFormats checks the files there")
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "vx-test", "agents-"+bin+"-"+pkg[strings.LastIndex(pkg, "@")+1:])
	exe := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(exe); err == nil {
		return exe
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skipf("npm is not installed, so %s cannot be: the written files are checked by TestHostFormats", pkg)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, pkg)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm cannot install %s here (%v): the written files are checked by TestHostFormats\n%s", pkg, err, out)
	}
	return exe
}

// vxBinary builds vx into a temp folder and returns that folder.
func vxBinary(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "vx"), "github.com/vzn/vx/cmd/vx")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build vx: %v\n%s", err, out)
	}
	return dir
}

// hostWorkspace is a one-project workspace declaring mcp(), with vx init --agents run in it, and
// the environment to run a host in: a HOME of its own and vx on the PATH.
func hostWorkspace(t *testing.T, hosts string) (root string, env []string) {
	t.Helper()
	bin := vxBinary(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"vx.workspace.ts":  "import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\nexport default defineWorkspace({ projects: ['pkg'], plugins: [mcp()], tasks: { build: { command: 'true' } } })\n",
		"pkg/package.json": `{"name": "a"}`,
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	home := t.TempDir()
	env = append(os.Environ(), "HOME="+home, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1", "CI=1")
	run(t, root, env, filepath.Join(bin, "vx"), "init", "--agents", hosts)
	return root, env
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return string(out)
}

func writeJSON(t *testing.T, path string, doc any) {
	t.Helper()
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func homeOf(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if h, ok := strings.CutPrefix(env[i], "HOME="); ok {
			return h
		}
	}
	return ""
}

// Claude Code lists vx from .mcp.json as awaiting approval, and once approved the way it stores an
// approval, connects to it.
func TestClaudeCodeConnects(t *testing.T) {
	claude := hostCLI(t, claudePackage, "claude")
	root, env := hostWorkspace(t, "claude")
	out := run(t, root, env, claude, "mcp", "list")
	if !regexp.MustCompile(`(?im)^vx:.*(approv|pending)`).MatchString(out) {
		t.Fatalf("claude mcp list before approval:\n%s", out)
	}
	writeJSON(t, filepath.Join(homeOf(env), ".claude.json"), map[string]any{
		"projects": map[string]any{root: map[string]any{"enabledMcpjsonServers": []string{"vx"}, "hasTrustDialogAccepted": true}},
	})
	out = run(t, root, env, claude, "mcp", "list")
	t.Logf("claude mcp list:\n%s", out)
	if !regexp.MustCompile(`(?m)^vx:.*\bConnected`).MatchString(out) {
		t.Fatalf("claude mcp list once approved:\n%s", out)
	}
}

// Gemini CLI connects to vx from .gemini/settings.json once the folder is trusted.
func TestGeminiCLIConnects(t *testing.T) {
	gemini := hostCLI(t, geminiPackage, "gemini")
	root, env := hostWorkspace(t, "gemini")
	writeJSON(t, filepath.Join(homeOf(env), ".gemini", "trustedFolders.json"), map[string]string{root: "TRUST_FOLDER"})
	out := run(t, root, env, gemini, "mcp", "list")
	t.Logf("gemini mcp list:\n%s", out)
	if !regexp.MustCompile(`(?m)vx.*\bConnected`).MatchString(out) {
		t.Fatalf("gemini mcp list:\n%s", fmt.Sprint(out))
	}
}

const (
	inspectorPackage = "@modelcontextprotocol/inspector@2.12.0"
	codexPackage     = "@openai/codex@0.171.0"
)

// The Inspector CLI's strict tools/list of the server the written config starts passes.
func TestInspectorStrictToolsList(t *testing.T) {
	inspector := hostCLI(t, inspectorPackage, "mcp-inspector")
	root, env := hostWorkspace(t, "claude")
	out := run(t, root, env, inspector, "--cli", "--strict", "vx", "mcp", "--method", "tools/list")
	t.Logf("mcp-inspector --cli --strict tools/list:\n%.300s", out)
	if !strings.Contains(out, `"listTasks"`) {
		t.Fatalf("no listTasks in the tools/list answer")
	}
}

// Codex parses the written .codex/config.toml: codex mcp list names vx and its command.
func TestCodexParsesConfig(t *testing.T) {
	codex := hostCLI(t, codexPackage, "codex")
	root, env := hostWorkspace(t, "codex")
	home := homeOf(env)
	trust := fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", root)
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(trust), 0o644); err != nil {
		t.Fatal(err)
	}
	out := run(t, root, env, codex, "mcp", "list")
	t.Logf("codex mcp list:\n%s", out)
	if !regexp.MustCompile(`(?m)^vx\s+vx\s+mcp\b`).MatchString(out) {
		t.Fatalf("codex mcp list does not list vx with its command")
	}
}

// Codex reads the config vx merged into a file whose multi-line string holds a "[mcp_servers.vx]"
// line: both servers are listed, vx with its command.
func TestCodexParsesMergedTrap(t *testing.T) {
	codex := hostCLI(t, codexPackage, "codex")
	root, env := hostWorkspace(t, "codex")
	home := homeOf(env)
	trust := fmt.Sprintf("[projects.%q]\ntrust_level = \"trusted\"\n", root)
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(trust), 0o644); err != nil {
		t.Fatal(err)
	}
	trap := "[mcp_servers.docs]\ncommand = \"docs-mcp\"\n\n[mcp_servers.docs.env]\nNOTE = \"\"\"\n[mcp_servers.vx]\ncommand = \"x\"\n\"\"\"\n"
	if err := os.WriteFile(filepath.Join(root, ".codex", "config.toml"), []byte(trap), 0o644); err != nil {
		t.Fatal(err)
	}
	vx := "vx"
	for i := len(env) - 1; i >= 0; i-- {
		if path, ok := strings.CutPrefix(env[i], "PATH="); ok {
			vx = filepath.Join(filepath.SplitList(path)[0], "vx")
			break
		}
	}
	run(t, root, env, vx, "agents", "codex")
	out := run(t, root, env, codex, "mcp", "list")
	t.Logf("codex mcp list:\n%s", out)
	if !regexp.MustCompile(`(?m)^vx\s+vx\s+mcp\b`).MatchString(out) || !regexp.MustCompile(`(?m)^docs\s+docs-mcp\b`).MatchString(out) {
		t.Fatalf("codex mcp list does not list vx and docs with their commands")
	}
}
