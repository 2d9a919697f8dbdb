package tools

import "testing"

func TestGraphHints(t *testing.T) {
	for _, tc := range []struct {
		args taskSelectionArgs
		want string
	}{
		{taskSelectionArgs{All: true}, "vx graph --out vx-graph.html"},
		{taskSelectionArgs{Tasks: taskNames{"app#build", "test"}, Filter: FilterList{"tag:web", "{./apps/my app}"},
			Affected: &Affected{On: true}}, "vx graph app#build test --filter tag:web --filter '{./apps/my app}' --affected --out vx-graph.html"},
		{taskSelectionArgs{Tasks: taskNames{"build"}, Affected: &Affected{On: true, Ref: "origin/main"}},
			"vx graph build --affected=origin/main --out vx-graph.html"},
		{taskSelectionArgs{Tasks: taskNames{"it's"}}, `vx graph 'it'\''s' --out vx-graph.html`},
	} {
		if got := planGraphHint(&tc.args); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.args, got, tc.want)
		}
	}
	if got := runGraphHint("01abc"); got != "vx last --run 01abc --format html --out vx-run-01abc.html" {
		t.Errorf("run hint %q", got)
	}
	if got := runGraphHint(""); got != "" {
		t.Errorf("no run: %q", got)
	}
}
