// Package agents plans and writes what `vx init --agents` and `vx agents` give each coding agent
// host: its MCP config for `vx mcp`, merged into the file the host reads with every other server
// and key kept, and an agent guide (a section of AGENTS.md, pointers to it in CLAUDE.md, or
// .claude/CLAUDE.md where the guide is there, and GEMINI.md, a Claude Code skill). Writing twice
// changes nothing the second time.
package agents

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/vzn/vx/engine/vxerr"
)

// File statuses.
const (
	// StatusNew is a file that does not exist yet.
	StatusNew = "new"
	// StatusKept is a file that already holds what vx would write.
	StatusKept = "kept"
	// StatusReplaced is an existing file vx changes (merges its part into).
	StatusReplaced = "replaced"
)

// Options say what to plan.
type Options struct {
	// Root is the workspace root.
	Root string
	// Hosts names the hosts (Hosts()); empty means every host.
	Hosts []string
	// Dry plans and writes nothing.
	Dry bool
	// Tasks are the workspace's task names, for the guide.
	Tasks []string
	// DeclaresMCP is true when vx.workspace.ts declares plugins: [mcp()].
	DeclaresMCP bool
}

// Plan is the answer of `vx agents`, and its --format json document.
type Plan struct {
	// Dry is true when nothing was written.
	Dry bool `json:"dry"`
	// Hosts lists the hosts planned for, in Hosts() order.
	Hosts []string `json:"hosts"`
	// Files lists each file with the text it has after the plan and its status.
	Files []File `json:"files"`
	// Todos lists what the user must still do (the mcp() lines to add).
	Todos []string `json:"todos"`
}

// File is one file of the plan.
type File struct {
	// Path is relative to the root, with forward slashes.
	Path string `json:"path"`
	// Text is the whole content the file has once written.
	Text string `json:"text"`
	// Status is new, kept or replaced.
	Status string `json:"status"`
	// mode is the permission bits the file is written with: those it has, or newFileMode.
	mode fs.FileMode
}

// MCPLines returns the two lines vx.workspace.ts needs for `vx mcp` to exist.
func MCPLines() []string {
	return []string{
		"import { mcp } from '@vzn/vx-mcp'",
		"plugins: [mcp()],  // inside defineWorkspace({ … })",
	}
}

// ParseHosts splits comma-separated host names ("claude,gemini"); "all" or nothing means every host.
// An unknown name is refused naming it and the known ones.
func ParseHosts(names []string) ([]string, error) {
	var want []string
	for _, n := range names {
		for _, h := range strings.Split(n, ",") {
			h = strings.TrimSpace(strings.ToLower(h))
			switch {
			case h == "":
			case h == "all":
				return Hosts(), nil
			case hostByName(h) == nil:
				return nil, vxerr.Usagef("unknown agent host %q: want %s or all", h, strings.Join(Hosts(), ", "))
			case !slices.Contains(want, h):
				want = append(want, h)
			}
		}
	}
	if len(want) == 0 {
		return Hosts(), nil
	}
	var out []string
	for _, h := range Hosts() {
		if slices.Contains(want, h) {
			out = append(out, h)
		}
	}
	return out, nil
}

// Write plans the hosts' files and, unless opts.Dry, writes those that change.
func Write(opts Options) (*Plan, error) {
	hosts, err := ParseHosts(opts.Hosts)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Dry: opts.Dry, Hosts: hosts, Files: []File{}, Todos: []string{}}
	edits := map[string]edit{}
	var order []string
	add := func(path string, e edit) {
		if _, ok := edits[path]; !ok {
			order = append(order, path)
			edits[path] = e
		}
	}
	add("AGENTS.md", markedSection(agentsSection(opts.Tasks)))
	for _, name := range hosts {
		for _, f := range hostByName(name).files {
			if f.pick == nil {
				add(f.path, f.edit(opts))
				continue
			}
			path, e, err := f.pick(opts.Root)
			if err != nil {
				return nil, fmt.Errorf("vx agents: %w", err)
			}
			add(path, e)
		}
	}
	for _, path := range order {
		f, err := settle(opts.Root, path, edits[path])
		if err != nil {
			return nil, err
		}
		plan.Files = append(plan.Files, f)
	}
	if !opts.DeclaresMCP {
		plan.Todos = append(plan.Todos, "vx.workspace.ts does not declare mcp(): add these two lines\n  "+strings.Join(MCPLines(), "\n  "))
	}
	if opts.Dry {
		return plan, nil
	}
	for _, f := range plan.Files {
		if f.Status == StatusKept {
			continue
		}
		if err := writeFile(opts.Root, f.Path, []byte(f.Text), f.mode); err != nil {
			return nil, fmt.Errorf("vx agents: %w", err)
		}
	}
	return plan, nil
}

// edit computes a file's new text from its current one (nil when it does not exist).
type edit func(old []byte) ([]byte, error)

// settle reads the file at path (refusing a link on the way, see readFile) and applies e.
func settle(root, path string, e edit) (File, error) {
	cur, err := readFile(root, path)
	if err != nil {
		return File{}, fmt.Errorf("vx agents: %w", err)
	}
	old, exists := cur.data, cur.exists
	text, err := e(old)
	if err == nil {
		err = parseBack(path, text)
	}
	if err != nil {
		return File{}, fmt.Errorf("vx agents: %s: %w", path, err)
	}
	f := File{Path: path, Text: string(text), Status: StatusNew, mode: newFileMode}
	if exists {
		f.mode = cur.mode
	}
	switch {
	case exists && bytes.Equal(old, text):
		f.Status = StatusKept
	case exists:
		f.Status = StatusReplaced
	}
	return f, nil
}

// parseBack parses text as the format path's name says, so that no file vx writes is one its host
// cannot read: JSON or JSONC, TOML, YAML (Markdown has no syntax to break).
func parseBack(path string, text []byte) error {
	var err error
	switch {
	case strings.HasSuffix(path, ".json"):
		_, err = decodeJSON(text)
	case strings.HasSuffix(path, ".toml"):
		_, err = decodeTOML(text)
	case strings.HasSuffix(path, ".yaml"):
		var doc map[string]any
		if err = yaml.Unmarshal(text, &doc); err != nil {
			err = fmt.Errorf("parse: %s", oneLine(err.Error()))
		}
	}
	if err != nil {
		return fmt.Errorf("the text to write does not parse back (%w); not written", err)
	}
	return nil
}

// oneLine is msg with its lines joined by "; ".
func oneLine(msg string) string {
	return strings.ReplaceAll(strings.TrimSpace(msg), "\n", "; ")
}

// WriteText prints the plan for a person: each file and its status, then the todos.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	verb := map[string]string{StatusNew: "wrote", StatusReplaced: "updated", StatusKept: "unchanged"}
	if p.Dry {
		verb = map[string]string{StatusNew: "would write", StatusReplaced: "would update", StatusKept: "unchanged"}
	}
	for _, f := range p.Files {
		fmt.Fprintf(&b, "%-13s %s\n", verb[f.Status], f.Path)
	}
	for _, t := range p.Todos {
		fmt.Fprintf(&b, "todo: %s\n", t)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
