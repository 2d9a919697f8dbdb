package agents

import (
	"os/exec"
	"reflect"
	"testing"
)

// TestJSONKeepsCommentsAfterMembers: a comment on the line of a member, the last one included,
// stays on that member's line when vx's member is added after it.
func TestJSONKeepsCommentsAfterMembers(t *testing.T) {
	for _, c := range []struct{ name, old, want string }{
		{"after the last member",
			"{\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db\"} // the db server\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db\"}, // the db server\n    \"vx\": {\"command\": \"vx\", \"args\": [\"mcp\"]}\n  }\n}\n"},
		{"after every member",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // a\n    \"b\": {\"command\": \"b\"} /* b */\n    // trailing note\n  } // servers\n}\n",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // a\n    \"b\": {\"command\": \"b\"}, /* b */\n    \"vx\": {\"command\": \"vx\", \"args\": [\"mcp\"]}\n    // trailing note\n  } // servers\n}\n"},
		{"after the last root member",
			"{\n  \"theme\": \"dark\" // mine\n}\n",
			"{\n  \"theme\": \"dark\", // mine\n  \"mcpServers\": {\n    \"vx\": {\n      \"command\": \"vx\",\n      \"args\": [\n        \"mcp\"\n      ]\n    }\n  }\n}\n"},
		{"on one line",
			`{"mcpServers": {"db": {"command": "db"} /* db */}}`,
			`{"mcpServers": {"db": {"command": "db"} /* db */, "vx": {"command": "vx", "args": ["mcp"]}}}`},
		{"after vx's own member",
			"{\n  \"mcpServers\": {\n    \"vx\": {\"command\": \"old\"} // pinned\n  }\n}\n",
			"{\n  \"mcpServers\": {\n    \"vx\": {\"command\": \"vx\", \"args\": [\"mcp\"]} // pinned\n  }\n}\n"},
	} {
		got, err := jsonServer("mcpServers", server(nil))([]byte(c.old))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

// TestJSONDuplicateKeys: where a file names mcpServers (or vx) twice, vx edits the last one, the
// one every host reads, and the file then reads, as JSON.parse reads it, with vx's entry.
func TestJSONDuplicateKeys(t *testing.T) {
	want := map[string]any{"command": "vx", "args": []any{"mcp"}}
	for _, old := range []string{
		`{"mcpServers": {"db": {"command": "db"}}, "mcpServers": {"e": {"command": "e"}}}`,
		`{"mcpServers": {"vx": {"command": "vx", "args": ["mcp"]}}, "mcpServers": {"e": {"command": "e"}}}`,
		`{"mcpServers": {"vx": {"command": "evil"}, "vx": {"command": "old"}}}`,
		`{"mcpServers": {"e": {"command": "e"}}, "mcpServers": null}`,
	} {
		got, err := jsonServer("mcpServers", server(nil))([]byte(old))
		if err != nil {
			t.Fatalf("%s: %v", old, err)
		}
		doc := decode(t, string(got))
		if vx := doc["mcpServers"].(map[string]any)["vx"]; !reflect.DeepEqual(vx, want) {
			t.Errorf("%s: the last mcpServers.vx is %v in\n%s", old, vx, got)
		}
		if node, err := exec.LookPath("node"); err == nil {
			out, err := exec.Command(node, "-e", "process.stdout.write(JSON.stringify(JSON.parse(process.argv[1]).mcpServers.vx))", string(got)).Output()
			if err != nil || string(out) != `{"command":"vx","args":["mcp"]}` {
				t.Errorf("%s: JSON.parse reads mcpServers.vx as %s (%v)", old, out, err)
			}
		}
	}
}

// TestJSONParsedBack: what vx writes into a JSON file is parsed back; an edit that would change
// another member is refused naming the file, which is left as it was.
func TestJSONParsedBack(t *testing.T) {
	old := []byte(`{"mcpServers": {"e": {"command": "e"}}, "mcpServers": {"f": {"command": "f"}}}`)
	before, err := decodeJSON(old)
	if err != nil {
		t.Fatal(err)
	}
	// The text an edit of the first duplicate (today's) gives: the host would not see vx.
	wrong := []byte(`{"mcpServers": {"e": {"command": "e"}, "vx": {"command": "vx", "args": ["mcp"]}}, "mcpServers": {"f": {"command": "f"}}}`)
	if err := checkJSON(before, wrong, "mcpServers", server(nil)); err == nil {
		t.Errorf("an edit the host does not read passed the check")
	}
	changed := []byte(`{"mcpServers": {"vx": {"command": "vx", "args": ["mcp"]}}}`)
	if err := checkJSON(before, changed, "mcpServers", server(nil)); err == nil {
		t.Errorf("an edit that drops a server passed the check")
	}
}

// TestJSONKeepsTheFileStyle: the member vx adds or replaces is written as the file writes its
// own: its indentation (spaces of any width, or tabs), its colon and comma spacing, objects and
// arrays a member a line or on one line as the file has them.
func TestJSONKeepsTheFileStyle(t *testing.T) {
	for _, c := range []struct{ name, old, want string }{
		{"four spaces, as JSON.stringify(doc, null, 4)",
			"{\n    \"mcpServers\": {\n        \"db\": {\n            \"command\": \"db\",\n            \"args\": [\n                \"serve\"\n            ]\n        }\n    }\n}\n",
			"{\n    \"mcpServers\": {\n        \"db\": {\n            \"command\": \"db\",\n            \"args\": [\n                \"serve\"\n            ]\n        },\n        \"vx\": {\n            \"command\": \"vx\",\n            \"args\": [\n                \"mcp\"\n            ]\n        }\n    }\n}\n"},
		{"tabs, no server yet",
			"{\n\t\"theme\": \"dark\",\n\t\"mcpServers\": {}\n}\n",
			"{\n\t\"theme\": \"dark\",\n\t\"mcpServers\": {\n\t\t\"vx\": {\n\t\t\t\"command\": \"vx\",\n\t\t\t\"args\": [\n\t\t\t\t\"mcp\"\n\t\t\t]\n\t\t}\n\t}\n}\n"},
		{"two spaces, no colon space, arrays on one line",
			"{\n  \"theme\":\"dark\",\n  \"tags\":[\"a\", \"b\"]\n}\n",
			"{\n  \"theme\":\"dark\",\n  \"tags\":[\"a\", \"b\"],\n  \"mcpServers\":{\n    \"vx\":{\n      \"command\":\"vx\",\n      \"args\":[\"mcp\"]\n    }\n  }\n}\n"},
		{"spaced colons, vx replaced where it is",
			"{\n   \"mcpServers\" : {\n      \"vx\" : {\n         \"command\" : \"old\"\n      }\n   }\n}\n",
			"{\n   \"mcpServers\" : {\n      \"vx\" : {\n         \"command\" : \"vx\",\n         \"args\" : [\n            \"mcp\"\n         ]\n      }\n   }\n}\n"},
		{"minified",
			`{"theme":"dark","mcpServers":{"db":{"command":"db"}}}`,
			`{"theme":"dark","mcpServers":{"db":{"command":"db"},"vx":{"command":"vx","args":["mcp"]}}}`},
	} {
		got, err := jsonServer("mcpServers", server(nil))([]byte(c.old))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(got) != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, got, c.want)
		}
		if again, err := jsonServer("mcpServers", server(nil))(got); err != nil || string(again) != string(got) {
			t.Errorf("%s: a second merge changed the file (%v):\n%s", c.name, err, again)
		}
		if node, err := exec.LookPath("node"); err == nil {
			out, err := exec.Command(node, "-e", "process.stdout.write(JSON.stringify(JSON.parse(process.argv[1]).mcpServers.vx))", string(got)).Output()
			if err != nil || string(out) != `{"command":"vx","args":["mcp"]}` {
				t.Errorf("%s: JSON.parse reads mcpServers.vx as %s (%v)", c.name, out, err)
			}
		}
	}
}
