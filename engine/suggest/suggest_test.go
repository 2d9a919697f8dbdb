package suggest

import "testing"

func TestClosest(t *testing.T) {
	verbs := []string{"run", "show", "last", "why", "cache", "init", "docs", "lock", "info", "ls"}
	for _, tc := range []struct {
		word       string
		candidates []string
		want       string
	}{
		{"shwo", verbs, "show"},
		{"rnu", verbs, "run"},
		{"runn", verbs, "run"},
		{"SHOW", verbs, "show"},
		{"lats", verbs, "last"},
		{"deploy", verbs, ""},
		{"x", verbs, ""},
		{"biuld", []string{"build", "test", "lint"}, "build"},
		{"tset", []string{"build", "test", "lint"}, "test"},
		{"--dry-run", []string{"--dry", "--force", "--filter", "--all"}, "--dry"},
		{"--filtre", []string{"--dry", "--force", "--filter", "--all"}, "--filter"},
		{"--concurency", []string{"--concurrency", "--continue"}, "--concurrency"},
		{"web-ap", []string{"web-app", "web-api", "docs"}, "web-api"},
		{"@acme/wbe", []string{"@acme/web", "@acme/ui"}, "@acme/web"},
		{"build", []string{"build"}, ""},
		{"", []string{"a"}, ""},
	} {
		got, ok := Closest(tc.word, tc.candidates)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("Closest(%q) = %q, %v; want %q", tc.word, got, ok, tc.want)
		}
	}
}
