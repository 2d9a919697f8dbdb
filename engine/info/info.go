// Package info answers `vx info`: what this workspace is and what a run will use — versions, git
// status, projects and tasks (and the configs that did not load), plugins and their seams, the
// worker count and memory budget with their sources, the cache, flaky tasks, the sandbox verdict
// and the config lock. It answers even when the config does not load.
package info

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/proc/sandbox"
)

// Document is the answer of `vx info --format json`.
type Document struct {
	// Attention says, a line each, what needs looking at before a run: configs that did not load,
	// flaky tasks, a drifted or unreadable lock, a required sandbox this host does not enforce,
	// an unusable index or remote cache. Empty when nothing does.
	Attention  []string `json:"attention"`
	Versions   Versions `json:"versions"`
	Root       string   `json:"root"`
	ConfigFile string   `json:"configFile"`
	// Git is the checkout's git status (the original's git is git's version: Facts).
	Git          Git               `json:"repository"`
	Projects     int               `json:"projects"`
	Tasks        int               `json:"tasks"`
	ConfigErrors []ConfigError     `json:"configErrors"`
	Plugins      []graph.Plugin    `json:"plugins"`
	MCP          *graph.MCPOptions `json:"mcp"`
	Workers      Setting           `json:"workers"`
	MemoryBudget Setting           `json:"memoryBudget"`
	Cache        Section           `json:"cache"`
	// FlakyTasks and Sandbox are vx's sections, beside the original's flakyTasks and sandbox
	// (Facts).
	FlakyTasks Section `json:"flakyReport"`
	Sandbox    Section `json:"sandboxReport"`
	Lock       Section `json:"lock"`
	// RemoteCache is the shared remote cache: its settings (token ***) and the last server check.
	RemoteCache Section `json:"remoteCache"`
	// Supervisor is the program each task of a run is started under.
	Supervisor Supervisor `json:"supervisor"`
	// Watcher is what the file watcher of vx mcp and vx watch needs against what the OS allows
	// (inotify watches, open files for kqueue), with the fix when too low, and whether one runs.
	Watcher Section `json:"watcher"`
	// Facts are the original's flat facts, written beside vx's sections.
	Facts Facts `json:"-"`
}

// Versions names the versions of vx and what it is built on.
type Versions struct {
	VX           string `json:"vx"`
	Go           string `json:"go"`
	ConfigEngine string `json:"configEngine"`
}

// Git is the workspace's git status; Available is false outside a repository.
type Git struct {
	Available bool   `json:"available"`
	Branch    string `json:"branch,omitempty"`
	Head      string `json:"head,omitempty"`
	Dirty     bool   `json:"dirty"`
}

// ConfigError is a config file that did not load.
type ConfigError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Message string `json:"message"`
}

// Setting is a value a run uses and where it came from: "flag", "env" or "default" for the
// workers; "env", "config", "cgroup", "machine" or "unknown" for the memory budget.
type Setting struct {
	Value  int64  `json:"value"`
	Source string `json:"source"`
}

// Section is a part of the answer that another part of vx fills in. Known is false, with a
// Note saying so, until that part can tell; Value holds its document once it can.
type Section struct {
	Known bool   `json:"known"`
	Value any    `json:"value,omitempty"`
	Note  string `json:"note,omitempty"`
}

// Options are what info needs to know beyond the workspace.
type Options struct {
	Version string
	// Root is the workspace root; ConfigFile its config, relative to Root.
	Root, ConfigFile string
	// Workspace is the loaded workspace (without the projects whose config failed), nil when
	// it did not load at all; LoadErrs says what failed to load.
	Workspace *graph.Workspace
	LoadErrs  []error
	// Concurrency is the --concurrency flag (0 when not given); Getenv reads VX_CONCURRENCY and
	// VX_MEMORY_BUDGET.
	Concurrency int
	Getenv      func(string) string
	// Sections fill in the parts other packages answer for (cache, flakyTasks, sandbox, lock);
	// a missing one reads as not yet known.
	Sections map[string]func(ctx context.Context, ws *graph.Workspace) (any, error)
}

// Info answers `vx info`.
func Info(ctx context.Context, opts Options) (*Document, error) {
	doc := &Document{
		Versions:     Versions{VX: opts.Version, Go: runtime.Version(), ConfigEngine: configEngine()},
		Root:         opts.Root,
		ConfigFile:   opts.ConfigFile,
		Git:          gitStatus(ctx, opts.Root),
		ConfigErrors: []ConfigError{},
		Plugins:      []graph.Plugin{},
		Supervisor:   hostSupervisor(opts.Getenv),
	}
	if ws := opts.Workspace; ws != nil {
		doc.Projects, doc.Tasks = len(ws.Projects), ws.TaskCount()
		doc.Plugins, doc.MCP = ws.Plugins, ws.MCP
	}
	for _, err := range opts.LoadErrs {
		var ce *vxerr.ConfigError
		if errors.As(err, &ce) {
			doc.ConfigErrors = append(doc.ConfigErrors, ConfigError{File: ce.File, Line: ce.Line, Col: ce.Col, Message: ce.Msg})
		} else {
			doc.ConfigErrors = append(doc.ConfigErrors, ConfigError{File: opts.ConfigFile, Message: err.Error()})
		}
	}
	var err error
	if doc.Workers, err = Workers(opts.Concurrency, opts.Getenv); err != nil {
		return nil, err
	}
	if doc.MemoryBudget, err = MemoryBudget(opts.Workspace, opts.Getenv); err != nil {
		return nil, err
	}
	for name, dst := range map[string]*Section{"cache": &doc.Cache, "flakyTasks": &doc.FlakyTasks, "sandbox": &doc.Sandbox, "lock": &doc.Lock,
		"remoteCache": &doc.RemoteCache, "watcher": &doc.Watcher} {
		fill := opts.Sections[name]
		switch {
		case fill == nil:
			*dst = Section{Note: "not yet known: this vx does not report it yet"}
		case opts.Workspace == nil && name != "cache" && name != "flakyTasks" && name != "watcher":
			*dst = Section{Note: "not known: the config did not load"}
		default:
			v, err := fill(ctx, opts.Workspace)
			if err != nil {
				*dst = Section{Note: err.Error()}
			} else {
				*dst = Section{Known: true, Value: v}
			}
		}
	}
	doc.Attention = attentionOf(doc)
	doc.Facts = factsOf(ctx, doc)
	return doc, nil
}

// Workers is the worker count a run uses and its source, as the runner decides it.
func Workers(flag int, getenv func(string) string) (Setting, error) {
	n, source, err := resources.Workers(flag, getenv)
	return Setting{Value: int64(n), Source: source}, err
}

// MemoryBudget is the memory a run's tasks may reserve together and its source, as the runner
// decides it: VX_MEMORY_BUDGET, else memoryBudget in vx.workspace.ts (ws may be nil), else the
// cgroup's memory limit or the machine's memory (resources.MemoryBudget).
func MemoryBudget(ws *graph.Workspace, getenv func(string) string) (Setting, error) {
	n, source, err := resources.MemoryBudget("", ws, getenv)
	return Setting{Value: n, Source: source}, err
}

func configEngine() string {
	versions := map[string]string{}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			versions[d.Path] = d.Version
		}
	}
	return fmt.Sprintf("esbuild %s + goja %s", orUnknown(versions["github.com/evanw/esbuild"]), orUnknown(versions["github.com/dop251/goja"]))
}

func orUnknown(v string) string {
	if v == "" {
		return "(unknown)"
	}
	return v
}

func gitStatus(ctx context.Context, root string) Git {
	run := func(args ...string) (string, bool) {
		out, err := git.Run(ctx, root, args...)
		return strings.TrimSpace(out), err == nil
	}
	if _, ok := run("rev-parse", "--is-inside-work-tree"); !ok {
		return Git{}
	}
	g := Git{Available: true}
	g.Branch, _ = run("symbolic-ref", "--quiet", "--short", "HEAD")
	g.Head, _ = run("rev-parse", "--verify", "--quiet", "HEAD")
	status, _ := run("status", "--porcelain", "--untracked-files=normal", "--", ".")
	g.Dirty = status != ""
	return g
}

// WriteText prints the document for people.
func (d *Document) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "vx %s (%s, %s)\n", d.Versions.VX, d.Versions.Go, d.Versions.ConfigEngine)
	for _, line := range d.Attention {
		fmt.Fprintf(&b, "attention  %s\n", line)
	}
	fmt.Fprintf(&b, "workspace  %s\n", d.Root)
	if d.Git.Available {
		dirty := ""
		if d.Git.Dirty {
			dirty = ", uncommitted changes"
		}
		head := d.Git.Head
		if len(head) > 12 {
			head = head[:12]
		}
		fmt.Fprintf(&b, "git        %s at %s%s\n", orNone(d.Git.Branch, "(detached)"), orNone(head, "(no commits)"), dirty)
	} else {
		b.WriteString("git        not a git repository\n")
	}
	fmt.Fprintf(&b, "projects   %d, tasks %d\n", d.Projects, d.Tasks)
	for _, e := range d.ConfigErrors {
		loc := e.File
		if e.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
		}
		fmt.Fprintf(&b, "config     did not load: %s: %s\n", loc, e.Message)
	}
	for _, p := range d.Plugins {
		var seams []string
		if len(p.Commands) > 0 {
			seams = append(seams, "commands "+strings.Join(p.Commands, ", "))
		}
		if p.Stage {
			seams = append(seams, "stage")
		}
		fmt.Fprintf(&b, "plugin     %s (%s)\n", p.Name, orNone(strings.Join(seams, "; "), "no seams"))
	}
	fmt.Fprintf(&b, "workers    %d (%s)\n", d.Workers.Value, d.Workers.Source)
	fmt.Fprintf(&b, "memory     %d MiB (%s)\n", d.MemoryBudget.Value>>20, d.MemoryBudget.Source)
	fmt.Fprintf(&b, "supervisor %s\n", d.Supervisor.Note)
	if o := d.Facts.Orphans; o.Artifacts > 0 {
		fmt.Fprintf(&b, "orphans    %d blob(s), %d KiB, that no cache entry references: vx cache prune removes them\n", o.Artifacts, o.Bytes>>10)
	}
	for _, s := range []struct {
		name string
		sec  Section
	}{{"cache", d.Cache}, {"flaky", d.FlakyTasks}, {"sandbox", d.Sandbox}, {"lock", d.Lock}, {"remote", d.RemoteCache}, {"watcher", d.Watcher}} {
		if s.sec.Known {
			fmt.Fprintf(&b, "%-10s %s\n", s.name, summarize(s.sec.Value))
		} else {
			fmt.Fprintf(&b, "%-10s %s\n", s.name, s.sec.Note)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summarize renders a section's value on one line: its Summary() when it has one.
func summarize(v any) string {
	switch x := v.(type) {
	case interface{ Summary() string }:
		return x.Summary()
	case configlock.Status:
		if x.Error != "" {
			return fmt.Sprintf("%s %s: %s", x.File, x.State, x.Error)
		}
		return fmt.Sprintf("%s %s: %d audited, %d not audited, %d problem(s)", x.File, x.State, x.Audited, x.NotAudited, x.Problems)
	}
	return fmt.Sprint(v)
}

func orNone(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// SandboxReport is the sandbox section: what this host enforces of a task's sandbox (the real
// verdict of the machine vx runs on, not the declarations'), the supervisor program sandboxed
// tasks run under, and how many tasks declare a sandbox.
type SandboxReport struct {
	// Enforced is true when a sandbox's filesystem part is enforced here.
	Enforced bool `json:"enforced"`
	// Verdict is the host's verdict in one line.
	Verdict string `json:"verdict"`
	// Host is the verdict in parts: Landlock ABI, user namespaces, what is enforced and why not.
	Host sandbox.Verdict `json:"host"`
	// Helper is the supervisor tasks run under, as Supervisor.Note says it.
	Helper         string `json:"helper"`
	TasksDeclaring int    `json:"tasksDeclaring"`
	// TasksRequiring counts the tasks whose sandbox is required: where Enforced is false, a run
	// refuses them.
	TasksRequiring int `json:"tasksRequiring"`
	// Agents is true when mcp({ sandbox: true }) confines every task an agent runs.
	Agents bool `json:"agents"`
}

// Summary renders the report on one line.
func (s SandboxReport) Summary() string {
	line := fmt.Sprintf("%s; %d task(s) declare a sandbox", s.Verdict, s.TasksDeclaring)
	if s.TasksRequiring > 0 {
		line += fmt.Sprintf(" (%d required)", s.TasksRequiring)
	}
	if s.Agents {
		line += "; every task an agent runs is sandboxed"
	}
	return line
}

// Sandbox reports the sandbox verdict for this host and the tasks that declare one, with the
// supervisor of a run whose environment getenv reads.
func Sandbox(getenv func(string) string) func(context.Context, *graph.Workspace) (any, error) {
	return func(_ context.Context, ws *graph.Workspace) (any, error) { return sandboxReport(ws, getenv), nil }
}

func sandboxReport(ws *graph.Workspace, getenv func(string) string) SandboxReport {
	v := sandbox.Probe()
	r := SandboxReport{Enforced: v.Enforced.Filesystem, Verdict: v.Summary(), Host: v, Helper: hostSupervisor(getenv).Note,
		Agents: ws.MCP != nil && ws.MCP.Sandbox}
	for _, id := range ws.TaskIDs() {
		if t, _ := ws.Task(id); t.Sandbox != nil {
			r.TasksDeclaring++
			if t.Sandbox.Required {
				r.TasksRequiring++
			}
		}
	}
	return r
}

// Answer answers `vx info` for the workspace a loader finds: the one function the CLI verb and
// the getWorkspaceInfo tool share. A config that does not load is reported, not refused.
func Answer(ctx context.Context, loader *workspace.Loader, version string, concurrency int, getenv func(string) string) (*Document, error) {
	root, err := loader.Root()
	if err != nil {
		return nil, err
	}
	ws, loadErrs, _ := loader.LoadPartial(ctx)
	dirs, err := loader.StoreDirs(ctx)
	if err != nil {
		return nil, err
	}
	cache, flaky := stateSections(dirs, getenv)
	return Info(ctx, Options{
		Version: version, Root: root, ConfigFile: workspace.ConfigFileName,
		Workspace: ws, LoadErrs: loadErrs, Concurrency: concurrency, Getenv: getenv,
		Sections: map[string]func(context.Context, *graph.Workspace) (any, error){
			"cache":      cache,
			"flakyTasks": flaky,
			"sandbox":    Sandbox(getenv),
			"lock":       configlock.InfoSection,
			"remoteCache": func(_ context.Context, ws *graph.Workspace) (any, error) {
				return remote.ReportOf(ws.RemoteCache, getenv, workspace.CacheDir(root, getenv)), nil
			},
			"watcher": func(ctx context.Context, _ *graph.Workspace) (any, error) {
				return watcherReport(ctx, root, workspace.CacheDir(root, getenv)), nil
			},
		},
	})
}
