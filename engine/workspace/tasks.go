package workspace

import (
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/config"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// templates reads the workspace's task templates.
func (b *build) templates(r reader, top map[string]any) (map[string]*taskSpec, error) {
	out := map[string]*taskSpec{}
	v, ok := top["tasks"]
	if !ok {
		return out, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.errAt("tasks", "tasks must be an object of task names to tasks, not %s", jsType(v))
	}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		if err := checkTaskName(r, name); err != nil {
			return nil, err
		}
		ts, err := r.taskSpec(join("tasks", name), m[name])
		if err != nil {
			return nil, err
		}
		if !ts.declares("command") && !ts.declares("dependsOn") {
			return nil, r.errAt(join("tasks", name), noCommand, name)
		}
		out[name] = ts
	}
	return out, nil
}

func checkTaskName(r reader, name string) error {
	if name == "" || strings.ContainsAny(name, "#^ \t\n") || hasControl(name) {
		return r.errAt(join("tasks", name), "%q is not a task name (no spaces, control characters, # or ^)", name)
	}
	return nil
}

// hasControl reports whether s holds a control character (a terminal escape sequence starts with
// one): names are printed to terminals, raw.
func hasControl(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
}

// projects builds every project with its tasks: the templates, then the project's own fields on
// top, field by field.
func (b *build) projects(dirs []*projectDir, byConf map[string]*config.Module, templates map[string]*taskSpec) ([]*graph.Project, error) {
	var projects []*graph.Project
	byName := map[string]*graph.Project{}
	byPkgName := map[string]string{}
	declared := map[*graph.Project][]string{}
	declaredAt := map[*graph.Project]reader{}
	pkgDeps := map[*graph.Project][]string{}
	for _, d := range dirs {
		p := &graph.Project{
			Dir: d.rel, AbsDir: filepath.Join(b.root, filepath.FromSlash(d.rel)),
			ConfigFile: d.confFile, Tags: []string{}, Tasks: map[string]*graph.Task{},
		}
		if d.pkg != nil && len(d.pkg.Scripts) > 0 {
			p.Scripts = d.pkg.Scripts
		}
		p.Name, p.NameOrigin = path.Base(d.rel), graph.Origin{File: d.rel}
		if d.rel == "." {
			p.Name = filepath.Base(b.root)
		}
		if d.pkg != nil && d.pkg.Name != "" {
			if hasControl(d.pkg.Name) {
				return nil, &vxerr.ConfigError{File: d.pkgFile, Msg: fmt.Sprintf("name %q holds a control character", d.pkg.Name)}
			}
			p.Name, p.NameOrigin = d.pkg.Name, graph.Origin{File: d.pkgFile}
			byPkgName[d.pkg.Name] = ""
			pkgDeps[p] = depNames(d.pkg)
		}
		overrides := map[string]any{}
		if m := byConf[d.confFile]; m != nil {
			r := b.reader(d.confFile)
			top, err := r.object("", m.Value, projectFields...)
			if err != nil {
				return nil, err
			}
			if v, ok := top["name"]; ok {
				if p.Name, err = r.str("name", v); err != nil {
					return nil, err
				}
				if p.Name == "" || strings.ContainsAny(p.Name, "# \t\n") || hasControl(p.Name) {
					return nil, r.errAt("name", "%q is not a project name", p.Name)
				}
				p.NameOrigin = r.origin("name")
			}
			if v, ok := top["tags"]; ok {
				if p.Tags, err = r.strings("tags", v); err != nil {
					return nil, err
				}
			}
			if v, ok := top["dependsOn"]; ok {
				if declared[p], err = r.strings("dependsOn", v); err != nil {
					return nil, err
				}
				declaredAt[p] = r
			}
			if v, ok := top["tasks"]; ok {
				if overrides, ok = v.(map[string]any); !ok {
					return nil, r.errAt("tasks", "tasks must be an object of task names to tasks, not %s", jsType(v))
				}
			}
			if err := b.projectTasks(p, r, templates, overrides); err != nil {
				return nil, err
			}
		} else if err := b.projectTasks(p, reader{}, templates, nil); err != nil {
			return nil, err
		}
		if d.pkg != nil && d.pkg.Name != "" {
			byPkgName[d.pkg.Name] = p.Name
		}
		if other, dup := byName[p.Name]; dup {
			return nil, &vxerr.ConfigError{File: p.NameOrigin.File, Line: p.NameOrigin.Line,
				Msg: fmt.Sprintf("two projects are named %q: %s and %s", p.Name, other.Dir, p.Dir)}
		}
		byName[p.Name] = p
		projects = append(projects, p)
	}
	for _, p := range projects {
		deps := map[string]bool{}
		for _, dn := range declared[p] {
			if _, ok := byName[dn]; !ok && len(b.skip) > 0 {
				continue
			} else if !ok {
				r := declaredAt[p]
				return nil, r.errAt("dependsOn", "project %s depends on %q, which is not a project of this workspace", p.Name, dn)
			}
			if dn != p.Name {
				deps[dn] = true
			}
		}
		for _, pn := range pkgDeps[p] {
			if name, ok := byPkgName[pn]; ok && name != "" && name != p.Name {
				deps[name] = true
			}
		}
		p.DependsOn = append([]string{}, slices.Sorted(maps.Keys(deps))...)
	}
	return projects, nil
}

// projectTasks gives a project the templates it does not opt out of, with its overrides on top,
// and the tasks only it declares. The root project (the workspace folder itself) gets no
// templates: it holds only the tasks its own vx.project.ts declares. A template marked ifScript
// goes only to projects whose package.json has a script of its name, unless the project's own
// config names the task.
func (b *build) projectTasks(p *graph.Project, r reader, templates map[string]*taskSpec, overrides map[string]any) error {
	names := map[string]bool{}
	for n, tmpl := range templates {
		if p.Dir == "." {
			continue
		}
		if _, named := overrides[n]; !named && tmpl.declares("ifScript") && tmpl.task.IfScript {
			if _, ok := p.Scripts[n]; !ok {
				continue
			}
		}
		names[n] = true
	}
	for n := range overrides {
		names[n] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		tmpl := templates[name]
		if p.Dir == "." {
			tmpl = nil
		}
		ov, hasOv := overrides[name]
		if hasOv {
			if err := checkTaskName(r, name); err != nil {
				return err
			}
			if off, isBool := ov.(bool); isBool {
				if off {
					if tmpl == nil {
						return r.errAt(join("tasks", name), "tasks.%s: true names no workspace task to keep (declare the task)", name)
					}
					hasOv = false
				} else {
					continue // opted out
				}
			}
		}
		var own *taskSpec
		if hasOv {
			var err error
			if own, err = r.taskSpec(join("tasks", name), ov); err != nil {
				return err
			}
			if tmpl == nil && !own.declares("command") && !own.declares("dependsOn") {
				return r.errAt(join("tasks", name), noCommand, name)
			}
		}
		t := &graph.Task{ID: graph.TaskID(p.Name, name), Project: p.Name, Name: name, Cache: true, All: true}
		for _, spec := range []*taskSpec{tmpl, own} {
			if spec != nil {
				spec.applyTo(t)
			}
		}
		if err := checkGroup(t); err != nil {
			return err
		}
		p.Tasks[name] = t
	}
	return nil
}

// noCommand is the refusal of a task that declares neither a command nor dependsOn.
const noCommand = "task %q has no command (give it a command, or dependsOn to make it a group of tasks)"

// checkGroup refuses a group task (dependsOn and no command) that declares what only a command
// has: outputs, persistent or interactive. It names the field and where it was set.
func checkGroup(t *graph.Task) error {
	if !t.IsGroup() {
		return nil
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"outputs", len(t.Outputs) > 0}, {"persistent", t.Persistent}, {"interactive", t.Interactive}} {
		if f.set {
			o := t.Origins.Get(f.name)
			return &vxerr.ConfigError{File: o.File, Line: o.Line, Col: o.Col,
				Msg: fmt.Sprintf("task %s has no command (a group of tasks), so it cannot declare %s", t.ID, f.name)}
		}
	}
	return nil
}
