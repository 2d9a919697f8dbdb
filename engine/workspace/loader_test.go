package workspace

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
)

// nilDiffs lists where got and want differ in being nil: a nil slice, map or pointer on one side
// and an empty (or allocated) one on the other. reflect.DeepEqual fails on these too; this says where.
func nilDiffs(path string, want, got reflect.Value, out *[]string) {
	switch want.Kind() {
	case reflect.Pointer:
		if want.IsNil() != got.IsNil() {
			*out = append(*out, fmt.Sprintf("%s: want nil %v, got nil %v", path, want.IsNil(), got.IsNil()))
		} else if !want.IsNil() {
			nilDiffs(path, want.Elem(), got.Elem(), out)
		}
	case reflect.Struct:
		for i := range want.NumField() {
			if want.Type().Field(i).IsExported() {
				nilDiffs(path+"."+want.Type().Field(i).Name, want.Field(i), got.Field(i), out)
			}
		}
	case reflect.Slice:
		if want.IsNil() != got.IsNil() {
			*out = append(*out, fmt.Sprintf("%s: want nil %v (len %d), got nil %v (len %d)", path, want.IsNil(), want.Len(), got.IsNil(), got.Len()))
		}
		for i := range min(want.Len(), got.Len()) {
			nilDiffs(fmt.Sprintf("%s[%d]", path, i), want.Index(i), got.Index(i), out)
		}
	case reflect.Map:
		if want.IsNil() != got.IsNil() {
			*out = append(*out, fmt.Sprintf("%s: want nil %v, got nil %v", path, want.IsNil(), got.IsNil()))
		}
		for _, k := range want.MapKeys() {
			if g := got.MapIndex(k); g.IsValid() {
				nilDiffs(fmt.Sprintf("%s[%v]", path, k), want.MapIndex(k), g, out)
			}
		}
	}
}

// keptRoundTrip writes ws through the loader's kept form (resolved.gob) and reads it back.
func keptRoundTrip(t *testing.T, root string, ws *graph.Workspace) *graph.Workspace {
	t.Helper()
	cacheDir := filepath.Join(root, ".vx")
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeResolved(cacheDir, &loaded{Version: "test", Root: root, WS: ws})
	c := readResolved(cacheDir, root, "test")
	if c == nil {
		t.Fatal("the kept workspace does not read back")
	}
	c.WS.Index()
	return c.WS
}

// sameWorkspace fails unless got is exactly want, nil and empty told apart.
func sameWorkspace(t *testing.T, want, got *graph.Workspace) {
	t.Helper()
	var diffs []string
	nilDiffs("Workspace", reflect.ValueOf(want), reflect.ValueOf(got), &diffs)
	if len(diffs) > 0 {
		t.Errorf("read back, %d lists or maps changed between nil and empty:\n%s", len(diffs), strings.Join(diffs, "\n"))
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("read back, the workspace differs:\nwant %+v\n got %+v", want, got)
	}
}

// Empty lists keep their meaning across processes: `inputs: []` is no files when evaluated and
// must not read back from .vx/config/resolved.gob as nil (every file of the project), nor
// `env: []` print null; gob drops empty slices, so the kept form says which were empty.
func TestKeptWorkspaceKeepsEmptyLists(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": `import { mcp } from '@vzn/vx-mcp'
export default {
  projects: ['packages/*'],
  globalInputs: [],
  plugins: [mcp({ run: [] })],
  tasks: {
    build: { command: 'make', inputs: [], outputs: [], env: [], dependsOn: [], sandbox: { read: [], write: [] } },
    test: { command: 'make test', dependsOn: ['build'], sandbox: true },
  },
}
`,
		"packages/a/vx.project.ts": "export default { tags: [], dependsOn: [] }\n",
		"packages/b/package.json":  `{"name": "b", "scripts": {}}`,
	})
	if err := os.Mkdir(filepath.Join(root, ".vx"), 0o755); err != nil {
		t.Fatal(err)
	}
	backdate(t, root)
	ctx := context.Background()
	fresh, err := NewLoader(Options{Dir: root}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	build, _ := fresh.Task("a#build")
	if build.Inputs == nil || len(build.Inputs) != 0 || !slices.Equal(build.Env, []string{}) {
		t.Fatalf("evaluated: inputs %#v env %#v, want both empty", build.Inputs, build.Env)
	}
	if _, err := os.Stat(resolvedFile(filepath.Join(root, ".vx"))); err != nil {
		t.Fatalf("the workspace was not kept: %v", err)
	}

	// A new process reads it back from .vx/.
	kept, err := NewLoader(Options{Dir: root}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if kept == fresh {
		t.Fatal("a new loader answered the first loader's workspace")
	}
	sameWorkspace(t, fresh, kept)
	build, _ = kept.Task("a#build")
	if build.InputsDefault() {
		t.Error("read back, `inputs: []` means every file of the project")
	}
	if js, _ := json.Marshal(build); !strings.Contains(string(js), `"env":[]`) || !strings.Contains(string(js), `"inputs":[]`) {
		t.Errorf("read back, the task prints %s", js)
	}
	if test, _ := kept.Task("a#test"); !test.InputsDefault() {
		t.Error("read back, a task without inputs lost its default")
	}
}

// fillEmpty sets every exported field of the struct v to a non-zero value, and every list and map
// to an empty one — or, with empty false, leaves them nil — so that a round trip is checked for
// every field, today's and any added later. A list or map of structs gets two elements, one of each
// kind; strings are numbered so that names and ids stay unique.
func fillEmpty(v reflect.Value, empty bool, n *int) {
	for i := range v.NumField() {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() || sf.Name == "Secrets" { // secrets are never kept
			continue
		}
		fillValue(f, empty, n)
	}
}

func fillValue(f reflect.Value, empty bool, n *int) {
	*n++
	holdsStruct := func(t reflect.Type) bool {
		return t.Kind() == reflect.Struct || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct
	}
	newElem := func(t reflect.Type, empty bool) reflect.Value {
		if t.Kind() == reflect.Pointer { // an element is there either way: fill what it points to
			e := reflect.New(t.Elem())
			fillValue(e.Elem(), empty, n)
			return e
		}
		e := reflect.New(t).Elem()
		fillValue(e, empty, n)
		return e
	}
	switch f.Kind() {
	case reflect.String:
		f.SetString(fmt.Sprintf("s%d", *n))
	case reflect.Bool:
		f.SetBool(true)
	case reflect.Int, reflect.Int64:
		f.SetInt(int64(*n))
	case reflect.Struct:
		fillEmpty(f, empty, n)
	case reflect.Pointer:
		if empty {
			f.Set(reflect.New(f.Type().Elem()))
			fillValue(f.Elem(), empty, n)
		}
	case reflect.Slice:
		switch {
		case holdsStruct(f.Type().Elem()):
			f.Set(reflect.Append(reflect.MakeSlice(f.Type(), 0, 2), newElem(f.Type().Elem(), true), newElem(f.Type().Elem(), false)))
		case empty:
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		}
	case reflect.Map:
		switch {
		case holdsStruct(f.Type().Elem()):
			f.Set(reflect.MakeMap(f.Type()))
			f.SetMapIndex(reflect.ValueOf("empty"), newElem(f.Type().Elem(), true))
			f.SetMapIndex(reflect.ValueOf("nil"), newElem(f.Type().Elem(), false))
		case empty:
			f.Set(reflect.MakeMap(f.Type()))
		}
	}
}

// Every list and map of graph.Workspace, Project and Task — Sandbox.Read/Write, Tags, DependsOn,
// GlobalInputs, Scripts, ExecEnv and the rest — reads back from the kept form exactly, nil as nil
// and empty as empty.
func TestKeptWorkspaceKeepsEveryFieldNilOrEmpty(t *testing.T) {
	root := t.TempDir()
	ws := &graph.Workspace{}
	var n int
	fillEmpty(reflect.ValueOf(ws).Elem(), true, &n)
	// Task ids and project names are what Index keys by: make them agree.
	for _, p := range ws.Projects {
		for name, task := range p.Tasks {
			task.Project, task.Name, task.ID = p.Name, name, graph.TaskID(p.Name, name)
		}
	}
	ws.Index()
	if len(ws.TaskIDs()) != 4 || len(ws.Projects) != 2 {
		t.Fatalf("fixture: %d projects, tasks %v", len(ws.Projects), ws.TaskIDs())
	}
	sameWorkspace(t, ws, keptRoundTrip(t, root, ws))
}

// LoadConfig answers the last workspace while the config and what it imports are unchanged,
// though a package.json changed (a Load then evaluates again); an edit of the config, or of a
// file it imports, is seen at once, from a kept workspace (another process's) too.
func TestLoadConfigSeesOnlyTheConfig(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": "import { mcp } from '@vzn/vx-mcp'\nimport { budget } from './budget'\n" +
			"export default { projects: ['packages/*'], plugins: [mcp({ answerChars: budget })] }\n",
		"budget.ts":               "export const budget = 20000\n",
		"packages/a/package.json": `{"name": "a"}`,
	})
	if err := os.Mkdir(filepath.Join(root, ".vx"), 0o755); err != nil {
		t.Fatal(err)
	}
	backdate(t, root)
	ctx := context.Background()
	l := NewLoader(Options{Dir: root})
	first, err := l.Load(ctx)
	if err != nil || first.MCP.Budget() != 20000 {
		t.Fatalf("loaded with budget %d (%v), want the imported 20000", first.MCP.Budget(), err)
	}
	writeTree(t, root, map[string]string{"packages/a/package.json": `{"name": "a", "scripts": {"build": "make"}}`})
	if ws, err := l.LoadConfig(ctx); err != nil || ws != first {
		t.Fatalf("after a package.json edit LoadConfig answered %p (%v), want the last workspace %p", ws, err, first)
	}
	again, err := l.Load(ctx)
	if err != nil || again == first {
		t.Fatalf("Load after a package.json edit answered the last workspace (%v)", err)
	}
	for _, edit := range []struct {
		name, text string
		want       int
	}{
		{"budget.ts", "export const budget = 30000\n", 30000},
		{"vx.workspace.ts", "import { mcp } from '@vzn/vx-mcp'\nexport default { projects: ['packages/*'], plugins: [mcp({ answerChars: 25000 })] }\n", 25000},
	} {
		name := edit.name
		writeTree(t, root, map[string]string{name: edit.text})
		for _, loader := range []*Loader{l, NewLoader(Options{Dir: root})} {
			ws, err := loader.LoadConfig(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := ws.MCP.Budget(); got != edit.want {
				t.Fatalf("after an edit of %s LoadConfig answered the budget %d, want %d", name, got, edit.want)
			}
		}
	}
}

// A racy stamp (a file changed just before it was stamped) is hashed at every read until it is
// old enough to trust; the first process that finds it so keeps the workspace again, so that no
// later process hashes it, and an edit after that is still seen through the stat.
func TestSettledStampsAreKeptAgain(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts":         "export default { projects: ['packages/*'], tasks: { build: { command: 'make' } } }\n",
		"packages/a/package.json": `{"name": "a"}`,
	})
	cacheDir := filepath.Join(root, ".vx")
	if err := os.Mkdir(cacheDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := NewLoader(Options{Dir: root}).Load(ctx); err != nil {
		t.Fatal(err)
	}
	racy := func() (n int) {
		t.Helper()
		f, err := os.Open(resolvedFile(cacheDir))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		c, err := decodeLoaded(gob.NewDecoder(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range c.Stamps {
			if s.Racy {
				n++
			}
		}
		return n
	}
	if racy() == 0 {
		t.Fatal("files written just before the load were not stamped racy")
	}
	time.Sleep(racyWindow + 100*time.Millisecond)
	if _, err := NewLoader(Options{Dir: root}).Load(ctx); err != nil {
		t.Fatal(err)
	}
	if n := racy(); n != 0 {
		t.Fatalf("%d stamps are still kept racy once old enough", n)
	}
	// Trusted by their stat from now on: an edit that moves it is still seen.
	writeTree(t, root, map[string]string{"packages/a/package.json": `{"name": "renamed-a"}`})
	ws, err := NewLoader(Options{Dir: root}).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ws.Task("renamed-a#build"); !ok {
		t.Fatalf("an edit after the stamps settled was missed: tasks %v", ws.TaskIDs())
	}
}
