package show

import (
	"slices"
	"strings"
)

// The original's shapes of `vx show --format json`, one per target: the workspace is a list of
// rows (each project's name, folder and task names), a project an object with its tasks' configs
// by name, a project#task one task's config, and a task name a list of those. vx's own fields sit
// beside the original's; where the original gives a name another shape (a project's tasks, the
// names), vx's resolved tasks are under resolvedTasks, one task's under resolved.

// ProjectRow is a project of `vx show`'s list: the original's name, dir and task names, and vx's
// fields of the project beside them.
type ProjectRow struct {
	Name  string   `json:"name"`
	Dir   string   `json:"dir"`
	Tasks []string `json:"tasks"`
	// Affected says why the project is affected, under --affected; absent otherwise.
	Affected      string   `json:"affected,omitempty"`
	ConfigFile    string   `json:"configFile,omitempty"`
	NameFrom      string   `json:"nameFrom"`
	Tags          []string `json:"tags"`
	DependsOn     []string `json:"dependsOn"`
	ResolvedTasks []Task   `json:"resolvedTasks"`
}

// ProjectConfig is `vx show PROJECT`: the original's name, dir and config (its tasks' configs by
// name), vx's fields of the project and of the answer beside them.
type ProjectConfig struct {
	ProjectRow
	Config struct {
		Tasks map[string]TaskConfig `json:"tasks"`
	} `json:"config"`
	Root   string `json:"root"`
	Target string `json:"target"`
}

// TaskAnswer is `vx show PROJECT#TASK`, and each element of `vx show TASK`: the original's name and
// dir (the project's), task (the task's name) and config, vx's resolved task beside them.
type TaskAnswer struct {
	Name     string     `json:"name"`
	Dir      string     `json:"dir"`
	Task     string     `json:"task"`
	Config   TaskConfig `json:"config"`
	Resolved Task       `json:"resolved"`
	Root     string     `json:"root"`
	Target   string     `json:"target"`
}

// TaskConfig is a task's resolved config in the original's shape.
type TaskConfig struct {
	Description string       `json:"description,omitempty"`
	DependsOn   []string     `json:"dependsOn"`
	Exec        ExecConfig   `json:"exec"`
	Cache       *CacheConfig `json:"cache,omitempty"`
}

// ExecConfig is how a task runs: its command (secrets masked), timeout in milliseconds, retries, the
// environment it defines (a secret's value masked) and the secret variables' names, whether it is
// persistent (and the output line it is ready on), and its sandbox as declared.
type ExecConfig struct {
	Command    string            `json:"command"`
	Timeout    *int64            `json:"timeout,omitempty"`
	Retries    int               `json:"retries,omitempty"`
	Env        EnvConfig         `json:"env"`
	Persistent *PersistentConfig `json:"persistent,omitempty"`
	Sandbox    any               `json:"sandbox,omitempty"`
}

// EnvConfig is a task's environment: the variables it defines and its secrets' names.
type EnvConfig struct {
	Define map[string]string `json:"define"`
	Secret []string          `json:"secret"`
}

// PersistentConfig marks a long-running task; ReadyWhen is the output it is ready on, when it
// waits for a line.
type PersistentConfig struct {
	ReadyWhen string `json:"readyWhen,omitempty"`
}

// CacheConfig is a cached task's inputs and outputs: files (an input list that was not declared
// is "**", every file of the project that git does not ignore) and the variables in its key.
type CacheConfig struct {
	Inputs struct {
		Files []string `json:"files"`
		Env   []string `json:"env"`
	} `json:"inputs"`
	Outputs struct {
		Files []string `json:"files"`
	} `json:"outputs"`
}

// Original answers the document in the original's shape for its target: a []ProjectRow for the
// workspace, a *ProjectConfig for a project, a *TaskAnswer for a project#task and a []TaskAnswer
// for a task name.
func (d *Document) Original() any {
	switch {
	case d.Target == "":
		rows := make([]ProjectRow, len(d.Projects))
		for i, p := range d.Projects {
			rows[i] = d.row(p)
		}
		return rows
	case strings.Contains(d.Target, "#"):
		for _, p := range d.Projects {
			for _, t := range p.Tasks {
				a := d.taskAnswer(p, t)
				return &a
			}
		}
	}
	for _, p := range d.Projects {
		if p.Name == d.Target {
			pc := &ProjectConfig{ProjectRow: d.row(p), Root: d.Root, Target: d.Target}
			pc.Config.Tasks = map[string]TaskConfig{}
			for _, t := range p.Tasks {
				pc.Config.Tasks[t.Name] = configOf(t)
			}
			return pc
		}
	}
	out := []TaskAnswer{}
	for _, p := range d.Projects {
		for _, t := range p.Tasks {
			out = append(out, d.taskAnswer(p, t))
		}
	}
	return out
}

// row is the project p as a row of the list.
func (d *Document) row(p Project) ProjectRow {
	r := ProjectRow{Name: p.Name, Dir: p.Dir, Tasks: []string{}, ConfigFile: p.ConfigFile, NameFrom: p.NameFrom,
		Tags: nonNil(p.Tags), DependsOn: nonNil(p.DependsOn), ResolvedTasks: p.Tasks, Affected: d.Affected[p.Name]}
	for _, t := range p.Tasks {
		r.Tasks = append(r.Tasks, t.Name)
	}
	return r
}

// taskAnswer is the task t of the project p as `vx show PROJECT#TASK` answers it.
func (d *Document) taskAnswer(p Project, t Task) TaskAnswer {
	return TaskAnswer{Name: p.Name, Dir: p.Dir, Task: t.Name, Config: configOf(t), Resolved: t, Root: d.Root, Target: d.Target}
}

// configOf is the task t's config in the original's shape.
func configOf(t Task) TaskConfig {
	c := TaskConfig{Description: t.Description, DependsOn: nonNil(t.DependsOn),
		Exec: ExecConfig{Command: t.Command, Env: EnvConfig{Define: map[string]string{}, Secret: []string{}}}}
	c.Exec.Retries = t.retries
	if t.timeoutMs > 0 {
		ms := t.timeoutMs
		c.Exec.Timeout = &ms
	}
	for k, v := range t.ExecEnv {
		if _, secret := t.Secrets[k]; secret {
			c.Exec.Env.Secret = append(c.Exec.Env.Secret, k)
		} else {
			c.Exec.Env.Define[k] = v
		}
	}
	slices.Sort(c.Exec.Env.Secret)
	if t.Persistent {
		c.Exec.Persistent = &PersistentConfig{}
		if t.ReadyWhen != nil {
			c.Exec.Persistent.ReadyWhen = t.ReadyWhen.Log
		}
	}
	if t.Sandbox != nil {
		c.Exec.Sandbox = t.Sandbox
	}
	if t.Cache {
		cc := &CacheConfig{}
		cc.Inputs.Files, cc.Inputs.Env, cc.Outputs.Files = t.Inputs, nonNil(t.Env), nonNil(t.Outputs)
		if cc.Inputs.Files == nil {
			cc.Inputs.Files = []string{"**"}
		}
		c.Cache = cc
	}
	return c
}

// nonNil is l, or an empty list for nil.
func nonNil(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
