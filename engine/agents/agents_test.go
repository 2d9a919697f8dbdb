package agents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tailscale/hujson"
)

func write(t *testing.T, root, path, text string) {
	t.Helper()
	abs := filepath.Join(root, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, root, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// decode reads a JSON or JSONC file into a map.
func decode(t *testing.T, text string) map[string]any {
	t.Helper()
	std, err := hujson.Standardize([]byte(text))
	if err != nil {
		t.Fatalf("parse %q: %v", text, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(std, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func statuses(p *Plan) map[string]string {
	m := map[string]string{}
	for _, f := range p.Files {
		m[f.Path] = f.Status
	}
	return m
}

func TestEveryHostFreshThenIdempotent(t *testing.T) {
	root := t.TempDir()
	opts := Options{Root: root, Tasks: []string{"build", "test"}, DeclaresMCP: true}
	first, err := Write(opts)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"AGENTS.md", ".mcp.json", "CLAUDE.md", ".claude/skills/vx/SKILL.md", ".cursor/mcp.json",
		".vscode/mcp.json", ".continue/mcpServers/vx.yaml", ".gemini/settings.json", "GEMINI.md", ".codex/config.toml"}
	var got []string
	for _, f := range first.Files {
		got = append(got, f.Path)
		if f.Status != StatusNew {
			t.Errorf("%s: status %s, want new", f.Path, f.Status)
		}
		if on := read(t, root, f.Path); on != f.Text {
			t.Errorf("%s on disk differs from the plan's text", f.Path)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("files %v, want %v", got, want)
	}
	if len(first.Todos) != 0 {
		t.Errorf("todos %v with mcp() declared", first.Todos)
	}
	before := snapshot(t, root)
	second, err := Write(opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range second.Files {
		if f.Status != StatusKept {
			t.Errorf("second run: %s is %s, want kept", f.Path, f.Status)
		}
	}
	if after := snapshot(t, root); !reflect.DeepEqual(before, after) {
		t.Errorf("second run changed files")
	}
}

// snapshot maps every file under root to its content and modification time.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		m[p] = fi.ModTime().String() + "\x00" + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestHostFormats checks each written file against the shape its host documents.
func TestHostFormats(t *testing.T) {
	root := t.TempDir()
	if _, err := Write(Options{Root: root, DeclaresMCP: true}); err != nil {
		t.Fatal(err)
	}
	vx := map[string]any{"command": "vx", "args": []any{"mcp"}}
	for path, key := range map[string]string{".mcp.json": "mcpServers", ".cursor/mcp.json": "mcpServers", ".gemini/settings.json": "mcpServers"} {
		doc := decode(t, read(t, root, path))
		if got := doc[key].(map[string]any)["vx"]; !reflect.DeepEqual(got, vx) {
			t.Errorf("%s: %s.vx = %v, want %v", path, key, got, vx)
		}
	}
	vscode := decode(t, read(t, root, ".vscode/mcp.json"))["servers"].(map[string]any)["vx"]
	if want := map[string]any{"type": "stdio", "command": "vx", "args": []any{"mcp"}}; !reflect.DeepEqual(vscode, want) {
		t.Errorf(".vscode/mcp.json servers.vx = %v, want %v", vscode, want)
	}
	if got := read(t, root, ".codex/config.toml"); got != "[mcp_servers.vx]\ncommand = \"vx\"\nargs = [\"mcp\"]\n" {
		t.Errorf("codex config %q", got)
	}
	skill := read(t, root, ".claude/skills/vx/SKILL.md")
	if !strings.HasPrefix(skill, "---\nname: vx\ndescription: ") || !strings.Contains(skill, "\n---\n") {
		t.Errorf("skill frontmatter:\n%s", skill)
	}
	for _, p := range []string{"CLAUDE.md", "GEMINI.md"} {
		if !strings.Contains(read(t, root, p), "@") || !strings.Contains(read(t, root, p), "AGENTS.md") {
			t.Errorf("%s does not import AGENTS.md", p)
		}
	}
	cont := read(t, root, ".continue/mcpServers/vx.yaml")
	for _, line := range []string{"schema: v1", "mcpServers:", "  - name: vx", "    command: vx", "      - mcp"} {
		if !strings.Contains(cont, line+"\n") {
			t.Errorf("continue block lacks %q", line)
		}
	}
}

func TestMergeKeepsOtherServersKeysAndComments(t *testing.T) {
	root := t.TempDir()
	cursor := `{
  // team servers
  "mcpServers": {
    "db": {"command": "db-mcp"} /* keep */
  },
  "other": 1
}
`
	write(t, root, ".cursor/mcp.json", cursor)
	write(t, root, ".gemini/settings.json", `{"theme": "dark", "mcpServers": {"vx": {"command": "old"}}}`)
	write(t, root, ".vscode/mcp.json", "{\n\t// inputs\n\t\"inputs\": []\n}\n")
	p, err := Write(Options{Root: root, Hosts: []string{"cursor,gemini", "vscode"}, DeclaresMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(p); got[".cursor/mcp.json"] != StatusReplaced || got[".gemini/settings.json"] != StatusReplaced {
		t.Errorf("statuses %v", got)
	}
	c := read(t, root, ".cursor/mcp.json")
	for _, s := range []string{"// team servers", "/* keep */", `"db-mcp"`, `"other": 1`} {
		if !strings.Contains(c, s) {
			t.Errorf("cursor lost %q:\n%s", s, c)
		}
	}
	doc := decode(t, c)
	if servers := doc["mcpServers"].(map[string]any); servers["vx"] == nil || servers["db"] == nil {
		t.Errorf("cursor servers %v", servers)
	}
	g := decode(t, read(t, root, ".gemini/settings.json"))
	if g["theme"] != "dark" || g["mcpServers"].(map[string]any)["vx"].(map[string]any)["command"] != "vx" {
		t.Errorf("gemini %v", g)
	}
	v := read(t, root, ".vscode/mcp.json")
	if !strings.Contains(v, "// inputs") || decode(t, v)["servers"] == nil {
		t.Errorf("vscode:\n%s", v)
	}
	again, err := Write(Options{Root: root, Hosts: []string{"cursor", "gemini", "vscode"}, DeclaresMCP: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range again.Files {
		if f.Status != StatusKept {
			t.Errorf("second merge: %s %s", f.Path, f.Status)
		}
	}
}

func TestCodexReplacesOnlyItsTable(t *testing.T) {
	root := t.TempDir()
	old := `# my codex settings
model = "o3"

[mcp_servers.vx]
command = "/old/vx"   # pinned
args = ["-C", "x", "mcp"]

# the docs server
[mcp_servers.docs]
command = "docs-mcp"
`
	write(t, root, ".codex/config.toml", old)
	if _, err := Write(Options{Root: root, Hosts: []string{"codex"}, DeclaresMCP: true}); err != nil {
		t.Fatal(err)
	}
	want := `# my codex settings
model = "o3"

[mcp_servers.vx]
command = "vx"
args = ["mcp"]

# the docs server
[mcp_servers.docs]
command = "docs-mcp"
`
	if got := read(t, root, ".codex/config.toml"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	write(t, root, ".codex/config.toml", "model = \"o3\"")
	if _, err := Write(Options{Root: root, Hosts: []string{"codex"}}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, ".codex/config.toml"); got != "model = \"o3\"\n\n"+codexTable {
		t.Errorf("appended: %q", got)
	}
}

func TestAgentsSectionBetweenMarkers(t *testing.T) {
	root := t.TempDir()
	write(t, root, "AGENTS.md", "# Rules\n\nUse tabs.\n")
	if _, err := Write(Options{Root: root, Hosts: []string{"codex"}, Tasks: []string{"build"}}); err != nil {
		t.Fatal(err)
	}
	text := read(t, root, "AGENTS.md")
	if !strings.HasPrefix(text, "# Rules\n\nUse tabs.\n\n"+beginMarker) || !strings.Contains(text, "`build`") {
		t.Fatalf("AGENTS.md:\n%s", text)
	}
	write(t, root, "AGENTS.md", text+"\n## Mine\n")
	p, err := Write(Options{Root: root, Hosts: []string{"codex"}, Tasks: []string{"build", "lint"}})
	if err != nil {
		t.Fatal(err)
	}
	text = read(t, root, "AGENTS.md")
	if strings.Count(text, beginMarker) != 1 || !strings.Contains(text, "`lint`") || !strings.HasSuffix(text, "\n## Mine\n") {
		t.Errorf("updated AGENTS.md:\n%s", text)
	}
	if len(p.Todos) != 1 || !strings.Contains(p.Todos[0], MCPLines()[0]) {
		t.Errorf("todos %v without mcp()", p.Todos)
	}
}

func TestDryWritesNothing(t *testing.T) {
	root := t.TempDir()
	p, err := Write(Options{Root: root, Dry: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) == 0 || len(snapshot(t, root)) != 0 {
		t.Errorf("dry run: %d files planned, %d on disk", len(p.Files), len(snapshot(t, root)))
	}
}

func TestBadInput(t *testing.T) {
	if _, err := ParseHosts([]string{"claude,zed"}); err == nil || !strings.Contains(err.Error(), `"zed"`) {
		t.Errorf("unknown host: %v", err)
	}
	root := t.TempDir()
	write(t, root, ".mcp.json", `{"mcpServers": [1]}`)
	if _, err := Write(Options{Root: root, Hosts: []string{"claude"}}); err == nil || !strings.Contains(err.Error(), ".mcp.json") {
		t.Errorf("servers not an object: %v", err)
	}
	write(t, root, ".mcp.json", `{"mcpServers": `)
	if _, err := Write(Options{Root: root, Hosts: []string{"claude"}}); err == nil || !strings.Contains(err.Error(), ".mcp.json") {
		t.Errorf("broken JSON: %v", err)
	}
}

// TestMergeKeepsHandFormatting: a file indented by hand keeps its indentation, the new member on a
// line of its own.
func TestMergeKeepsHandFormatting(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".cursor/mcp.json", "{\n  // team\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db\"}\n  }\n}\n")
	if _, err := Write(Options{Root: root, Hosts: []string{"cursor"}}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  // team\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db\"},\n    \"vx\": {\"command\": \"vx\", \"args\": [\"mcp\"]}\n  }\n}\n"
	if got := read(t, root, ".cursor/mcp.json"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
