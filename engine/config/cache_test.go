package config

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// keptBundles answers the .js bundles kept under root's .vx/config.
func keptBundles(t *testing.T, root string) []string {
	t.Helper()
	js, err := filepath.Glob(filepath.Join(root, ".vx", "config", "*.js"))
	if err != nil || len(js) == 0 {
		t.Fatalf("no kept bundle (%v)", err)
	}
	return js
}

// A kept bundle that is not what esbuild wrote — cut short, garbage, a script that defines no
// module, one edited by hand — is a miss: the config is bundled again, nothing is shown, and the
// rebuilt bundle replaces it. Until now such a file broke every command until deleted by hand.
func TestCorruptKeptBundleIsAMiss(t *testing.T) {
	for name, corrupt := range map[string]func([]byte) []byte{
		"truncated":    func(b []byte) []byte { return b[:len(b)/2] },
		"garbage":      func([]byte) []byte { return []byte("\x00\xff{{{ not javascript") },
		"empty":        func([]byte) []byte { return nil },
		"not module":   func([]byte) []byte { return []byte("var x = 1\n") },
		"edited":       func(b []byte) []byte { return bytes.Replace(b, []byte(`"a"`), []byte(`"z"`), 1) },
		"no sourcemap": func(b []byte) []byte { return b[:bytes.LastIndex(b, []byte("//# sourceMappingURL"))] },
	} {
		t.Run(name, func(t *testing.T) {
			root := writeFiles(t, map[string]string{
				"vx.workspace.ts":  "import { v } from './v'\nexport default { projects: [v] }\n",
				"v.ts":             "export const v: string = 'a'\n",
				"p/vx.project.ts":  "import { v } from '../v'\nconst n: string = v\nexport default { name: n }\n",
				".vx/config/.keep": "",
			})
			eval := func() (string, string) {
				t.Helper()
				var console bytes.Buffer
				s := NewSession(Options{Root: root, CacheDir: filepath.Join(root, ".vx"), Console: &console, Version: "test", Timeout: 5 * time.Second})
				ws, err := s.EvalWorkspace(context.Background(), "vx.workspace.ts")
				if err != nil {
					t.Fatalf("workspace: %v", err)
				}
				mods, err := s.EvalProjects(context.Background(), []string{"p/vx.project.ts"})
				if err != nil {
					t.Fatalf("projects: %v", err)
				}
				if console.Len() > 0 {
					t.Fatalf("the evaluation printed %q", console.String())
				}
				return ws.Value["projects"].([]any)[0].(string), mods[0].Value["name"].(string)
			}
			eval()
			bundles := keptBundles(t, root)
			if len(bundles) != 2 {
				t.Fatalf("kept %d bundles, want the workspace's and the projects'", len(bundles))
			}
			kept := map[string][]byte{}
			for _, js := range bundles {
				data, err := os.ReadFile(js)
				if err != nil {
					t.Fatal(err)
				}
				kept[js] = data
				if err := os.WriteFile(js, corrupt(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if ws, p := eval(); ws != "a" || p != "a" {
				t.Fatalf("read back projects[0] %q and name %q, want a and a", ws, p)
			}
			for js, want := range kept {
				if got, err := os.ReadFile(js); err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s was not rebuilt (%v)", filepath.Base(js), err)
				}
			}
		})
	}
}

// The kept bundle is what a cached load runs: the dep file vouches for its content.
func TestKeptBundleServesACachedLoad(t *testing.T) {
	root := writeFiles(t, map[string]string{"vx.workspace.ts": "export default { projects: ['x'] }\n", ".vx/config/.keep": ""})
	_, _, err := evalWorkspace(t, root, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := bundleCache{state: filepath.Join(root, ".vx"), dir: filepath.Join(root, ".vx", "config"), root: root, version: "test", phase: "workspace"}
	code, _, ok := c.load([]string{filepath.Join(root, "vx.workspace.ts")})
	if !ok || !strings.Contains(code, "__vx") {
		t.Fatalf("the kept bundle does not load: %v", ok)
	}
}
