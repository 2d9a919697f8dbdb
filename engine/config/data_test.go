package config

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// isDataSource is the whole data check of one file, as a DataOnly session makes it.
func isDataSource(t *testing.T, src string) bool {
	t.Helper()
	script, imported, ok := simpleSource(src)
	if !ok {
		return false
	}
	prog, err := goja.Parse("vx.workspace.ts", script, parser.WithDisableSourceMaps)
	if err != nil {
		return false
	}
	return isDataProgram(prog, imported)
}

// Only literals are data; everything else that would run code, or that a literal's form hides,
// is not: each case is a way to run something of the repository's inside vx's own process.
func TestDataIsOnlyLiterals(t *testing.T) {
	const head = "import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n"
	deep := strings.Repeat("[", maxDataDepth+1) + strings.Repeat("]", maxDataDepth+1)
	for name, tc := range map[string]struct {
		body string
		data bool
	}{
		"literals":              {"export default defineWorkspace({ projects: ['a/*'], n: 1.5, m: -2, ok: true, none: null, s: `plain`, 'quoted key': 1, 3: 'x' })", true},
		"nested":                {"export default defineWorkspace({ tasks: { build: { command: 'make', dependsOn: ['^build'], env: [{ secret: 'TOKEN' }] } } })", true},
		"the mcp plugin":        {"export default defineWorkspace({ plugins: [mcp({ run: ['build'] }), mcp()] })", true},
		"a plain object":        {"export default { projects: [] }", true},
		"a proto key":           {"export default defineWorkspace({ __proto__: { projects: ['x'] } })", true},
		"comments and a semi":   {"// note\nexport default defineWorkspace({ /* why */ projects: [] });", true},
		"nested to the bound":   {"export default defineWorkspace({ x: " + strings.Repeat("[", maxDataDepth-1) + strings.Repeat("]", maxDataDepth-1) + " })", true},
		"nested past the bound": {"export default defineWorkspace({ x: " + deep + " })", false},
		"a statement before":    {"const tasks = {}\nexport default defineWorkspace({ tasks })", false},
		"a shorthand property":  {"export default defineWorkspace({ projects })", false},
		"a spread":              {"export default defineWorkspace({ ...{ projects: [] } })", false},
		"an array spread":       {"export default defineWorkspace({ projects: [...['a']] })", false},
		"a computed key":        {"export default defineWorkspace({ ['pro' + 'jects']: [] })", false},
		"a getter":              {"export default defineWorkspace({ get projects() { return [] } })", false},
		"a method":              {"export default defineWorkspace({ plugins: [{ name: 'p', stage(t) { return t } }] })", false},
		"a function value":      {"export default defineWorkspace({ plugins: [{ name: 'p', stage: function (t) { return t } }] })", false},
		"an arrow value":        {"export default defineWorkspace({ plugins: [{ name: 'p', stage: (t) => t }] })", false},
		"a substitution":        {"export default defineWorkspace({ projects: [`${'a'}/*`] })", false},
		"a tagged template":     {"export default defineWorkspace({ projects: [String.raw`a/*`] })", false},
		"a global":              {"export default defineWorkspace({ command: process })", false},
		"undefined":             {"export default defineWorkspace({ command: undefined })", false},
		"a call of a global":    {"export default defineWorkspace({ projects: require('./x') })", false},
		"a method call":         {"export default defineWorkspace({ projects: 'a'.repeat(9) })", false},
		"two arguments":         {"export default defineWorkspace({}, {})", false},
		"a function argument":   {"export default defineWorkspace({ plugins: [mcp(() => 1)] })", false},
		"new":                   {"export default defineWorkspace({ when: new Date() })", false},
		"an assignment":         {"export default defineWorkspace({ n: globalThis.x = 1 })", false},
		"a condition":           {"export default defineWorkspace({ n: true ? 1 : 2 })", false},
		"a sequence":            {"export default defineWorkspace({ n: (f(), 1) })", false},
		"void":                  {"export default defineWorkspace({ n: void 0 })", false},
		"not":                   {"export default defineWorkspace({ n: !0 })", false},
		"a regexp":              {"export default defineWorkspace({ n: /a+/ })", false},
		"a hole":                {"export default defineWorkspace({ projects: ['a', , 'b'] })", false},
		"an immediately called": {"export default (function () { return {} })()", false},
		"a call of the result":  {"export default defineWorkspace({})()", false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := isDataSource(t, head+tc.body+"\n"); got != tc.data {
				t.Errorf("data = %v, want %v", got, tc.data)
			}
		})
	}
}

// A DataOnly session evaluates a data file as the bundle does, and refuses any other before it
// runs any of it: the refused config's console.log never prints.
func TestDataOnlySessionRunsNothingElse(t *testing.T) {
	data := "// the workspace\nimport { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n\n" +
		"export default defineWorkspace({\n  projects: ['packages/*'],\n  plugins: [mcp({ run: ['build'] })],\n  tasks: { build: { command: 'make', outputs: ['dist/**'] } },\n})\n"
	code := "import { defineWorkspace } from '@vzn/vx/config'\nconsole.log('ran')\nexport default defineWorkspace({ projects: [] })\n"
	ctx := context.Background()
	root := writeFiles(t, map[string]string{"vx.workspace.ts": data, "code/vx.workspace.ts": code, "plain/vx.workspace.ts": "export default { projects: [] }\n"})

	var console bytes.Buffer
	s := NewSession(Options{Root: root, DataOnly: true, Console: &console})
	got, err := s.EvalWorkspace(ctx, "vx.workspace.ts")
	if err != nil {
		t.Fatal(err)
	}
	bundled := NewSession(Options{Root: root})
	want, err := bundled.EvalWorkspace(ctx, "vx.workspace.ts")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(got.Value)
	b, _ := json.Marshal(want.Value)
	if !bytes.Equal(a, b) || !s.direct["vx.workspace.ts"] {
		t.Errorf("data only %s (direct %v), bundled %s", a, s.direct["vx.workspace.ts"], b)
	}
	for _, kp := range []string{"projects", "plugins", "tasks.build.command", "tasks.build.outputs"} {
		la, ca, okA := s.Position("vx.workspace.ts", kp)
		lb, cb, okB := bundled.Position("vx.workspace.ts", kp)
		if !okA || la != lb || ca != cb {
			t.Errorf("%s: data only %d:%d (%v), bundled %d:%d (%v)", kp, la, ca, okA, lb, cb, okB)
		}
	}
	for _, file := range []string{"code/vx.workspace.ts", "plain/vx.workspace.ts", "missing/vx.workspace.ts"} {
		s := NewSession(Options{Root: root, DataOnly: true, Console: &console})
		if _, err := s.EvalWorkspace(ctx, file); !errors.Is(err, ErrNotData) {
			t.Errorf("%s: err = %v, want ErrNotData", file, err)
		}
	}
	if console.Len() != 0 {
		t.Errorf("console = %q: a refused config ran", console.String())
	}
}

// A DataOnly session's reads are bounded, per file and over a session's project configs: past
// either, the configs go to a child as everything else does.
func TestDataOnlySessionBounds(t *testing.T) {
	ctx := context.Background()
	project := func(size int) string {
		head := "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({ tags: ['"
		return head + strings.Repeat("x", size-len(head)-5) + "'] })"
	}
	files := map[string]string{"big/vx.project.ts": project(maxDataFile + 1), "edge/vx.project.ts": project(maxDataFile)}
	var many []string
	for i := range maxDataBytes/maxDataFile + 1 {
		f := fmt.Sprintf("p%02d/vx.project.ts", i)
		files[f] = project(maxDataFile)
		many = append(many, f)
	}
	root := writeFiles(t, files)
	if _, err := NewSession(Options{Root: root, DataOnly: true}).EvalProjects(ctx, []string{"edge/vx.project.ts"}); err != nil {
		t.Errorf("a file at the bound: %v", err)
	}
	if _, err := NewSession(Options{Root: root, DataOnly: true}).EvalProjects(ctx, []string{"big/vx.project.ts"}); !errors.Is(err, ErrNotData) {
		t.Errorf("a file past the bound: %v, want ErrNotData", err)
	}
	if _, err := NewSession(Options{Root: root, DataOnly: true}).EvalProjects(ctx, many[:len(many)-1]); err != nil {
		t.Errorf("files up to the session's bound: %v", err)
	}
	if _, err := NewSession(Options{Root: root, DataOnly: true}).EvalProjects(ctx, many); !errors.Is(err, ErrNotData) {
		t.Errorf("files past the session's bound: %v, want ErrNotData", err)
	}
	// Without DataOnly the same files evaluate, as they do in a child.
	if _, err := NewSession(Options{Root: root}).EvalProjects(ctx, []string{"big/vx.project.ts"}); err != nil {
		t.Errorf("without DataOnly: %v", err)
	}
}

// Every config file vx init writes (the init plans' golden files) is only data, so a workspace
// adopted with vx init is read in process.
func TestInitWritesData(t *testing.T) {
	plans, err := filepath.Glob("../initplan/testdata/*.plan.json")
	if err != nil || len(plans) == 0 {
		t.Fatalf("no init plans: %v", err)
	}
	seen := 0
	for _, file := range plans {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var plan struct {
			Files []struct{ Path, Contents string }
		}
		if err := json.Unmarshal(data, &plan); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, f := range plan.Files {
			if !strings.HasSuffix(f.Path, ".ts") {
				continue
			}
			seen++
			if !isDataSource(t, f.Contents) {
				t.Errorf("%s: %s is not only data:\n%s", file, f.Path, f.Contents)
			}
		}
	}
	if seen == 0 {
		t.Error("no config file in the init plans")
	}
}
