// Command shapes writes one of the benchmark workspaces of docs/performance.md ("The benchmark
// shapes") into a folder, set up so that vx, Turborepo and Nx run the same tasks: a root
// package.json with npm workspaces, one package.json per project whose scripts are the task
// commands, vx.workspace.ts, turbo.json and nx.json.
//
//	go run ./stress/shapes -shape g1 -n 100 -out DIR
//	go run ./stress/shapes -shape g2 -layers 100 -out DIR
//	go run ./stress/shapes -shape g3 -levels 30 -out DIR
//
// The shapes:
//   - g1: n projects; project i depends on projects i−3, i−6 and i−9; one source file each; tasks
//     build, test and the group task check (dependsOn build and test, no command);
//   - g2: 1,090 packages in 100 layers (fewer with -layers, the same width), each depending on
//     every package of the layer below; tasks build, test and lint, each `sleep 1`;
//   - g3: one core project and 1,600 projects in 29 levels above it (30 levels; fewer with
//     -levels, the same width), each depending on three projects of the level below; 20 source
//     files a project; the core has build, test and lint, every other project build, test, lint,
//     typecheck, docs and pack (9,603 tasks); build writes 200 KB of random bytes.
//
// It prints to stdout one line of shell assignments the benchmark script reads: the task names to
// run, the task count, the leaf and core source files to edit, and for g2 the ideal schedule at
// -concurrency (see idealSchedule).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// task is one task of a shape: its name, its package script (empty for a group task), the tasks
// it depends on (Turborepo's syntax: ^name for the dependencies' task), its inputs and outputs
// (globs under the project).
type task struct {
	name    string
	script  string
	deps    []string
	inputs  []string
	outputs []string
}

// project is one generated project: its name, the projects it depends on, its source files
// (relative path → content) and the names of its tasks.
type project struct {
	name  string
	deps  []string
	files map[string]string
	tasks []string
}

// shape is a whole generated workspace.
type shape struct {
	tasks    []task
	projects []project
	// leaf and core are the source files a leaf edit and a core edit change (workspace-relative).
	leaf, core string
	// run is the task names the benchmark runs.
	run []string
	// vxGroups says whether vx.workspace.ts declares the group tasks (a vx that refuses a task
	// with no command is run without them).
	vxGroups bool
	// vxDirect gives vx the scripts' text as commands (a test that needs no npm).
	vxDirect bool
	// npm is the npm version the root package.json names (Turborepo reads it).
	npm string
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "shapes:", err)
		os.Exit(2)
	}
}

func run(args []string) error {
	fl := flag.NewFlagSet("shapes", flag.ContinueOnError)
	name := fl.String("shape", "g1", "the shape: g1, g2 or g3")
	n := fl.Int("n", 100, "g1: the number of projects")
	layers := fl.Int("layers", 100, "g2: the number of layers (1..100)")
	levels := fl.Int("levels", 30, "g3: the number of levels (2..30)")
	conc := fl.Int("concurrency", 10, "g2: the concurrency the ideal schedule is computed at")
	out := fl.String("out", "", "the folder to write the workspace into (must not exist)")
	npm := fl.String("npm", "10.9.0", "the npm version the root package.json's packageManager names")
	vxDirect := fl.Bool("vx-direct", false, "give vx each script's text as its command instead of `npm run NAME`")
	vxGroups := fl.Bool("vx-groups", true, "write the group tasks (no command) into vx.workspace.ts too")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("-out: a folder is required")
	}
	var s shape
	switch *name {
	case "g1":
		if *n < 1 {
			return fmt.Errorf("-n %d: at least one project", *n)
		}
		s = g1(*n)
	case "g2":
		if *layers < 1 || *layers > 100 {
			return fmt.Errorf("-layers %d: between 1 and 100", *layers)
		}
		s = g2(*layers)
	case "g3":
		if *levels < 2 || *levels > 30 {
			return fmt.Errorf("-levels %d: between 2 and 30", *levels)
		}
		s = g3(*levels)
	default:
		return fmt.Errorf("-shape %q: want g1, g2 or g3", *name)
	}
	if *conc < 1 {
		return fmt.Errorf("-concurrency %d: at least 1", *conc)
	}
	if _, err := os.Lstat(*out); err == nil {
		return fmt.Errorf("-out %s: already exists", *out)
	}
	s.vxGroups, s.vxDirect, s.npm = *vxGroups, *vxDirect, *npm
	if err := s.write(*out); err != nil {
		return err
	}
	fmt.Printf("tasks=%q count=%d projects=%d leaf=%q core=%q", strings.Join(s.run, " "), s.count(), len(s.projects), s.leaf, s.core)
	if *name == "g2" {
		lower, list := idealSchedule(s, *conc)
		fmt.Printf(" ideal_lower_s=%d ideal_list_s=%d", lower, list)
	}
	fmt.Println()
	return nil
}

// count answers how many tasks the shape has.
func (s shape) count() int {
	n := 0
	for _, p := range s.projects {
		n += len(p.tasks)
	}
	return n
}

// g1 is n projects, project i depending on i−3, i−6 and i−9, one source file each.
func g1(n int) shape {
	s := shape{
		tasks: []task{
			{name: "build", script: "mkdir -p dist && cp src/index.js dist/index.js", deps: []string{"^build"}, inputs: []string{"src/**"}, outputs: []string{"dist/**"}},
			{name: "test", script: "cmp src/index.js dist/index.js", deps: []string{"build"}, inputs: []string{"src/**"}},
			{name: "check", deps: []string{"build", "test"}},
		},
		run: []string{"build", "test", "check"},
	}
	for i := range n {
		p := project{name: g1Name(i), files: map[string]string{"src/index.js": fmt.Sprintf("export const n = %d\n", i)}, tasks: []string{"build", "test", "check"}}
		for _, d := range []int{3, 6, 9} {
			if i-d >= 0 {
				p.deps = append(p.deps, g1Name(i-d))
			}
		}
		s.projects = append(s.projects, p)
	}
	s.core = "packages/" + g1Name(0) + "/src/index.js"
	s.leaf = "packages/" + g1Name(n-1) + "/src/index.js"
	return s
}

func g1Name(i int) string { return fmt.Sprintf("p%05d", i) }

// g2Width is the number of packages in layer l of g2: 1,090 packages in 100 layers, the first
// 90 layers of 11 and the last 10 of 10.
func g2Width(l int) int {
	if l < 90 {
		return 11
	}
	return 10
}

// g2 is the first layers of the 100 of 1,090 packages, each depending on every package of the
// layer below; build, test and lint are each `sleep 1`.
func g2(layers int) shape {
	s := shape{
		tasks: []task{
			{name: "build", script: "sleep 1", deps: []string{"^build"}, inputs: []string{"src/**"}},
			{name: "test", script: "sleep 1", deps: []string{"build"}, inputs: []string{"src/**"}},
			{name: "lint", script: "sleep 1", inputs: []string{"src/**"}},
		},
		run: []string{"build", "test", "lint"},
	}
	var below []string
	for l := range layers {
		var here []string
		for j := range g2Width(l) {
			name := fmt.Sprintf("l%03d-%02d", l, j)
			here = append(here, name)
			s.projects = append(s.projects, project{name: name, deps: below,
				files: map[string]string{"src/index.js": fmt.Sprintf("export const layer = %d, n = %d\n", l, j)},
				tasks: []string{"build", "test", "lint"}})
		}
		below = here
	}
	s.core = "packages/" + s.projects[0].name + "/src/index.js"
	s.leaf = "packages/" + s.projects[len(s.projects)-1].name + "/src/index.js"
	return s
}

// g3Width is the number of projects in each level of g3 above the core: 1,600 in 29 levels, the
// first 5 of 56 and the other 24 of 55.
func g3Width(level int) int {
	if level <= 5 {
		return 56
	}
	return 55
}

// g3 is a core project and the first levels of 29 above it, each project depending on three of
// the level below, 20 source files each; build writes 200 KB of random bytes.
func g3(levels int) shape {
	build := "mkdir -p dist && cat src/*.js > dist/index.js && head -c 204800 /dev/urandom > dist/blob.bin"
	s := shape{
		tasks: []task{
			{name: "build", script: build, deps: []string{"^build"}, inputs: []string{"src/**"}, outputs: []string{"dist/**"}},
			{name: "test", script: "cmp -s src/f00.js src/f00.js && test -s dist/blob.bin", deps: []string{"build"}, inputs: []string{"src/**"}},
			{name: "lint", script: "grep -q export src/f00.js", inputs: []string{"src/**"}},
			{name: "typecheck", script: "cat src/*.js > /dev/null", deps: []string{"^build"}, inputs: []string{"src/**"}},
			{name: "docs", script: "mkdir -p docs && ls src > docs/index.txt", inputs: []string{"src/**"}, outputs: []string{"docs/**"}},
			{name: "pack", script: "mkdir -p pack && cp dist/index.js pack/index.js", deps: []string{"build"}, inputs: []string{"src/**"}, outputs: []string{"pack/**"}},
		},
		run: []string{"build", "test", "lint", "typecheck", "docs", "pack"},
	}
	sources := func(seed string) map[string]string {
		files := map[string]string{}
		for f := range 20 {
			files[fmt.Sprintf("src/f%02d.js", f)] = fmt.Sprintf("export const %s_%d = %d\n", strings.ReplaceAll(seed, "-", "_"), f, f)
		}
		return files
	}
	s.projects = append(s.projects, project{name: "core", files: sources("core"), tasks: []string{"build", "test", "lint"}})
	below := []string{"core"}
	for level := 1; level < levels; level++ {
		var here []string
		for j := range g3Width(level) {
			name := fmt.Sprintf("v%02d-%02d", level, j)
			here = append(here, name)
			var deps []string
			for k := range min(3, len(below)) {
				deps = append(deps, below[(j+k)%len(below)])
			}
			s.projects = append(s.projects, project{name: name, deps: deps, files: sources(name),
				tasks: []string{"build", "test", "lint", "typecheck", "docs", "pack"}})
		}
		below = here
	}
	s.core = "packages/core/src/f00.js"
	s.leaf = "packages/" + s.projects[len(s.projects)-1].name + "/src/f00.js"
	return s
}

// write writes the workspace into dir.
func (s shape) write(dir string) error {
	files := map[string]string{
		"package.json":    `{ "name": "shape", "private": true, "packageManager": "npm@` + s.npm + `", "workspaces": ["packages/*"] }` + "\n",
		".gitignore":      "node_modules\n.vx\n.turbo\n.nx\ndist\ndocs\npack\n",
		"turbo.json":      s.turboJSON(),
		"nx.json":         s.nxJSON(),
		"vx.workspace.ts": s.vxConfig(),
	}
	for _, p := range s.projects {
		pj, err := s.packageJSON(p)
		if err != nil {
			return err
		}
		files["packages/"+p.name+"/package.json"] = pj
		for rel, content := range p.files {
			files["packages/"+p.name+"/"+rel] = content
		}
	}
	for rel, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
	}
	return nil
}

// taskByName answers the shape's task of that name.
func (s shape) taskByName(name string) task {
	for _, t := range s.tasks {
		if t.name == name {
			return t
		}
	}
	panic("shapes: no task " + name)
}

// packageJSON is a project's package.json: its scripts (the tasks with a command), its
// dependencies, and for Nx a no-op target for each group task.
func (s shape) packageJSON(p project) (string, error) {
	scripts := map[string]string{}
	targets := map[string]any{}
	for _, name := range p.tasks {
		t := s.taskByName(name)
		if t.script != "" {
			scripts[name] = t.script
			continue
		}
		targets[name] = map[string]any{"executor": "nx:noop", "dependsOn": t.deps}
	}
	deps := map[string]string{}
	for _, d := range p.deps {
		deps[d] = "*"
	}
	doc := map[string]any{"name": p.name, "version": "1.0.0", "private": true, "scripts": scripts, "dependencies": deps}
	if len(targets) > 0 {
		doc["nx"] = map[string]any{"targets": targets}
	}
	b, err := marshal(doc)
	if err != nil {
		return "", fmt.Errorf("package.json of %s: %w", p.name, err)
	}
	return b, nil
}

// vxConfig is vx.workspace.ts: every task a workspace task, a script run through npm (as
// Turborepo and Nx run it), only in the projects whose package.json has it; a group task has no
// command.
func (s shape) vxConfig() string {
	var b strings.Builder
	b.WriteString("export default {\n  projects: ['packages/*'],\n  tasks: {\n")
	for _, t := range s.tasks {
		if t.script == "" && !s.vxGroups {
			continue
		}
		fmt.Fprintf(&b, "    %s: {", t.name)
		switch {
		case t.script != "" && s.vxDirect:
			fmt.Fprintf(&b, " command: %q, ifScript: true,", t.script)
		case t.script != "":
			fmt.Fprintf(&b, " command: 'npm run %s', ifScript: true,", t.name)
		}
		fmt.Fprintf(&b, " dependsOn: %s, inputs: %s, outputs: %s },\n", jsList(t.deps), jsList(t.inputs), jsList(t.outputs))
	}
	b.WriteString("  },\n}\n")
	return b.String()
}

// turboJSON is turbo.json: the same tasks (a group task has no script, which Turborepo runs as a
// no-op).
func (s shape) turboJSON() string {
	tasks := map[string]any{}
	for _, t := range s.tasks {
		tasks[t.name] = map[string]any{"dependsOn": nonNil(t.deps), "inputs": nonNil(t.inputs), "outputs": nonNil(t.outputs)}
	}
	b, _ := marshal(map[string]any{"$schema": "https://turborepo.com/schema.json", "tasks": tasks})
	return b
}

// nxJSON is nx.json: the tasks' target defaults (Nx infers each script as a target run by npm), no
// daemon, no cloud.
func (s shape) nxJSON() string {
	targets := map[string]any{}
	for _, t := range s.tasks {
		outs := []string{}
		for _, o := range t.outputs {
			outs = append(outs, "{projectRoot}/"+strings.TrimSuffix(o, "/**"))
		}
		ins := []string{}
		for _, in := range t.inputs {
			ins = append(ins, "{projectRoot}/"+strings.TrimSuffix(in, "**")+"**/*")
		}
		targets[t.name] = map[string]any{"dependsOn": nonNil(t.deps), "inputs": ins, "outputs": outs, "cache": true}
	}
	b, _ := marshal(map[string]any{"targetDefaults": targets, "useDaemonProcess": false})
	return b
}

// marshal is v as indented JSON with a final newline, "&" and "<" left as they are (script text).
func marshal(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return b.String(), err
}

func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// jsList is l as a JavaScript array literal.
func jsList(l []string) string {
	q := make([]string, len(l))
	for i, v := range l {
		q[i] = "'" + v + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// idealSchedule answers, for a shape whose every task takes one second, two figures of the ideal
// schedule at concurrency conc, in seconds: the lower bound (the longer of the critical path and
// the tasks divided among the workers) and the length of the critical-path-first list schedule
// (each second, the ready tasks with the longest path ahead start first), which a scheduler with
// no overhead achieves.
func idealSchedule(s shape, conc int) (lower, list int) {
	ids := map[string]int{}
	type node struct{ deps []int }
	var nodes []node
	for _, p := range s.projects {
		for _, t := range p.tasks {
			ids[p.name+"#"+t] = len(nodes)
			nodes = append(nodes, node{})
		}
	}
	for _, p := range s.projects {
		for _, name := range p.tasks {
			me := ids[p.name+"#"+name]
			for _, d := range s.taskByName(name).deps {
				if up, ok := strings.CutPrefix(d, "^"); ok {
					for _, dp := range p.deps {
						if id, ok := ids[dp+"#"+up]; ok {
							nodes[me].deps = append(nodes[me].deps, id)
						}
					}
				} else if id, ok := ids[p.name+"#"+d]; ok {
					nodes[me].deps = append(nodes[me].deps, id)
				}
			}
		}
	}
	// Projects come in dependency order, so a node's dependencies precede it: height (the
	// longest path from a node to the end, itself included) is computed backwards.
	height := make([]int, len(nodes))
	dependents := make([][]int, len(nodes))
	for i, n := range nodes {
		for _, d := range n.deps {
			dependents[d] = append(dependents[d], i)
		}
	}
	critical := 0
	for i := len(nodes) - 1; i >= 0; i-- {
		height[i] = 1
		for _, u := range dependents[i] {
			height[i] = max(height[i], height[u]+1)
		}
		critical = max(critical, height[i])
	}
	lower = max(critical, (len(nodes)+conc-1)/conc)
	waiting := make([]int, len(nodes))
	var ready []int
	for i, n := range nodes {
		waiting[i] = len(n.deps)
		if waiting[i] == 0 {
			ready = append(ready, i)
		}
	}
	for done := 0; done < len(nodes); list++ {
		slices.SortStableFunc(ready, func(a, b int) int { return height[b] - height[a] })
		started := ready[:min(conc, len(ready))]
		ready = slices.Clone(ready[len(started):])
		for _, t := range started {
			done++
			for _, u := range dependents[t] {
				if waiting[u]--; waiting[u] == 0 {
					ready = append(ready, u)
				}
			}
		}
	}
	return lower, list
}
