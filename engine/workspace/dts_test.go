package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/config"
)

// The types npm/vx/config/index.d.ts and npm/vx-mcp/index.d.ts give editors and tsc must declare
// exactly the fields this package's reader accepts: a field in one and not the other is a config
// that type-checks and is refused, or one vx takes that no editor completes. The reader is asked,
// not read: each probe writes a config with an unknown field at one level and takes the list of
// known fields from the refusal, so a field added to the reader fails here until the .d.ts has it.

// dtsInterfaces reads the fields of every `export interface` of a .d.ts, and fails the test for a
// field without a doc comment.
func dtsInterfaces(t *testing.T, path string) map[string][]string {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head := regexp.MustCompile(`^export interface (\w+)`)
	field := regexp.MustCompile(`^  (\w+)\??:`)
	out := map[string][]string{}
	var name, prev string
	for i, line := range strings.Split(string(text), "\n") {
		switch m := head.FindStringSubmatch(line); {
		case m != nil:
			name = m[1]
			out[name] = []string{}
		case line == "}":
			name = ""
		case name != "":
			if f := field.FindStringSubmatch(line); f != nil {
				out[name] = append(out[name], f[1])
				if !strings.HasSuffix(strings.TrimSpace(prev), "*/") {
					t.Errorf("%s:%d: %s.%s has no doc comment", path, i+1, name, f[1])
				}
			}
		}
		prev = line
	}
	return out
}

// knownFields loads a workspace made of files and returns the fields the reader listed as known
// in its refusal of the field zzzProbe.
func knownFields(t *testing.T, files map[string]string) ([]string, error) {
	t.Helper()
	root := t.TempDir()
	writeTree(t, root, files)
	_, err := NewLoader(Options{Dir: root}).Load(context.Background())
	if err == nil {
		return nil, fmt.Errorf("the reader accepted the unknown field zzzProbe")
	}
	m := regexp.MustCompile(`unknown field "zzzProbe" in .*\(known: ([^)]*)\)`).FindStringSubmatch(err.Error())
	if m == nil {
		return nil, fmt.Errorf("the reader refused zzzProbe without listing the known fields: %v", err)
	}
	return strings.Split(m[1], ", "), nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(a, b)
}

func TestConfigTypesDeclareWhatTheReaderAccepts(t *testing.T) {
	dts := dtsInterfaces(t, filepath.Join("..", "..", "npm", "vx", "config", "index.d.ts"))
	project := map[string]string{"vx.workspace.ts": "export default { projects: ['p'] }\n", "p/vx.project.ts": "export default { zzzProbe: 1 }\n"}
	task := func(fields string) map[string]string {
		return map[string]string{"vx.workspace.ts": "export default { tasks: { t: { command: 'x', " + fields + " } } }\n"}
	}
	for _, c := range []struct {
		iface string
		files map[string]string
	}{
		{"WorkspaceConfig", map[string]string{"vx.workspace.ts": "export default { zzzProbe: 1 }\n"}},
		{"ProjectConfig", project},
		{"Task", task("zzzProbe: 1")},
		{"Exec", task("exec: { zzzProbe: 1 }")},
		{"Secret", task("exec: { env: { A: { zzzProbe: 1 } } }")},
		{"SandboxOptions", task("sandbox: { zzzProbe: 1 }")},
	} {
		known, err := knownFields(t, c.files)
		if err != nil {
			t.Errorf("%s: %v", c.iface, err)
			continue
		}
		if !sameSet(known, dts[c.iface]) {
			t.Errorf("index.d.ts's %s declares %v; the reader accepts %v: add or remove the field in npm/vx/config/index.d.ts, with a doc comment", c.iface, dts[c.iface], known)
		}
	}
	// The task fields are graph.TaskFields, whatever the reader's message says.
	if !sameSet(taskFieldNames(), dts["Task"]) {
		t.Errorf("index.d.ts's Task declares %v; graph.TaskFields holds %v", dts["Task"], taskFieldNames())
	}
	// The plugins reader takes any other key of a plugin object without a word (a plugin may carry
	// its own), so this list is kept by hand: what plugins() and PluginStage read.
	if want := []string{"name", "commands", "stage"}; !sameSet(dts["Plugin"], want) {
		t.Errorf("index.d.ts's Plugin declares %v; the plugins reader reads %v", dts["Plugin"], want)
	}
}

func TestMcpOptionsTypeDeclaresWhatTheReaderAccepts(t *testing.T) {
	dts := dtsInterfaces(t, filepath.Join("..", "..", "npm", "vx-mcp", "index.d.ts"))["McpOptions"]
	if len(dts) == 0 {
		t.Fatal("npm/vx-mcp/index.d.ts declares no McpOptions")
	}
	// A reader that refuses an unknown option says which it knows.
	known, err := knownFields(t, map[string]string{"vx.workspace.ts": "export default { plugins: [{ name: 'mcp', commands: ['mcp'], options: { zzzProbe: 1 } }] }\n"})
	if err != nil {
		// This one takes any key, so ask the two places an option passes through: the options
		// vx's built-in mcp() keeps (given every declared option and an unknown one) and the
		// options mcpOptions reads.
		known = builtinMcpOptions(t, dts)
		if slices.Contains(known, "zzzProbe") {
			t.Fatalf("neither the reader nor vx's built-in mcp() refuses an unknown option: nothing says which options exist (%v)", err)
		}
		src, rerr := os.ReadFile("plugins.go")
		if rerr != nil {
			t.Fatal(rerr)
		}
		for _, m := range regexp.MustCompile(`opts\["(\w+)"\]`).FindAllStringSubmatch(string(src), -1) {
			if !slices.Contains(known, m[1]) {
				known = append(known, m[1])
			}
		}
	}
	if !sameSet(known, dts) {
		t.Errorf("@vzn/vx-mcp's McpOptions declares %v; vx accepts %v: add or remove the option in npm/vx-mcp/index.d.ts, with a doc comment", dts, known)
	}
}

// builtinMcpOptions evaluates vx's built-in mcp() with every declared option and zzzProbe (and
// with none) and returns the option names its plugin object keeps.
func builtinMcpOptions(t *testing.T, declared []string) []string {
	t.Helper()
	root := t.TempDir()
	args := []string{"zzzProbe: 1"}
	for _, name := range declared {
		args = append(args, name+": undefined")
	}
	writeTree(t, root, map[string]string{"vx.workspace.ts": "import { mcp } from '@vzn/vx-mcp'\n" +
		"const given = mcp({ " + strings.Join(args, ", ") + " })\n" +
		"export default { given: Object.keys(given.options), defaults: Object.keys(mcp().options) }\n"})
	mod, err := config.NewSession(config.Options{Root: root}).EvalWorkspace(context.Background(), ConfigFileName)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, list := range []any{mod.Value["given"], mod.Value["defaults"]} {
		items, _ := list.([]any)
		for _, x := range items {
			if s, _ := x.(string); s != "" && !slices.Contains(kept, s) {
				kept = append(kept, s)
			}
		}
	}
	return kept
}
