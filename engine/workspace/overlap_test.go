package workspace

import "testing"

func TestGlobsOverlap(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"dist/**", "dist/**", true},
		{"dist/**", "dist/types/index.d.ts", true},
		{"dist/**", "dist", true},
		{"dist/**", "build/**", false},
		{"dist/*.js", "dist/*.d.ts", false},
		{"dist/*.js", "dist/index.*", true},
		{"dist/a*b", "dist/a*c", false},
		{"**/*.map", "dist/x/y.map", true},
		{"**/*.map", "dist/x/y.js", false},
		{"dist/[ab].js", "dist/[cd].js", false},
		{"dist/[a-c].js", "dist/[b-d].js", true},
		{"dist/?.js", "dist/ab.js", false},
		{"dist/{a,b}/**", "dist/b/x", true},
		{"dist/{a,b}/**", "dist/c/x", false},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"*/dist/**", "web/dist/x", true},
		{"web/dist/**", "api/dist/**", false},
	} {
		if got := globsOverlap(c.a, c.b); got != c.want {
			t.Errorf("globsOverlap(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := globsOverlap(c.b, c.a); got != c.want {
			t.Errorf("globsOverlap(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}
