package tool

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// filterArg is what runTasks/planTasks take for filter: a non-empty string or a
// list of them — an Unmarshaler checking itself.
type filterArg []string

func (f *filterArg) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil && one != "" {
		*f = filterArg{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err == nil && len(many) > 0 {
		for _, s := range many {
			if s == "" {
				return errors.New("must be a non-empty string or a list of them")
			}
		}
		*f = many
		return nil
	}
	return errors.New("must be a non-empty string or a list of them")
}

type scopeArgs struct {
	Project string `json:"project"`
}

type testArgs struct {
	Task    string            `json:"task" arg:"nonempty"`
	Limit   *float64          `json:"limit"`
	Count   int8              `json:"count"`
	Size    uint16            `json:"size"`
	Force   bool              `json:"force"`
	Tasks   []string          `json:"tasks"`
	Scope   *scopeArgs        `json:"scope"`
	Inline  scopeArgs         `json:"inline"`
	Env     map[string]string `json:"env"`
	Filter  filterArg         `json:"filter"`
	Any     any               `json:"any"`
	Raw     json.RawMessage   `json:"raw"`
	Skipped string            `json:"-"`
	hidden  string            //lint:ignore U1000 an unexported field, which Decode must leave alone
}

type requiredArgs struct {
	TaskID string `json:"taskId" arg:"required,nonempty"`
	RunID  string `json:"runId"`
}

type embedded struct {
	RunID string `json:"runId"`
}

type withEmbedded struct {
	embedded
	TaskID string `json:"taskId"`
}

func TestDecodeAccepts(t *testing.T) {
	limit := 20.0
	for _, tc := range []struct {
		raw  string
		want testArgs
	}{
		{`{}`, testArgs{}},
		{` { "task" : "build" } `, testArgs{Task: "build"}},
		{`{"limit":20}`, testArgs{Limit: &limit}},
		{`{"count":-128,"size":65535}`, testArgs{Count: -128, Size: 65535}},
		{`{"force":true,"tasks":["a","b"]}`, testArgs{Force: true, Tasks: []string{"a", "b"}}},
		{`{"tasks":[]}`, testArgs{Tasks: []string{}}},
		{`{"scope":{"project":"app"},"inline":{}}`, testArgs{Scope: &scopeArgs{Project: "app"}}},
		{`{"env":{"A":"1"}}`, testArgs{Env: map[string]string{"A": "1"}}},
		{`{"filter":"app..."}`, testArgs{Filter: filterArg{"app..."}}},
		{`{"filter":["a","b"]}`, testArgs{Filter: filterArg{"a", "b"}}},
		{`{"any":{"x":[1,null]}}`, testArgs{Any: map[string]any{"x": []any{1.0, nil}}}},
		{`{"any":null}`, testArgs{}},
		{`{"raw":[1, 2]}`, testArgs{Raw: json.RawMessage(`[1, 2]`)}},
	} {
		var got testArgs
		if err := Decode(json.RawMessage(tc.raw), &got); err != nil {
			t.Errorf("Decode(%s): %v", tc.raw, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Decode(%s) = %+v, want %+v", tc.raw, got, tc.want)
		}
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`"build"`, `arguments must be an object`},
		{`["build"]`, `arguments must be an object`},
		{`null`, `arguments must be an object`},
		{`{"task":`, `arguments are not valid JSON`},
		{`{} {}`, `arguments are not valid JSON`},
		{`{"tsk":"build"}`, `unknown argument "tsk"`},
		{`{"Task":"build"}`, `unknown argument "Task"`},
		{`{"hidden":"x"}`, `unknown argument "hidden"`},
		{`{"Skipped":"x"}`, `unknown argument "Skipped"`},
		{`{"task":"a","task":"b"}`, `duplicate argument "task"`},
		{`{"task":""}`, `argument "task" must be a non-empty string`},
		{`{"task":7}`, `argument "task" must be a non-empty string`},
		{`{"task":null}`, `argument "task" must be a non-empty string`},
		{`{"limit":"20"}`, `argument "limit" must be a finite number`},
		{`{"limit":null}`, `argument "limit" must be a finite number`},
		{`{"limit":1e400}`, `argument "limit" must be a finite number`},
		{`{"limit":true}`, `argument "limit" must be a finite number`},
		{`{"count":1.5}`, `argument "count" must be an integer`},
		{`{"count":1e2}`, `argument "count" must be an integer`},
		{`{"count":128}`, `argument "count" must be an integer from -128 to 127`},
		{`{"size":-1}`, `argument "size" must be a non-negative integer`},
		{`{"size":65536}`, `argument "size" must be an integer from 0 to 65535`},
		{`{"force":"true"}`, `argument "force" must be true or false`},
		{`{"force":1}`, `argument "force" must be true or false`},
		{`{"tasks":"build"}`, `argument "tasks" must be a list`},
		{`{"tasks":["a",3]}`, `argument "tasks[1]" must be a string`},
		{`{"scope":{"task":"build"}}`, `unknown argument "scope.task"`},
		{`{"scope":{"project":1}}`, `argument "scope.project" must be a string`},
		{`{"scope":"app"}`, `argument "scope" must be an object`},
		{`{"scope":null}`, `argument "scope" must be an object`},
		{`{"inline":{"x":1}}`, `unknown argument "inline.x"`},
		{`{"env":{"A":1}}`, `argument "env.A" must be a string`},
		{`{"env":{"A":"1","A":"2"}}`, `duplicate argument "env.A"`},
		{`{"filter":""}`, `argument "filter" must be a non-empty string or a list of them`},
		{`{"filter":["a",""]}`, `argument "filter" must be a non-empty string or a list of them`},
		{`{"filter":[]}`, `argument "filter" must be a non-empty string or a list of them`},
		{"{\"a\\nb\":1}", `unknown argument "a\nb"`},
	} {
		var got testArgs
		err := Decode(json.RawMessage(tc.raw), &got)
		var r *Refusal
		if !errors.As(err, &r) {
			t.Errorf("Decode(%s) = %v, want refusal %q", tc.raw, err, tc.want)
			continue
		}
		if r.Msg != tc.want && !strings.HasPrefix(r.Msg, tc.want+" (accepted: ") {
			t.Errorf("Decode(%s) refused %q, want %q", tc.raw, r.Msg, tc.want)
		}
		if strings.ContainsAny(r.Msg, "\r\n") {
			t.Errorf("Decode(%s) refusal is not one line: %q", tc.raw, r.Msg)
		}
	}
}

func TestDecodeRequired(t *testing.T) {
	var a requiredArgs
	err := Decode(json.RawMessage(`{"runId":"r1"}`), &a)
	if err == nil || err.Error() != `missing argument "taskId"` || !IsRefusal(err) {
		t.Fatalf("missing required: got %v", err)
	}
	err = Decode(json.RawMessage(`{"taskId":""}`), &a)
	if err == nil || err.Error() != `argument "taskId" must be a non-empty string` {
		t.Fatalf("empty required: got %v", err)
	}
	if err := Decode(json.RawMessage(`{"taskId":"app#build"}`), &a); err != nil || a.TaskID != "app#build" {
		t.Fatalf("required present: %v %+v", err, a)
	}
}

func TestDecodeEmbedded(t *testing.T) {
	var a withEmbedded
	if err := Decode(json.RawMessage(`{"runId":"r","taskId":"t"}`), &a); err != nil {
		t.Fatal(err)
	}
	if a.RunID != "r" || a.TaskID != "t" {
		t.Fatalf("got %+v", a)
	}
}

func TestDecodeProgrammingErrors(t *testing.T) {
	var s string
	for _, dst := range []any{nil, s, &s, testArgs{}, (*testArgs)(nil)} {
		err := Decode(json.RawMessage(`{}`), dst)
		if err == nil || IsRefusal(err) {
			t.Errorf("Decode(%T) = %v, want a programming error", dst, err)
		}
	}
	var bad struct {
		C chan int `json:"c"`
	}
	if err := Decode(json.RawMessage(`{"c":1}`), &bad); err == nil || IsRefusal(err) {
		t.Errorf("chan field: got %v, want a programming error", err)
	}
	var badTag struct {
		A string `json:"a" arg:"requird"`
	}
	if err := Decode(json.RawMessage(`{}`), &badTag); err == nil || IsRefusal(err) {
		t.Errorf("bad arg tag: got %v, want a programming error", err)
	}
	var otherDialect struct {
		A string `json:"a" args:"required,nonempty"`
	}
	if err := Decode(json.RawMessage(`{}`), &otherDialect); err == nil || IsRefusal(err) || !strings.Contains(err.Error(), `"args" tag is not read`) {
		t.Errorf("a tag of another dialect: got %v, want a programming error naming it", err)
	}
}

// FuzzDecode checks that Decode never panics, refuses with one line, and
// accepts nothing encoding/json would decode differently: strict is a subset of lenient.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"task":"build","limit":5}`, `{"tsk":1}`, `{"scope":{"task":"x"}}`,
		`{"tasks":["a","b"],"force":true}`, `{"count":1.0}`, `{"limit":1e400}`,
		`{"env":{"A":"1"},"filter":["x"]}`, `[]`, `"x"`, `{"any":[{"a":null}]}`,
		`{"task":"a","task":"a"}`, `{"size":-0}`, `{"raw":{"deep":[[[]]]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var strict testArgs
		err := Decode(raw, &strict)
		if err != nil {
			var r *Refusal
			if !errors.As(err, &r) {
				t.Fatalf("Decode(%q) returned a non-refusal %v", raw, err)
			}
			if strings.ContainsAny(r.Msg, "\r\n") || r.Msg == "" {
				t.Fatalf("Decode(%q) refusal %q is not one line", raw, r.Msg)
			}
			return
		}
		var lenient testArgs
		if err := json.Unmarshal(raw, &lenient); err != nil {
			t.Fatalf("Decode accepted %q that encoding/json refuses: %v", raw, err)
		}
		if len(lenient.Raw) > 0 {
			lenient.Raw = json.RawMessage(strings.TrimSpace(string(lenient.Raw)))
			strict.Raw = json.RawMessage(strings.TrimSpace(string(strict.Raw)))
		}
		if !reflect.DeepEqual(strict, lenient) {
			t.Fatalf("Decode(%q) = %+v, encoding/json = %+v", raw, strict, lenient)
		}
	})
}

// An unknown-argument refusal names every stray key, in the order given, and the keys the tool
// accepts, nested ones by their path.
func TestUnknownArgumentsAreAllNamed(t *testing.T) {
	type scope struct {
		Project string `json:"project"`
	}
	type args struct {
		Task  string `json:"task"`
		Scope *scope `json:"scope"`
	}
	for raw, want := range map[string]string{
		`{"tsk":"b","task":"x","lmit":3,"scope":{}}`: `unknown arguments "tsk", "lmit" (accepted: task, scope)`,
		`{"scope":{"proj":"a","task":"b"}}`:          `unknown arguments "scope.proj", "scope.task" (accepted: scope.project)`,
		`{"bogus":{"deep":[1,2,{"x":null}]}}`:        `unknown argument "bogus" (accepted: task, scope)`,
	} {
		var got args
		if err := Decode(json.RawMessage(raw), &got); err == nil || err.Error() != want {
			t.Errorf("Decode(%s) = %v, want %q", raw, err, want)
		}
	}
}
