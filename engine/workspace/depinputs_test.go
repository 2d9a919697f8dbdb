package workspace

import (
	"strings"
	"testing"
)

// A dependency input is ^default or ^GLOB over each dependency's own files; a bare name (an Nx
// named input), a root file or nothing after ^ is refused with what to write.
func TestDependencyInputForms(t *testing.T) {
	for g, want := range map[string]string{
		"^default":         "",
		"^src/**":          "",
		"^!**/*.spec.ts":   "",
		"^$default":        "",
		"^*.json":          "",
		"src/**":           "",
		"^production":      "reads as an Nx named input",
		"^":                "names a glob after ^",
		"^!":               "names a glob after ^",
		"^//tsconfig.json": "not a root file",
		"^!//x.json":       "not a root file",
	} {
		got := badDependencyInput(g)
		if want == "" && got != "" || want != "" && !strings.Contains(got, want) {
			t.Errorf("%q: %q, want %q", g, got, want)
		}
	}
}
