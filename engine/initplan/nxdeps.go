package initplan

import (
	"encoding/json"
	"path"
	"slices"
	"strconv"
	"strings"
)

// nxDependency is one dependsOn entry as Nx normalizes it (normalizeDependencyConfigDefinition in
// its task runner): a target of the task's own project, of the projects named, or of each project
// the task's project depends on.
type nxDependency struct {
	target string
	// projects names the projects whose target it is; nil with dependencies false means the task's
	// own project.
	projects     []string
	dependencies bool
}

// nxSplitByColons splits an Nx target string at its colons as Nx does (splitByColons): a part
// in double quotes keeps its colons and loses its quotes.
func nxSplitByColons(s string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ':':
			parts = append(parts, cur.String())
			cur.Reset()
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				cur.WriteByte(s[i])
			}
		default:
			cur.WriteByte(s[i])
		}
	}
	return append(parts, cur.String())
}

// nxReadTargetString reads "target", "project:target" or "target:with:colons" as Nx does
// (readProjectAndTargetFromTargetString): the part before the first colon names a project only
// when a project has that name; otherwise the whole string is a target of the same project.
// Nothing after the target is read as a configuration: Nx takes the rest whole as the target name.
func nxReadTargetString(s string, isProject func(string) bool) nxDependency {
	parts := nxSplitByColons(s)
	switch {
	case len(parts) == 1:
		return nxDependency{target: parts[0]}
	case isProject(parts[0]):
		return nxDependency{target: strings.Join(parts[1:], ":"), projects: parts[:1]}
	default:
		return nxDependency{target: s}
	}
}

// nxReadDependency normalizes one dependsOn entry (a string or an object), answering a problem
// where vx cannot read it.
func (b *builder) nxReadDependency(e json.RawMessage) (nxDependency, string) {
	var s string
	if json.Unmarshal(e, &s) == nil {
		if rest, ok := strings.CutPrefix(s, "^"); ok {
			// Nx reads no project in a dependency entry: "^a:b" is target a:b of each dependency.
			return nxDependency{target: rest, dependencies: true}, ""
		}
		return nxReadTargetString(s, func(p string) bool { return b.nxNames[p] }), ""
	}
	var obj struct {
		Target       string          `json:"target"`
		Projects     json.RawMessage `json:"projects"`
		Dependencies bool            `json:"dependencies"`
		Params       string          `json:"params"`
	}
	if json.Unmarshal(e, &obj) != nil || obj.Target == "" {
		return nxDependency{}, "an entry vx cannot read: " + string(e)
	}
	if obj.Params == "forward" {
		b.noteItem("dependsOn params: forward is not translated (vx passes arguments after -- to the tasks named, not to what they depend on)", string(e))
	}
	d := nxDependency{target: obj.Target, dependencies: obj.Dependencies}
	var one string
	var list []string
	switch {
	case len(obj.Projects) == 0 || string(obj.Projects) == "null":
	case json.Unmarshal(obj.Projects, &one) == nil:
		// Nx's legacy spellings: "self" is the task's own project, "dependencies" its dependencies.
		switch one {
		case "self":
		case "dependencies":
			d.dependencies = true
		default:
			list = []string{one}
		}
	case json.Unmarshal(obj.Projects, &list) == nil:
	default:
		return nxDependency{}, "projects " + string(obj.Projects) + ": a name or a list of names"
	}
	if list != nil {
		names, bad, ok := b.nxMatchProjects(list)
		if !ok {
			return nxDependency{}, "projects " + string(obj.Projects) + ": vx cannot read the pattern " + strconv.Quote(bad) + " as Nx does; list the projects"
		}
		if len(names) == 0 {
			b.noteItem("dependsOn projects that match no project (Nx adds no edge for them)", string(e))
		}
		d.projects = names
	}
	return d, ""
}

// vxTaskName reports whether vx's config loader takes name as a task name: not empty, and no
// space, tab, newline, control character, # or ^.
func vxTaskName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "#^ \t\n") &&
		!strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) })
}

// nxIsGlob reports whether Nx reads a target name as a pattern (isGlobPattern).
func nxIsGlob(s string) bool { return strings.ContainsAny(s, "*|{}()[") }

// nxDependsOn translates a target's Nx dependsOn into vx's: "^t" for each dependency's target,
// "t" for the project's own, "p#t" for another project's. A target pattern takes every target
// name of the workspace it matches, as Nx expands it; an entry vx cannot read is a todo naming it.
func (b *builder) nxDependsOn(np *nxProject, file, key string, entries []json.RawMessage) []string {
	var out []string
	for _, e := range entries {
		d, problem := b.nxReadDependency(e)
		if problem != "" {
			b.todo(file, key, "%s", problem)
			continue
		}
		targets := []string{d.target}
		if nxIsGlob(d.target) {
			targets = b.nxMatchTargets(d.target)
			if targets == nil {
				b.noteItem("dependsOn target patterns that match no target of the workspace (Nx adds no edge for them)", np.name+" "+string(e))
			}
		}
		for _, t := range targets {
			if !vxTaskName(t) {
				b.todo(file, key, "%s: the target %q has a character vx task names cannot hold (#, ^, a space or a control character): rename it", string(e), t)
				continue
			}
			switch {
			case d.projects != nil:
				for _, p := range d.projects {
					if p == np.name {
						out = addUnique(out, t)
					} else {
						out = addUnique(out, p+"#"+t)
					}
				}
			case d.dependencies:
				out = addUnique(out, "^"+t)
			default:
				out = addUnique(out, t)
			}
		}
	}
	return out
}

// nxMatchTargets lists the target names of the workspace that pattern matches, sorted.
func (b *builder) nxMatchTargets(pattern string) []string {
	var out []string
	for _, name := range b.nxTargetNames {
		if ok, err := path.Match(pattern, name); err == nil && ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// nxTargetDefault finds the target default Nx lays under a target (readTargetDefaultsForTarget):
// the one keyed by its executor, else by its name, else the longest key that is a pattern
// matching its name.
func nxTargetDefault(defaults map[string]nxTarget, name, executor string) (nxTarget, bool) {
	if def, ok := defaults[executor]; ok && executor != "" {
		return def, true
	}
	if def, ok := defaults[name]; ok {
		return def, true
	}
	best := ""
	for k := range defaults {
		if !nxIsGlob(k) {
			continue
		}
		if ok, err := path.Match(k, name); err == nil && ok && (len(k) > len(best) || len(k) == len(best) && k < best) {
			best = k
		}
	}
	if best == "" {
		return nxTarget{}, false
	}
	return defaults[best], true
}
