package actor_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"flag"
	"slices"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected replies in testdata/script/*.txtar")

// TestScripts runs every testdata/script/*.txtar: MCP sessions, each the lines a client writes
// (`stdin session.jsonl`) to the test server as a real process (`exec mcpserver`, which
// actortest.Serve runs with its test tools and the printer; VX_ACTOR_TEST_* set its config), and
// the replies it must write (`canon`, then `cmp stdout replies.jsonl`). stdin ends after the last
// line, so every session ends in the EOF shutdown. -update rewrites the expected replies.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"canon": canon},
	})
}

// canon rewrites the last command's stdout, a reply stream, in an order that does not depend on
// scheduling: a batch's replies sorted by id, and the lines sorted by id (numbers by value, then
// strings), the lines without one (notifications, errors with id null) last, in the order written.
// Every byte of every reply stays as the server wrote it. A line that is not JSON fails the script.
func canon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 0 {
		ts.Fatalf("usage: canon")
	}
	type line struct {
		key  idOrder
		text []byte
	}
	var lines []line
	for text := range bytes.Lines([]byte(ts.ReadFile("stdout"))) {
		text = bytes.TrimSuffix(text, []byte("\n"))
		if text[0] != '[' {
			lines = append(lines, line{orderOf(ts, text), text})
			continue
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(text, &raw); err != nil || len(raw) == 0 {
			ts.Fatalf("reply stream line is not a batch reply: %q", text)
		}
		elems := make([][]byte, len(raw))
		for i, e := range raw {
			elems[i] = e
		}
		slices.SortStableFunc(elems, func(a, b []byte) int { return orderOf(ts, a).compare(orderOf(ts, b)) })
		lines = append(lines, line{orderOf(ts, elems[0]), append(append([]byte("["), bytes.Join(elems, []byte(","))...), ']')})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return a.key.compare(b.key) })
	w := ts.Stdout()
	for _, l := range lines {
		w.Write(append(l.text, '\n'))
	}
}

// idOrder is where a message goes in canon's order.
type idOrder struct {
	class int // 0 a number id, 1 a string id, 2 none (or null)
	num   float64
	str   string
}

func (a idOrder) compare(b idOrder) int {
	return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.num, b.num), cmp.Compare(a.str, b.str))
}

func orderOf(ts *testscript.TestScript, msg []byte) idOrder {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		ts.Fatalf("reply stream line is not a JSON-RPC message: %q", msg)
	}
	if n, err := strconv.ParseFloat(string(m.ID), 64); err == nil {
		return idOrder{class: 0, num: n}
	}
	var s string
	if json.Unmarshal(m.ID, &s) == nil {
		return idOrder{class: 1, str: s}
	}
	return idOrder{class: 2}
}
