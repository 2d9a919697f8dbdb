package tool

import (
	"context"
	"encoding/json"
	"testing"
)

// A host's own key is removed before decoding, whatever its value, and never reaches the
// handler; every other unknown key is still refused by name.
func TestHostKeysNeverReachATool(t *testing.T) {
	type args struct {
		Task string `json:"task"`
	}
	var seen []string
	typed := New(Tool{Name: "typed"}, func(_ context.Context, _ *Call, a args) (args, error) { return a, nil })
	// raw answers the arguments it got, byte for byte, as a string.
	raw := New(Tool{Name: "raw"}, func(_ context.Context, c *Call, a json.RawMessage) (string, error) {
		seen = append(seen, string(a), string(c.Args))
		return string(a), nil
	})
	for _, tc := range []struct {
		tool                Tool
		args, want, refusal string
	}{
		{typed, `{"task":"build","wait_for_previous":true}`, `{"task":"build"}`, ""},
		{typed, `{"task":"build","wait_for_previou\u0073":true}`, `{"task":"build"}`, ""}, // spelt with an escape
		{typed, `{"wait_for_previous":"not even a boolean","task":"x"}`, `{"task":"x"}`, ""},
		{typed, `{"wait_for_previous":null}`, `{"task":""}`, ""},
		{typed, `{"task":"build","bogus":1}`, "", `unknown argument "bogus" (accepted: task)`},
		{typed, `{"bogus":1,"wait_for_previous":true}`, "", `unknown argument "bogus" (accepted: task)`},
		{typed, `{"task":"a","wait_for_previous":true,"task":"b"}`, "", `duplicate argument "task"`},
		{raw, `{"a" : [1, 2],"wait_for_previous":false,"b":{"wait_for_previous":1}}`, `"{\"a\":[1, 2],\"b\":{\"wait_for_previous\":1}}"`, ""},
		{raw, ` { "a" : 1 } `, `" { \"a\" : 1 } "`, ""},
	} {
		got, err := tc.tool.Call(context.Background(), &Call{Args: json.RawMessage(tc.args)})
		switch {
		case tc.refusal != "":
			if err == nil || !IsRefusal(err) || err.Error() != tc.refusal {
				t.Errorf("%s(%s) = %s, %v; want refusal %q", tc.tool.Name, tc.args, got, err, tc.refusal)
			}
		case err != nil || string(got) != tc.want:
			t.Errorf("%s(%s) = %s, %v; want %s", tc.tool.Name, tc.args, got, err, tc.want)
		}
	}
	for _, s := range seen {
		var top map[string]any
		if json.Unmarshal([]byte(s), &top) == nil && top["wait_for_previous"] != nil {
			t.Errorf("the handler saw the host's key: %s", s)
		}
	}
}
