package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// helpVerb reads a verb of a help text's command list: two spaces, the verb, then its summary.
var helpVerb = regexp.MustCompile(`(?m)^  ([a-z][a-z-]*)\s{2,}\S`)

// listedVerbs runs `vx ARGS --help` in dir and answers the verbs its command lists name.
func listedVerbs(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	out, err := vxCommand(t, dir, append(args, "--help")...).Output()
	if err != nil {
		t.Fatalf("vx %s --help: %v", strings.Join(args, " "), err)
	}
	_, list, ok := strings.Cut(string(out), "ommands:\n")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, "\nFlags:")
	var verbs []string
	for _, m := range helpVerb.FindAllStringSubmatch(list, -1) {
		verbs = append(verbs, m[1])
	}
	return verbs
}

// TestReadmeNamesEveryVerb checks that the README's verb list has a line for every verb `vx
// --help` lists (plugin verbs too, in a workspace that declares mcp()), and for every verb of
// a verb with verbs of its own (vx cache prune, vx cache stats); completion's shells are
// arguments, not verbs of vx.
func TestReadmeNamesEveryVerb(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, use, ok := strings.Cut(string(readme), "## Use\n")
	if !ok {
		t.Fatal("README.md has no ## Use section")
	}
	use, _, _ = strings.Cut(use, "\n```\n")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"),
		[]byte("import { mcp } from '@vzn/vx-mcp'\nexport default { projects: [], plugins: [mcp()] }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	verbs := listedVerbs(t, dir)
	if len(verbs) < 10 || !strings.Contains(strings.Join(verbs, " "), "mcp") {
		t.Fatalf("vx --help lists %q: want every verb, mcp among them", verbs)
	}
	for _, verb := range verbs {
		paths := []string{verb}
		if verb != "completion" && verb != "help" {
			for _, sub := range listedVerbs(t, dir, verb) {
				paths = append(paths, verb+" "+sub)
			}
		}
		for _, p := range paths {
			if !regexp.MustCompile(`(?m)^vx ` + regexp.QuoteMeta(p) + `\b`).MatchString(use) {
				t.Errorf("README.md's verb list has no line for vx %s, which vx --help lists", p)
			}
		}
	}
}
