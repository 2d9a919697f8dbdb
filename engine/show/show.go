// Package show answers `vx show`: the resolved workspace, one project, one task, or one task name
// across projects, each task with every field resolved and where each value came from. Secret
// values read "***" everywhere.
package show

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// Document is the answer of `vx show --format json`.
type Document struct {
	Root string `json:"root"`
	// Target is what was asked for ("" for the whole workspace).
	Target   string    `json:"target"`
	Projects []Project `json:"projects"`
	// Affected says why each project is affected, under --affected.
	Affected map[string]string `json:"affected,omitempty"`
	// RemoteCache is the shared remote cache (token ***), when one is set and the whole
	// workspace is shown.
	RemoteCache *remote.Report `json:"remoteCache,omitempty"`
}

// Project is one project of the answer.
type Project struct {
	Name       string   `json:"name"`
	Dir        string   `json:"dir"`
	ConfigFile string   `json:"configFile,omitempty"`
	NameFrom   string   `json:"nameFrom"`
	Tags       []string `json:"tags"`
	DependsOn  []string `json:"dependsOn"`
	Tasks      []Task   `json:"tasks"`
}

// Task is one resolved task of the answer.
type Task struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Command     string `json:"command"`
	// DependsOn are the task ids this task waits for.
	DependsOn []string `json:"dependsOn"`
	// Inputs are the input globs; null means every file of the project that git does not ignore.
	Inputs  []string `json:"inputs"`
	Outputs []string `json:"outputs"`
	// Env names variables whose values enter the cache key.
	Env []string `json:"env"`
	// ExecEnv is the environment the command gets; a secret reads "***".
	ExecEnv map[string]string `json:"execEnv"`
	// Secrets maps each secret variable to the environment variable its value is read from.
	Secrets map[string]string `json:"secrets"`
	Cache   bool              `json:"cache"`
	Timeout string            `json:"timeout,omitempty"`
	Sandbox *graph.Sandbox    `json:"sandbox"`
	// Persistent marks a long-running task (never cached, never part of --all).
	Persistent bool `json:"persistent,omitempty"`
	// Interruptible lets vx watch restart the persistent task when its key moves.
	Interruptible bool `json:"interruptible,omitempty"`
	// All is false (and only then present) for a task --all leaves out.
	All *bool `json:"all,omitempty"`
	// Scripts holds the package.json scripts the command runs, by name, with their text.
	Scripts map[string]string `json:"scripts,omitempty"`
	// Rewrites are the globs of input files the command writes itself.
	Rewrites []string `json:"rewrites,omitempty"`
	// Origins maps each field to where its value was set: "file:line", or "default".
	Origins map[string]string `json:"origins"`
	// ReadyWhen is a persistent task's readiness gate; absent for none.
	ReadyWhen *graph.ReadyWhen `json:"readyWhen,omitempty"`
	// RuntimeInputs are the commands whose output enters the task's key.
	RuntimeInputs []string `json:"runtimeInputs,omitempty"`
	// Group marks a task with no command: running it runs its dependencies and nothing else.
	Group bool `json:"group,omitempty"`
	// Interactive marks a task that reads the terminal: never cached, run alone.
	Interactive bool `json:"interactive,omitempty"`
	// timeoutMs is the timeout in milliseconds, 0 for none: the original's exec.timeout; retries
	// is exec.retries.
	timeoutMs int64
	retries   int
}

// Options narrow the answer.
type Options struct {
	// Target is a project name, a project#task id, or a task name; "" for everything.
	Target string
	// Select narrows the projects (--filter, --affected).
	Select workspace.SelectOptions
	// Getenv reads the remote cache's environment (VX_REMOTE_CACHE_URL, the token's variable);
	// nil means os.Getenv.
	Getenv func(string) string
}

// Show answers `vx show`.
func Show(ctx context.Context, ws *graph.Workspace, opts Options) (*Document, error) {
	doc := &Document{Root: ws.Root, Target: opts.Target, Projects: []Project{}}
	sel, err := workspace.Select(ctx, ws, opts.Select)
	if err != nil {
		return nil, err
	}
	doc.Affected = sel.Affected
	if opts.Target == "" {
		getenv := opts.Getenv
		if getenv == nil {
			getenv = os.Getenv
		}
		if rc := remote.ReportOf(ws.RemoteCache, getenv, ws.CacheDir); rc.Configured {
			doc.RemoteCache = &rc
		}
	}
	selected := map[string]bool{}
	for _, n := range sel.Projects {
		selected[n] = true
	}
	keep, err := targetFilter(ws, opts.Target)
	if err != nil {
		return nil, err
	}
	m := mask.New(ws.Secrets...)
	for _, p := range ws.Projects {
		if !selected[p.Name] {
			continue
		}
		pd := Project{Name: p.Name, Dir: p.Dir, ConfigFile: p.ConfigFile, NameFrom: p.NameOrigin.String(),
			Tags: p.Tags, DependsOn: p.DependsOn, Tasks: []Task{}}
		projectHit := opts.Target == "" || opts.Target == p.Name
		for _, tn := range p.TaskNames() {
			t := p.Tasks[tn]
			if projectHit || keep(t) {
				pd.Tasks = append(pd.Tasks, taskDoc(t, m))
			}
		}
		if projectHit || len(pd.Tasks) > 0 {
			doc.Projects = append(doc.Projects, pd)
		}
	}
	return doc, nil
}

// targetFilter returns which tasks a target names; a target that names nothing is refused.
func targetFilter(ws *graph.Workspace, target string) (func(*graph.Task) bool, error) {
	switch {
	case target == "":
		return func(*graph.Task) bool { return true }, nil
	case strings.Contains(target, "#"):
		if _, _, ok := graph.SplitTaskID(target); !ok {
			return nil, vxerr.Usagef("task id %q is missing a half (write project#task)", target)
		}
		if _, ok := ws.Task(target); !ok {
			return nil, vxerr.Usagef("unknown task %q%s", target, workspace.DidYouMean(target, ws.TaskIDs()))
		}
		return func(t *graph.Task) bool { return t.ID == target }, nil
	}
	if _, ok := ws.Project(target); ok {
		return func(*graph.Task) bool { return false }, nil
	}
	for _, p := range ws.Projects {
		if p.Tasks[target] != nil {
			return func(t *graph.Task) bool { return t.Name == target }, nil
		}
	}
	known := workspace.TaskNames(ws)
	for _, p := range ws.Projects {
		known = append(known, p.Name)
	}
	return nil, vxerr.Usagef("unknown target %q: not a project, a project#task or a task name%s", target, workspace.DidYouMean(target, known))
}

func taskDoc(t *graph.Task, m *mask.Masker) Task {
	td := Task{
		ID: t.ID, Name: t.Name, Description: m.String(t.Description), Command: m.String(t.Command),
		DependsOn: t.DependsOn, Inputs: t.Inputs, Outputs: t.Outputs, Env: t.Env,
		ExecEnv: map[string]string{}, Secrets: map[string]string{}, Cache: t.Cache, Timeout: t.TimeoutSpec,
		Sandbox: t.Sandbox, Origins: map[string]string{}, Persistent: t.Persistent, Rewrites: t.Rewrites,
		Interruptible: t.Interruptible, ReadyWhen: t.ReadyWhen, RuntimeInputs: maskAll(m, t.RuntimeInputs), Group: t.IsGroup(), Interactive: t.Interactive,
		timeoutMs: t.Timeout.Milliseconds(), retries: t.Retries,
	}
	if !t.All {
		td.All = new(false)
	}
	if len(t.Scripts) > 0 {
		td.Scripts = map[string]string{}
		for k, v := range t.Scripts {
			td.Scripts[k] = m.String(v)
		}
	}
	for k, v := range t.ExecEnv {
		if v.Secret != "" {
			td.ExecEnv[k] = mask.Stars
			td.Secrets[k] = v.Secret
		} else {
			td.ExecEnv[k] = m.String(v.Value)
		}
	}
	for _, field := range graph.TaskFields() {
		o := t.Origins.Get(field.Name)
		if o.File == "" && field.Flag {
			continue // a flag left at its default is not worth a line
		}
		td.Origins[field.Name] = o.String()
	}
	return td
}

// WriteText prints the document for people.
func (d *Document) WriteText(w io.Writer) error {
	var b strings.Builder
	if len(d.Projects) == 0 {
		b.WriteString("no projects selected\n")
	}
	if d.RemoteCache != nil {
		fmt.Fprintf(&b, "remote cache: %s\n\n", esc(d.RemoteCache.Summary()))
	}
	for i, p := range d.Projects {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s  (%s)", esc(p.Name), esc(p.Dir))
		if len(p.Tags) > 0 {
			fmt.Fprintf(&b, "  tags: %s", join(p.Tags, ", "))
		}
		if len(p.DependsOn) > 0 {
			fmt.Fprintf(&b, "  depends on: %s", join(p.DependsOn, ", "))
		}
		if why, ok := d.Affected[p.Name]; ok {
			fmt.Fprintf(&b, "  affected: %s", esc(why))
		}
		b.WriteString("\n")
		for _, t := range p.Tasks {
			fmt.Fprintf(&b, "  %s\n", esc(t.ID))
			// Every value is escaped here, once: what the config wrote is shown, never acted on.
			line := func(field, value string) {
				fmt.Fprintf(&b, "      %-10s %s", field+":", esc(value))
				if o := t.Origins[field]; o != "" && o != "default" {
					fmt.Fprintf(&b, "   (%s)", esc(o))
				}
				b.WriteString("\n")
			}
			if t.Group {
				fmt.Fprintf(&b, "      %-10s %s\n", "command:", "none: a group, it runs its dependencies and nothing else")
			} else {
				line("command", t.Command)
			}
			if t.Description != "" {
				line("description", t.Description)
			}
			if len(t.DependsOn) > 0 {
				line("dependsOn", strings.Join(t.DependsOn, ", "))
			}
			if t.Inputs == nil {
				line("inputs", "(every file of the project that git does not ignore)")
			} else {
				line("inputs", strings.Join(t.Inputs, ", "))
			}
			switch o := t.Origins["outputs"]; {
			case len(t.Outputs) > 0:
				line("outputs", strings.Join(t.Outputs, ", "))
			case o == "" || o == "default":
				// No origin to name: say where "none" comes from.
				fmt.Fprintf(&b, "      %-10s %s   (%s)\n", "outputs:", "none", "default: none declared; a hit restores no files")
			default:
				line("outputs", "none")
			}
			if len(t.Env) > 0 {
				line("env", strings.Join(t.Env, ", "))
			}
			if len(t.ExecEnv) > 0 {
				var kv []string
				for _, k := range slices.Sorted(maps.Keys(t.ExecEnv)) {
					kv = append(kv, k+"="+t.ExecEnv[k])
				}
				line("exec", strings.Join(kv, " "))
			}
			if !t.Cache {
				line("cache", "false")
			}
			if t.Timeout != "" {
				line("timeout", t.Timeout)
			}
			writeFlags(line, t)
			for _, name := range slices.Sorted(maps.Keys(t.Scripts)) {
				fmt.Fprintf(&b, "      %-10s %s: %s\n", "script:", esc(name), esc(t.Scripts[name]))
			}
			if len(t.Rewrites) > 0 {
				line("rewrites", strings.Join(t.Rewrites, ", "))
			}
			writeGates(line, t)
			if t.Sandbox != nil {
				line("sandbox", fmt.Sprintf("network=%v read=%s write=%s", t.Sandbox.Network, strings.Join(t.Sandbox.Read, ","), strings.Join(t.Sandbox.Write, ",")))
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFlags prints the task's flags that differ from their defaults, through line.
func writeFlags(line func(field, value string), t Task) {
	for _, f := range []struct {
		name, value string
		set         bool
	}{
		{"persistent", "true", t.Persistent},
		{"interruptible", "true", t.Interruptible},
		{"interactive", "true", t.Interactive},
		{"all", "false", t.All != nil},
	} {
		if f.set {
			line(f.name, f.value)
		}
	}
}

// maskAll is list with every secret masked; nil for nil.
func maskAll(m *mask.Masker, list []string) []string {
	if list == nil {
		return nil
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = m.String(s)
	}
	return out
}

// writeGates prints a task's readyWhen and runtimeInputs, where it declares them.
func writeGates(line func(k, v string), t Task) {
	if rw := t.ReadyWhen; rw != nil {
		var conds []string
		if rw.Log != "" {
			conds = append(conds, fmt.Sprintf("log %q", rw.Log))
		}
		if rw.Port != 0 {
			conds = append(conds, fmt.Sprintf("port %d", rw.Port))
		}
		line("readyWhen", strings.Join(conds, " or ")+" within "+rw.Timeout.String())
	}
	if len(t.RuntimeInputs) > 0 {
		line("runtimeInputs", strings.Join(t.RuntimeInputs, ", "))
	}
}

// esc is logtext.Escape: config text printed for people.
func esc(s string) string { return logtext.Escape(s) }

// join escapes each element of list and joins them with sep.
func join(list []string, sep string) string { return strings.Join(logtext.EscapeAll(list), sep) }
