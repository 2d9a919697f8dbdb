package main

import (
	"fmt"
	"testing"
)

// A half task id names the task ids it could mean, the first maxCandidates of them, then how many
// more; an id that could mean none has no hint.
func TestTaskIDHint(t *testing.T) {
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf("p%02d#build", i))
	}
	for _, tc := range []struct {
		id   string
		ids  []string
		want string
	}{
		{"build", []string{"lib#build", "app#build", "app#test"}, `"build" is a task name; say which: app#build, lib#build`},
		{"#test", []string{"lib#build", "app#test"}, `"#test" is a task name with no project; say which: app#test`},
		{"app#", []string{"lib#build", "app#test", "app#build"}, `"app#" is a project with no task; say which: app#build, app#test`},
		{"test", []string{"test#build", "app#test"}, `"test" is a task name and a project; say which: app#test, test#build`},
		{"build", many, `"build" is a task name; say which: p00#build, p01#build, p02#build, p03#build, p04#build, p05#build, ` +
			`p06#build, p07#build, p08#build, p09#build, p10#build, p11#build and 8 more`},
		{"nope", []string{"app#build"}, ""},
		{"#", []string{"app#build"}, ""},
	} {
		if got := taskIDHint(tc.id, tc.ids); got != tc.want {
			t.Errorf("taskIDHint(%q)\n got %s\nwant %s", tc.id, got, tc.want)
		}
	}
}
