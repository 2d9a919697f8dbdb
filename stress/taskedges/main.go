// Command taskedges compares the task graph vx plans with the one a peer plans for the same
// tasks, edge by edge: the check behind docs/adoption-trials.md that `vx init` kept every
// dependency Turborepo or Nx draws, and drew none they do not.
//
//	go run ./stress/taskedges -peer turbo PEER.json VX.json
//	go run ./stress/taskedges -peer nx PEER.json VX.json
//
// VX.json is `vx run TASKS --dry=json`. PEER.json is `turbo run TASKS --dry=json` (a task whose
// command is <NONEXISTENT>, a package without the script, is passed through: its dependents take
// its dependencies, as Turborepo runs them) or Nx's `nx run-many -t TASKS --graph=FILE` (its
// "tasks" graph; a target id is project and target, whatever colons the target holds).
//
// It prints the tasks and edges of each side, then every edge between tasks both sides plan that
// only one side draws, and the tasks only one side plans (with the edges that touch them, which
// cannot be compared). It exits 1 when an edge between shared tasks differs, 0 otherwise.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// graph is a task graph: each task's id and the ids it depends on.
type graph map[string][]string

func main() {
	peer := flag.String("peer", "", "the peer's format: turbo or nx")
	flag.Parse()
	if flag.NArg() != 2 || (*peer != "turbo" && *peer != "nx") {
		fmt.Fprintln(os.Stderr, "usage: taskedges -peer turbo|nx PEER.json VX.json")
		os.Exit(2)
	}
	differs, err := run(os.Stdout, *peer, flag.Arg(0), flag.Arg(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskedges:", err)
		os.Exit(2)
	}
	if differs {
		os.Exit(1)
	}
}

// run reads both graphs, prints the comparison to w and reports whether a shared edge differs.
func run(w io.Writer, peer, peerFile, vxFile string) (bool, error) {
	var p graph
	var err error
	if peer == "turbo" {
		p, err = readTurbo(peerFile)
	} else {
		p, err = readNx(peerFile)
	}
	if err != nil {
		return false, err
	}
	v, err := readVx(vxFile)
	if err != nil {
		return false, err
	}
	return compare(w, peer, p, v), nil
}

func readJSON(file string, v any) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("read %s: %w", file, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %s: %w", file, err)
	}
	return nil
}

// readVx reads a `vx run --dry=json` plan.
func readVx(file string) (graph, error) {
	var plan struct {
		Tasks []struct {
			TaskID    string   `json:"taskId"`
			DependsOn []string `json:"dependsOn"`
		} `json:"tasks"`
	}
	if err := readJSON(file, &plan); err != nil {
		return nil, err
	}
	g := graph{}
	for _, t := range plan.Tasks {
		g[t.TaskID] = t.DependsOn
	}
	return g, nil
}

// readTurbo reads a `turbo run --dry=json` plan and passes through the tasks without a command.
func readTurbo(file string) (graph, error) {
	var plan struct {
		Tasks []struct {
			TaskID       string   `json:"taskId"`
			Command      string   `json:"command"`
			Dependencies []string `json:"dependencies"`
		} `json:"tasks"`
	}
	if err := readJSON(file, &plan); err != nil {
		return nil, err
	}
	g, none := graph{}, map[string]bool{}
	for _, t := range plan.Tasks {
		g[t.TaskID] = t.Dependencies
		if t.Command == "<NONEXISTENT>" {
			none[t.TaskID] = true
		}
	}
	out := graph{}
	for id := range g {
		if !none[id] {
			out[id] = through(g, none, id)
		}
	}
	return out, nil
}

// through answers the dependencies of id, each task in skip replaced by its own, transitively.
func through(g graph, skip map[string]bool, id string) []string {
	seen, deps := map[string]bool{}, []string{}
	var walk func(string)
	walk = func(from string) {
		for _, dep := range g[from] {
			if seen[dep] {
				continue
			}
			seen[dep] = true
			if skip[dep] {
				walk(dep)
			} else {
				deps = append(deps, dep)
			}
		}
	}
	walk(id)
	return deps
}

// readNx reads the task graph of `nx run-many --graph=FILE`.
func readNx(file string) (graph, error) {
	type target struct {
		Project string `json:"project"`
		Target  string `json:"target"`
	}
	var doc struct {
		Tasks struct {
			Tasks map[string]struct {
				Target target `json:"target"`
			} `json:"tasks"`
			Dependencies map[string][]string `json:"dependencies"`
		} `json:"tasks"`
	}
	if err := readJSON(file, &doc); err != nil {
		return nil, err
	}
	id := func(nxID string) string {
		t, ok := doc.Tasks.Tasks[nxID]
		if !ok {
			return nxID
		}
		return t.Target.Project + "#" + t.Target.Target
	}
	g := graph{}
	for nxID := range doc.Tasks.Tasks {
		var deps []string
		for _, d := range doc.Tasks.Dependencies[nxID] {
			deps = append(deps, id(d))
		}
		g[id(nxID)] = deps
	}
	return g, nil
}

// compare prints both graphs' sizes, the edges between shared tasks that only one side draws,
// and the tasks only one side plans; it reports whether a shared edge differs.
func compare(w io.Writer, peer string, p, v graph) bool {
	fmt.Fprintf(w, "%s: %d tasks, %d edges\nvx: %d tasks, %d edges\n", peer, len(p), edges(p), len(v), edges(v))
	shared := map[string]bool{}
	for id := range p {
		if _, ok := v[id]; ok {
			shared[id] = true
		}
	}
	missing, extra, same := diff(p, v, shared), diff(v, p, shared), 0
	for id := range shared {
		for _, d := range p[id] {
			if shared[d] && slices.Contains(v[id], d) {
				same++
			}
		}
	}
	fmt.Fprintf(w, "shared tasks: %d; edges between them: %d on both sides, %d only %s's (missing from vx), %d only vx's (extra)\n",
		len(shared), same, len(missing), peer, len(extra))
	list(w, "missing from vx", missing)
	list(w, "extra in vx", extra)
	list(w, "tasks only "+peer+" plans (their edges not compared)", only(p, shared))
	list(w, "tasks only vx plans (their edges not compared)", only(v, shared))
	return len(missing)+len(extra) > 0
}

// diff answers the edges of a between shared tasks that b lacks.
func diff(a, b graph, shared map[string]bool) []string {
	var out []string
	for id, deps := range a {
		if !shared[id] {
			continue
		}
		for _, d := range deps {
			if shared[d] && !slices.Contains(b[id], d) {
				out = append(out, id+" -> "+d)
			}
		}
	}
	slices.Sort(out)
	return out
}

// only answers the tasks of g outside shared, each with its edge count.
func only(g graph, shared map[string]bool) []string {
	var out []string
	for id, deps := range g {
		if !shared[id] {
			out = append(out, fmt.Sprintf("%s (%d edges)", id, len(deps)))
		}
	}
	slices.Sort(out)
	return out
}

func edges(g graph) int {
	n := 0
	for _, deps := range g {
		n += len(deps)
	}
	return n
}

func list(w io.Writer, title string, items []string) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "%s (%d):\n  %s\n", title, len(items), strings.Join(items, "\n  "))
}
