package initplan

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/pathglob"
)

// renderWorkspace writes vx.workspace.ts.
func (b *builder) renderWorkspace(templates map[string]*taskSpec) string {
	var w tsWriter
	w.line("// vx config, written by `vx init` from %s. It is yours now: edit it freely.", strings.Join(b.sources, ", "))
	w.line("// The manual: `vx docs config`; see what it resolves to: `vx show`.")
	w.line("import { defineWorkspace } from '@vzn/vx/config'")
	w.line("import { mcp } from '@vzn/vx-mcp'")
	w.line("")
	w.line("export default defineWorkspace({")
	w.indent++
	w.line("projects: %s,", tsList(b.globs))
	if len(b.globalInputs) > 0 {
		w.line("globalInputs: %s,", tsList(b.globalInputs))
	}
	if len(b.env) > 0 {
		w.line("env: %s,", tsList(b.env))
	}
	if len(b.passThroughEnv) > 0 {
		w.line("passThroughEnv: %s,", tsList(b.passThroughEnv))
	}
	if b.envMode != "" {
		w.line("envMode: %s,", tsString(b.envMode))
	}
	w.line("plugins: [mcp()],")
	if len(templates) == 0 {
		w.line("tasks: {},")
	} else {
		w.line("tasks: {")
		w.indent++
		for _, name := range slices.Sorted(maps.Keys(templates)) {
			w.task(name, templates[name], nil, b.ifScript[name])
		}
		w.indent--
		w.line("},")
	}
	w.indent--
	w.line("})")
	return w.String()
}

// renderProject writes a project's vx.project.ts; ok is false when the project needs none. A
// template reaches a project unless it is the root project, or the template is ifScript and the
// project has no script of its name: a task the project lacks is written `false` only where the
// template would reach it, and a task it has that the template would not reach is named, so that
// the project gets it.
func (b *builder) renderProject(p *project, templates map[string]*taskSpec) (string, bool) {
	var tasks tsWriter
	tasks.indent = 2
	names := map[string]bool{}
	for n := range p.tasks {
		names[n] = true
	}
	for n := range templates {
		names[n] = true
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		t, tmpl := p.tasks[name], templates[name]
		if p.isRoot() {
			tmpl = nil
		}
		reaches := tmpl != nil && (!b.ifScript[name] || p.hasScript(name))
		switch {
		case t == nil && reaches:
			tasks.line("%s: false,", tsKey(name))
		case t == nil:
		case tmpl == nil:
			tasks.task(name, t, nil, false)
		case reaches && b.ifScript[name] && sameWithoutMissingSiblings(p, t, tmpl):
			// vx drops an ifScript template's dependsOn on a sibling task the project lacks,
			// as the pruned spec does: nothing to override.
		case !reaches || !reflect.DeepEqual(t, tmpl):
			tasks.task(name, t, tmpl, false)
		}
	}
	if !p.setName && len(p.tags) == 0 && len(p.dependsOn) == 0 && tasks.Len() == 0 {
		return "", false
	}
	var w tsWriter
	w.line("// vx project config, written by `vx init` from %s.", p.source)
	if p.isRoot() {
		w.line("// The workspace folder as a project: it gets no workspace task, only the tasks declared here.")
	} else {
		w.line("// Tasks here override the workspace's field by field; `false` leaves a workspace task out.")
	}
	w.line("import { defineProject } from '@vzn/vx/config'")
	w.line("")
	w.line("export default defineProject({")
	w.indent++
	if p.setName {
		w.line("name: %s,", tsString(p.name))
	}
	if len(p.tags) > 0 {
		w.line("tags: %s,", tsList(p.tags))
	}
	if len(p.dependsOn) > 0 {
		w.line("dependsOn: %s,", tsList(p.dependsOn))
	}
	if tasks.Len() == 0 {
		w.line("tasks: {},")
	} else {
		w.line("tasks: {")
		w.WriteString(tasks.String())
		w.line("},")
	}
	w.indent--
	w.line("})")
	return w.String(), true
}

// sameWithoutMissingSiblings reports whether t is the template but for dependsOn entries naming
// tasks of the same project that p does not have.
func sameWithoutMissingSiblings(p *project, t, tmpl *taskSpec) bool {
	var deps []string
	for _, d := range tmpl.DependsOn {
		if strings.HasPrefix(d, "^") || strings.Contains(d, "#") || p.tasks[d] != nil {
			deps = append(deps, d)
		}
	}
	pruned := *tmpl
	pruned.DependsOn = deps
	mine := *t
	if len(mine.DependsOn) == 0 && len(deps) == 0 {
		mine.DependsOn, pruned.DependsOn = nil, nil
	}
	return reflect.DeepEqual(&mine, &pruned)
}

// tsWriter builds TypeScript source with two-space indentation.
type tsWriter struct {
	strings.Builder
	indent int
}

func (w *tsWriter) line(format string, args ...any) {
	if format == "" {
		w.WriteByte('\n')
		return
	}
	w.WriteString(strings.Repeat("  ", w.indent))
	fmt.Fprintf(w, format, args...)
	w.WriteByte('\n')
}

// task writes one task entry; with base, only the fields that differ from it. ifScript marks a
// workspace template that goes only to projects with a script of its name.
func (w *tsWriter) task(name string, t, base *taskSpec, ifScript bool) {
	if base == nil {
		base = &taskSpec{}
	}
	var fields []string
	if t.Description != base.Description {
		fields = append(fields, "description: "+tsString(t.Description))
	}
	if t.Command != base.Command {
		fields = append(fields, "command: "+tsString(t.Command))
	}
	if !slices.Equal(t.DependsOn, base.DependsOn) {
		fields = append(fields, "dependsOn: "+tsList(t.DependsOn))
	}
	if !slices.Equal(t.Inputs, base.Inputs) || (t.Inputs == nil) != (base.Inputs == nil) {
		if t.Inputs == nil {
			// an override of a template's inputs back to vx's default
			fields = append(fields, "inputs: "+tsList([]string{pathglob.Default}))
		} else {
			fields = append(fields, "inputs: "+tsList(t.Inputs))
		}
	}
	if !slices.Equal(t.Outputs, base.Outputs) {
		fields = append(fields, "outputs: "+tsList(t.Outputs))
	}
	if !slices.Equal(t.Env, base.Env) {
		fields = append(fields, "env: "+tsList(t.Env))
	}
	if !slices.Equal(t.PassThroughEnv, base.PassThroughEnv) {
		fields = append(fields, "passThroughEnv: "+tsList(t.PassThroughEnv))
	}
	if !reflect.DeepEqual(t.ExecEnv, base.ExecEnv) && len(t.ExecEnv) > 0 {
		var kv []string
		for _, k := range slices.Sorted(maps.Keys(t.ExecEnv)) {
			kv = append(kv, tsKey(k)+": "+tsString(t.ExecEnv[k]))
		}
		fields = append(fields, "exec: { env: { "+strings.Join(kv, ", ")+" } }")
	}
	if t.NoCache != base.NoCache {
		fields = append(fields, fmt.Sprintf("cache: %t", !t.NoCache))
	}
	if t.Persistent != base.Persistent {
		fields = append(fields, fmt.Sprintf("persistent: %t", t.Persistent))
	}
	if t.NotInAll != base.NotInAll {
		fields = append(fields, fmt.Sprintf("all: %t", !t.NotInAll))
	}
	if !slices.Equal(t.Rewrites, base.Rewrites) {
		fields = append(fields, "rewrites: "+tsList(t.Rewrites))
	}
	if ifScript {
		fields = append(fields, "ifScript: true")
	}
	if len(fields) == 0 {
		w.line("%s: {},", tsKey(name))
		return
	}
	oneLine := tsKey(name) + ": { " + strings.Join(fields, ", ") + " },"
	if len(fields) <= 3 && len(oneLine)+2*w.indent <= 100 {
		w.line("%s", oneLine)
		return
	}
	w.line("%s: {", tsKey(name))
	w.indent++
	for _, f := range fields {
		w.line("%s,", f)
	}
	w.indent--
	w.line("},")
}

// tsString quotes s as a single-quoted TypeScript string.
func tsString(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('\'')
	return b.String()
}

func tsList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = tsString(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// tsKey writes an object key: bare when it is an identifier, else quoted.
func tsKey(k string) string {
	if k == "" {
		return "''"
	}
	for i, r := range k {
		if !(r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return tsString(k)
		}
	}
	return k
}
