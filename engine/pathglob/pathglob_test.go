package pathglob

import (
	"strings"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "src/**", want: "src/**"},
		{in: "./src/**", want: "src/**"},
		{in: "dist/", want: "dist/**"},
		{in: "!**/*.md", want: "!**/*.md"},
		{in: "//tsconfig.base.json", want: "//tsconfig.base.json"},
		{in: "!//dist/x/**", want: "!//dist/x/**"},
		{in: "$default", want: "$default"},
		{in: "../../shared/**", err: `leaves the project: write "//path/from/root"`},
		{in: "src/../../x", err: "leaves the project"},
		{in: "//../x", err: "leaves the workspace"},
		{in: "/etc/passwd", err: "is an absolute path"},
		{in: "", err: "names no path"},
		{in: "src/[", err: "not a valid glob"},
	} {
		g, err := Parse(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Parse(%q) = %v, want an error containing %q", tc.in, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("Parse(%q): %v", tc.in, err)
		case tc.err == "" && g.String() != tc.want:
			t.Errorf("Parse(%q) = %q, want %q", tc.in, g.String(), tc.want)
		}
	}
}

func TestSet(t *testing.T) {
	s, err := NewSet("apps/web", []string{"src/**", "!**/*.md", "//tsconfig.base.json"})
	if err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]bool{
		"apps/web/src/a.ts":      true,
		"apps/web/src/a.md":      false,
		"apps/web/other.ts":      false,
		"tsconfig.base.json":     true,
		"apps/api/src/a.ts":      false,
		"apps/web/tsconfig.json": false,
	} {
		if got := s.Match(rel); got != want {
			t.Errorf("Match(%q) = %v, want %v", rel, got, want)
		}
	}
	if got := strings.Join(s.Bases(), " "); got != "apps/web/src tsconfig.base.json" {
		t.Errorf("Bases = %q", got)
	}
	d, _ := NewSet(".", []string{"$default", "!**/*.md"})
	if !d.WithDefault() || d.Empty() || !d.Excluded("README.md") || d.Excluded("a.ts") {
		t.Errorf("a $default set: %+v", d)
	}
}

// TestMatchUnderIsDoublestar: the DIR/** shortcut answers what doublestar answers.
func TestMatchUnderIsDoublestar(t *testing.T) {
	globs := []string{"src/**", "dist/**", "a.b/**", "x/**/*.js", "//shared/**"}
	set, err := NewSet("packages/p", globs)
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"packages/p/src/a.js", "packages/p/src/deep/b.ts", "packages/p/src", "packages/p/srcx/a.js",
		"packages/p/dist/.hidden", "packages/p/a.b/c", "packages/p/a/b/c", "shared/x", "sharedx/y", "packages/p/x/y/z.js", "packages/q/src/a.js"} {
		want := false
		for _, p := range set.include {
			if ok, _ := doublestar.Match(p, rel); ok {
				want = true
			}
		}
		if got := set.Match(rel); got != want {
			t.Errorf("Match(%q) = %v, doublestar says %v", rel, got, want)
		}
	}
}
