package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/history"
)

// maskWhy masks a secret a command spells out wherever the answer repeats it: the structured
// diff's command, each root's, and the sides of the original's entries.
func TestMaskWhyMasksEveryCopyOfACommand(t *testing.T) {
	const secret = "tok-why-9f3a"
	before, after := "deploy --token "+secret, "deploy --token "+secret+" --v2"
	cmd := &history.CommandChange{Before: before, After: after}
	w := &history.Why{Found: true, Diff: history.Diff{Command: cmd, Entries: []history.Entry{
		{Kind: "command", Name: "command", Change: "changed", Before: &before, After: &after}}},
		Roots: []history.Root{{TaskID: "lib#build", Command: &history.CommandChange{Before: before, After: after},
			Entries: []history.Entry{{Kind: "command", Name: "command", Change: "changed", Before: &before, After: &after}}}}}
	maskWhy(w, func(s string) string { return strings.ReplaceAll(s, secret, "***") })
	out, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), secret) {
		t.Fatalf("the answer leaks the secret: %s", out)
	}
	if before != "deploy --token "+secret {
		t.Fatal("maskWhy changed the caller's strings instead of the answer's")
	}
}
