package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// The picker reads its choice from any reader: a number of the list or a task id; a wrong choice
// is named and asked again; an empty line or the end of the input chooses nothing.
func TestChooseTask(t *testing.T) {
	tasks := []graph.Task{{ID: "app#build", Description: "Bundle the app\nwith esbuild"}, {ID: "lib#test"}}
	for _, tc := range []struct {
		in, want, err string
	}{
		{"1\n", "app#build", ""},
		{"2", "lib#test", ""},
		{" lib#test \n", "lib#test", ""},
		{"9\nnope\n2\n", "lib#test", ""},
		{"\n", "", "no task chosen"},
		{"", "", "no task chosen"},
		{"3", "", "no task chosen"},
	} {
		var out strings.Builder
		got, err := chooseTask(strings.NewReader(tc.in), &out, tasks)
		if tc.err != "" {
			var usage *vxerr.UsageError
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &usage) {
				t.Errorf("choose %q: got %q, %v; want a usage error %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("choose %q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
		list := out.String()
		if !strings.Contains(list, "  1  app#build  Bundle the app\n  2  lib#test\n") {
			t.Errorf("choose %q: the list reads\n%s", tc.in, list)
		}
		if strings.Contains(tc.in, "nope") && !strings.Contains(list, `vx: "nope" is not a number from 1 to 2 nor a listed task`) {
			t.Errorf("choose %q: a wrong choice is not named:\n%s", tc.in, list)
		}
	}
}
