package config

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestSimpleSource(t *testing.T) {
	for name, tc := range map[string]struct {
		src    string
		simple bool
	}{
		"plain":            {"import { defineProject } from '@vzn/vx/config'\nexport default defineProject({ name: 'a' })\n", true},
		"two names":        {"import { defineProject, defineWorkspace } from \"@vzn/vx/config\";\n\nconst tags = ['x']\nexport default defineProject({ tags })\n", true},
		"type annotation":  {"import { defineProject } from '@vzn/vx/config'\nconst tags: string[] = []\nexport default defineProject({ tags })\n", true}, // goja's parse refuses it later
		"other import":     {"import { defineProject } from '@vzn/vx/config'\nimport x from './x'\nexport default defineProject(x)\n", false},
		"alias":            {"import { defineProject as dp } from '@vzn/vx/config'\nexport default dp({})\n", false},
		"no import":        {"export default { name: 'a' }\n", false},
		"named export too": {"import { defineProject } from '@vzn/vx/config'\nexport const x = 1\nexport default defineProject({})\n", false},
		"mid-line export":  {"import { defineProject } from '@vzn/vx/config'\nfoo(); export default defineProject({})\n", false},
		"comments first":   {"// vx config\n/* written by hand */\nimport { defineWorkspace } from '@vzn/vx/config'\nexport default defineWorkspace({})\n", true},
		"mcp too":          {"import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n\nexport default defineWorkspace({ plugins: [mcp()] })\n", true},
		"import on lines":  {"import {\n  defineWorkspace,\n} from '@vzn/vx/config'\nexport default defineWorkspace({})\n", true},
		"unknown name":     {"import { defineThing } from '@vzn/vx/config'\nexport default defineThing({})\n", false},
		"no comma":         {"import { defineProject defineWorkspace } from '@vzn/vx/config'\nexport default defineProject({})\n", false},
		"module twice":     {"import { defineProject } from '@vzn/vx/config'\nimport { definePlugin } from '@vzn/vx/config'\nexport default defineProject({})\n", false},
		"name twice":       {"import { defineProject, defineProject } from '@vzn/vx/config'\nexport default defineProject({})\n", false},
		"one line each":    {"import\n{\nmcp\n}\nfrom\n'@vzn/vx-mcp'\nexport default { plugins: [mcp()] }\n", true},
	} {
		t.Run(name, func(t *testing.T) {
			out, _, ok := simpleSource(tc.src)
			if ok != tc.simple {
				t.Fatalf("simple = %v, want %v", ok, tc.simple)
			}
			if ok && strings.Count(out, "\n") != strings.Count(tc.src, "\n")+1 {
				t.Errorf("lines moved:\n%s", out)
			}
		})
	}
}

// The direct path and the bundle answer the same values and positions for the same file.
func TestSimpleAndBundledAgree(t *testing.T) {
	src := `import { defineProject } from '@vzn/vx/config'

const shared = { outputs: ['dist/**'] }
export default defineProject({
  name: 'a',
  tags: ['x', 'y'],
  tasks: {
    build: { ...shared, command: 'make', timeout: 1500 },
    test: false,
  },
})
`
	root := writeFiles(t, map[string]string{"a/vx.project.ts": src, "b/vx.project.ts": strings.Replace(src, "'@vzn/vx/config'\n", "'@vzn/vx/config'\nimport type { X } from './types'\n", 1), "b/types.ts": "export type X = string\n"})
	s := NewSession(Options{Root: root})
	mods, err := s.EvalProjects(context.Background(), []string{"a/vx.project.ts", "b/vx.project.ts"})
	if err != nil {
		t.Fatal(err)
	}
	if !s.direct["a/vx.project.ts"] || s.direct["b/vx.project.ts"] {
		t.Fatalf("direct = %v, want only a", s.direct)
	}
	a, _ := json.Marshal(mods[0].Value)
	b, _ := json.Marshal(mods[1].Value)
	if string(a) != string(b) {
		t.Errorf("values differ:\ndirect  %s\nbundled %s", a, b)
	}
	for _, kp := range []string{"name", "tags", "tasks.build.command", "tasks.build.timeout", "tasks.test"} {
		la, ca, _ := s.Position("a/vx.project.ts", kp)
		lb, cb, _ := s.Position("b/vx.project.ts", kp)
		if la != lb-1 || ca != cb || la == 0 {
			t.Errorf("%s: direct %d:%d, bundled %d:%d (one line lower)", kp, la, ca, lb, cb)
		}
	}
}

func TestSimpleConfigErrorsNameTheirPosition(t *testing.T) {
	root := writeFiles(t, map[string]string{
		"a/vx.project.ts": "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({\n  tags: undefinedThing.map(String),\n})\n",
		"b/vx.project.ts": "import { defineProject } from '@vzn/vx/config'\nexport default 42\n",
		"c/vx.project.ts": "import { defineProject } from '@vzn/vx/config'\nexport default defineProject({ name: nope = 1 })\n",
	})
	for file, want := range map[string]string{
		"a/vx.project.ts": "a/vx.project.ts:3:9: ReferenceError: undefinedThing is not defined",
		"b/vx.project.ts": "b/vx.project.ts: the default export must be an object",
		"c/vx.project.ts": "c/vx.project.ts:2:", // strict mode: assigning an undeclared name throws
	} {
		s := NewSession(Options{Root: root})
		_, err := s.EvalProjects(context.Background(), []string{file})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: err = %v, want prefix %q", file, err, want)
		}
	}
}
