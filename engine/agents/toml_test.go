package agents

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// codex runs vx agents for codex on a .codex/config.toml holding old and returns the error and
// the file's text after.
func codex(t *testing.T, old string) (string, error) {
	t.Helper()
	root := t.TempDir()
	write(t, root, ".codex/config.toml", old)
	_, err := Write(Options{Root: root, Hosts: []string{"codex"}})
	data, rerr := os.ReadFile(filepath.Join(root, ".codex", "config.toml"))
	if rerr != nil {
		t.Fatal(rerr)
	}
	return string(data), err
}

// parseTOML parses text with a real TOML parser, failing the test when it is not TOML.
func parseTOML(t *testing.T, text string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := toml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("written file is not TOML (%v):\n%s", err, text)
	}
	return doc
}

// vxServer is the mcp_servers.vx table of a parsed config.
func vxServer(doc map[string]any) map[string]any {
	servers, _ := doc["mcp_servers"].(map[string]any)
	vx, _ := servers["vx"].(map[string]any)
	return vx
}

// TestCodexMultilineStrings: a "[x]" line inside a multi-line string is no table header; the
// written file parses and the strings keep their text.
func TestCodexMultilineStrings(t *testing.T) {
	for _, old := range []string{
		"instructions = \"\"\"\nNotes:\n[mcp_servers.vx]\ncommand = \"x\"\n\"\"\"\nmodel = \"o3\"\n",
		"[mcp_servers.docs]\ncommand = \"docs\"\nnote = '''\n[mcp_servers.vx]\n'''\n",
		"[mcp_servers.vx]\ncommand = \"old\"\nnote = '''\n[other]\nx = 1\n'''\n\n[profiles.fast]\nmodel = \"o3\"\n",
	} {
		got, err := codex(t, old)
		if err != nil {
			t.Fatalf("%q: %v", old, err)
		}
		before, after := parseTOML(t, old), parseTOML(t, got)
		if vx := vxServer(after); vx["command"] != "vx" || !reflect.DeepEqual(vx["args"], []any{"mcp"}) {
			t.Errorf("%q: mcp_servers.vx is %v in\n%s", old, vx, got)
		}
		if !reflect.DeepEqual(withoutServer(before), withoutServer(after)) {
			t.Errorf("%q: other values changed:\n%s", old, got)
		}
	}
}

// TestCodexInlineAndDottedKeys: an entry set by an inline table or dotted keys that already is vx's
// is kept as it is; one that differs, or an inline mcp_servers vx cannot add to, is refused naming
// its line, and the file is left as it was.
func TestCodexInlineAndDottedKeys(t *testing.T) {
	for _, old := range []string{
		"mcp_servers = { vx = { command = \"vx\", args = [\"mcp\"] } }\n",
		"mcp_servers.vx.command = \"vx\"\nmcp_servers.vx.args = [\"mcp\"]\n",
		"[mcp_servers]\nvx = { command = \"vx\", args = [\"mcp\"], env = { A = \"1\" } }\n",
	} {
		got, err := codex(t, old)
		if err != nil || got != old {
			t.Errorf("%q: err %v, file\n%s", old, err, got)
		}
	}
	for _, c := range []struct{ old, want string }{
		{"model = \"o3\"\nmcp_servers = { docs = { command = \"docs\" } }\n", "line 2: mcp_servers is set by a key"},
		{"mcp_servers.vx.command = \"old\"\n", "line 1: mcp_servers.vx is set by the key mcp_servers.vx.command"},
		{"[mcp_servers]\ndocs.command = \"d\"\nvx.command = \"old\"\n", "line 3: mcp_servers.vx is set by the key vx.command"},
		{"[mcp_servers]\nvx = { command = \"old\" }\n", "line 2: mcp_servers.vx is set by the key vx"},
		{"[[mcp_servers.vx]]\ncommand = \"old\"\n", "line 1: [[mcp_servers.vx]]"},
	} {
		got, err := codex(t, c.old)
		if err == nil || !strings.HasPrefix(err.Error(), "vx agents: .codex/config.toml: "+c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.old, err, c.want)
		}
		if got != c.old {
			t.Errorf("%q: changed to\n%s", c.old, got)
		}
	}
}

// TestCodexNeverWritesInvalid: a file that is not TOML, or whose merge would not read back with
// vx's entry and every other value, is refused by name and left as it was.
func TestCodexNeverWritesInvalid(t *testing.T) {
	for _, c := range []struct{ old, want string }{
		{"model = \n", "parse: line 1"},
		{"[mcp_servers.vx]\ncommand = \"a\"\n[mcp_servers.vx]\n", "parse: line 3"},
		{"[[mcp_servers]]\nname = \"docs\"\n", "would not read back as intended"},
	} {
		got, err := codex(t, c.old)
		if err == nil || !strings.Contains(err.Error(), ".codex/config.toml: ") || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.old, err, c.want)
		}
		if got != c.old {
			t.Errorf("%q: changed to\n%s", c.old, got)
		}
	}
}

// TestCodexKeepsSubTablesAndComments: vx's table, however its header is quoted and commented, is
// replaced up to its last key; its sub-tables and the comments before the next table stay.
func TestCodexKeepsSubTablesAndComments(t *testing.T) {
	old := "# mine\n[ mcp_servers . \"vx\" ] # the \"vx\" server\ncommand = \"old\"\nargs = [\n  \"-C\",\n  \"x\",\n]\n\n# env for vx\n[mcp_servers.vx.env]\nA = \"1\"\n"
	want := "# mine\n" + codexTable + "\n# env for vx\n[mcp_servers.vx.env]\nA = \"1\"\n"
	got, err := codex(t, old)
	if err != nil || got != want {
		t.Errorf("err %v, got\n%s\nwant\n%s", err, got, want)
	}
	parseTOML(t, got)
}

// TestParseBackEveryFormat: text that would not parse as its file's format is refused, on one line.
func TestParseBackEveryFormat(t *testing.T) {
	for path, text := range map[string]string{
		".mcp.json":                    `{"mcpServers": `,
		".codex/config.toml":           "a = 1\na = 2\n",
		".continue/mcpServers/vx.yaml": "name: [vx\n  - mcp\n",
	} {
		err := parseBack(path, []byte(text))
		if err == nil || !strings.Contains(err.Error(), "does not parse back") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", path, err)
		}
	}
	for path, text := range map[string]string{".mcp.json": "{}", ".codex/config.toml": codexTable, ".continue/mcpServers/vx.yaml": continueYAML, "CLAUDE.md": "["} {
		if err := parseBack(path, []byte(text)); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
}
