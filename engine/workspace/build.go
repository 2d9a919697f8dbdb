package workspace

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/sourcegraph/conc/iter"

	"github.com/vzn/vx/engine/config"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/vxerr"
)

// workspaceFields and projectFields list what the two config files may declare.
var (
	workspaceFields = []string{"projects", "plugins", "tasks", "globalInputs"}
	projectFields   = []string{"name", "tags", "dependsOn", "tasks"}
)

// packageJSON is what vx reads of a project's package.json.
type packageJSON struct {
	Name                 string            `json:"name"`
	Workspaces           json.RawMessage   `json:"workspaces"`
	Dependencies         map[string]string `json:"dependencies"`
	DevDependencies      map[string]string `json:"devDependencies"`
	PeerDependencies     map[string]string `json:"peerDependencies"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	Scripts              map[string]string `json:"scripts"`
}

// projectDir is a project folder found by the workspace's globs, before its config is read.
type projectDir struct {
	rel      string // slash path relative to the root
	pkg      *packageJSON
	pkgFile  string // relative, "" when none
	confFile string // relative vx.project.ts, "" when none
}

// build is one resolution of a workspace, from evaluated config to graph.
type build struct {
	root, cacheDir string
	getenv         func(string) string
	sess           *config.Session
	ws             *config.Module
	// secretNames are the secret names met so far, for masking an error of a partial load.
	secretNames map[string]bool
	// skip holds project folders left out because their config does not load (a partial load for
	// vx info); with any, references to missing projects and tasks are dropped, not refused.
	skip map[string]bool
	// watched are the files and folders whose change means the workspace must be built again.
	watched []string
}

// load evaluates the config under root and resolves it.
func (b *build) load(ctx context.Context) (*graph.Workspace, error) {
	wsMod, err := b.sess.EvalWorkspace(ctx, ConfigFileName)
	if err != nil {
		return nil, err
	}
	b.ws = wsMod
	r := b.reader(ConfigFileName)
	top, err := r.object("", wsMod.Value, workspaceFields...)
	if err != nil {
		return nil, err
	}
	globs, err := b.projectGlobs(r, top)
	if err != nil {
		return nil, err
	}
	dirs, err := b.findProjects(globs)
	if err != nil {
		return nil, err
	}
	if len(b.skip) > 0 {
		kept := dirs[:0]
		for _, d := range dirs {
			if !b.skip[d.rel] {
				kept = append(kept, d)
			}
		}
		dirs = kept
	}
	var confFiles []string
	for _, d := range dirs {
		if d.confFile != "" {
			confFiles = append(confFiles, d.confFile)
		}
	}
	mods, err := b.sess.EvalProjects(ctx, confFiles)
	if err != nil {
		return nil, err
	}
	byConf := map[string]*config.Module{}
	for _, m := range mods {
		byConf[m.File] = m
	}

	ws := &graph.Workspace{Root: b.root, CacheDir: b.cacheDir, ConfigFile: ConfigFileName}
	if ws.Plugins, ws.MCP, err = b.plugins(r, top); err != nil {
		return nil, err
	}
	if ws.GlobalInputs, err = globalInputs(r, top); err != nil {
		return nil, err
	}
	templates, err := b.templates(r, top)
	if err != nil {
		return nil, err
	}
	projects, err := b.projects(dirs, byConf, templates)
	if err != nil {
		return nil, err
	}
	ws.Projects = projects
	ws.Index()
	final := refuseMissing
	if len(b.skip) > 0 {
		final = dropMissing
	}
	first := final
	if len(ws.Plugins) > 0 {
		first = keepMissing
	}
	if err := resolveDeps(ws, first); err != nil {
		return nil, err
	}
	if err := b.runStages(ctx, ws); err != nil {
		return nil, err
	}
	if first != final {
		if err := resolveDeps(ws, final); err != nil {
			return nil, err
		}
	}
	if err := findCycle(ws); err != nil {
		return nil, err
	}
	for _, p := range ws.Projects {
		for _, t := range p.Tasks {
			t.Scripts = scriptsRun(t.Command, p.Scripts)
			if t.Persistent {
				t.Cache = false
			}
		}
	}
	ws.Secrets = secretValues(sortedKeys(b.allSecretNames(ws)), b.getenv)
	return ws, nil
}

// globalInputs reads `globalInputs`: globs from the workspace root ("//" may be written, as in a
// task's inputs, or left out), kept in the "//" spelling.
func globalInputs(r reader, top map[string]any) ([]string, error) {
	v, ok := top["globalInputs"]
	if !ok {
		return nil, nil
	}
	list, err := r.globs("globalInputs", v)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, g := range list {
		neg, rest := "", g
		if x, ok := strings.CutPrefix(rest, "!"); ok {
			neg, rest = "!", x
		}
		if !strings.HasPrefix(rest, pathglob.RootPrefix) {
			rest = pathglob.RootPrefix + strings.TrimPrefix(rest, "./")
		}
		out = append(out, neg+rest)
	}
	return out, nil
}

// projectGlobs reads `projects`, defaulting to package.json workspaces.
func (b *build) projectGlobs(r reader, top map[string]any) ([]string, error) {
	if v, ok := top["projects"]; ok {
		return r.strings("projects", v)
	}
	b.watched = append(b.watched, filepath.Join(b.root, "package.json"))
	pkg, _, err := readPackageJSON(b.root, ".")
	if err != nil || pkg == nil || len(pkg.Workspaces) == 0 {
		return nil, err
	}
	var list []string
	if json.Unmarshal(pkg.Workspaces, &list) == nil {
		return list, nil
	}
	var obj struct {
		Packages []string `json:"packages"`
	}
	if err := json.Unmarshal(pkg.Workspaces, &obj); err != nil {
		return nil, &vxerr.ConfigError{File: "package.json", Msg: "workspaces must be a list of globs or { packages: [...] }"}
	}
	return obj.Packages, nil
}

// findProjects expands the project globs into project folders, sorted; a glob starting with !
// excludes what it matches. node_modules and dot folders never hold projects.
func (b *build) findProjects(globs []string) ([]*projectDir, error) {
	fsys := os.DirFS(b.root)
	found := map[string]bool{}
	var excludes []string
	for _, g := range globs {
		if strings.HasPrefix(g, "!") {
			excludes = append(excludes, path.Clean(strings.TrimPrefix(g, "!")))
			continue
		}
		g = path.Clean(strings.TrimPrefix(g, "./"))
		if !doublestar.ValidatePattern(g) || strings.HasPrefix(g, "../") {
			return nil, &vxerr.ConfigError{File: ConfigFileName, Msg: fmt.Sprintf("projects: %q is not a glob of folders inside the workspace", g)}
		}
		if base, _ := doublestar.SplitPattern(g); base != "." {
			b.watched = append(b.watched, filepath.Join(b.root, filepath.FromSlash(base)))
		} else {
			b.watched = append(b.watched, b.root)
		}
		dirs, err := doublestar.Glob(fsys, g, doublestar.WithNoFollow())
		if err != nil {
			return nil, fmt.Errorf("expand projects glob %q: %w", g, err)
		}
		for _, d := range dirs {
			if skipDir(d) {
				continue
			}
			if fi, err := os.Stat(filepath.Join(b.root, filepath.FromSlash(d))); err == nil && fi.IsDir() {
				found[d] = true
			}
		}
	}
	var rels []string
	for d := range found {
		excluded := false
		for _, x := range excludes {
			if ok, _ := doublestar.Match(x, d); ok {
				excluded = true
			}
		}
		if !excluded {
			rels = append(rels, d)
		}
	}
	sort.Strings(rels)
	// Reading hundreds of small files is syscall-bound: read them in parallel.
	out, err := iter.MapErr(rels, func(rel *string) (*projectDir, error) {
		pd := &projectDir{rel: *rel}
		pkg, pkgFile, err := readPackageJSON(b.root, *rel)
		if err != nil {
			return nil, err
		}
		pd.pkg, pd.pkgFile = pkg, pkgFile
		conf := path.Join(*rel, ProjectConfigFileName)
		if _, err := os.Stat(filepath.Join(b.root, filepath.FromSlash(conf))); err == nil {
			pd.confFile = conf
		}
		return pd, nil
	})
	if err != nil {
		return nil, err
	}
	for _, pd := range out {
		b.watched = append(b.watched,
			filepath.Join(b.root, filepath.FromSlash(path.Join(pd.rel, "package.json"))),
			filepath.Join(b.root, filepath.FromSlash(path.Join(pd.rel, ProjectConfigFileName))))
	}
	return out, nil
}

func skipDir(rel string) bool {
	for _, part := range strings.Split(rel, "/") {
		if part == "node_modules" || (strings.HasPrefix(part, ".") && part != ".") {
			return true
		}
	}
	return false
}

// readPackageJSON reads rel/package.json; a missing file is nil, a broken one an error naming it.
func readPackageJSON(root, rel string) (*packageJSON, string, error) {
	file := path.Join(rel, "package.json")
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		if os.IsNotExist(err) {
			return nil, "", nil
		}
		return nil, "", fmt.Errorf("read %s: %w", file, err)
	}
	var pkg packageJSON
	if err := json.Unmarshal(data, &pkg); err != nil {
		return nil, "", &vxerr.ConfigError{File: file, Msg: fmt.Sprintf("not valid JSON: %v", err)}
	}
	return &pkg, file, nil
}

// plugins reads the plugins list.
func (b *build) plugins(r reader, top map[string]any) ([]graph.Plugin, *graph.MCPOptions, error) {
	v, ok := top["plugins"]
	if !ok {
		return []graph.Plugin{}, nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, nil, r.errAt("plugins", "plugins must be a list, not %s", jsType(v))
	}
	plugins := []graph.Plugin{}
	var mcp *graph.MCPOptions
	for i, item := range list {
		kp := fmt.Sprintf("plugins[%d]", i)
		m, ok := item.(map[string]any)
		if !ok {
			return nil, nil, r.errAt("plugins", "%s must be a plugin object { name, commands?, stage? }, not %s", kp, jsType(item))
		}
		name, ok := m["name"].(string)
		if !ok || name == "" {
			return nil, nil, r.errAt("plugins", "%s has no name", kp)
		}
		p := graph.Plugin{Name: name, Commands: []string{}, Stage: b.sess.PluginStage(b.ws, i) != nil}
		switch c := m["commands"].(type) {
		case nil:
		case []any:
			for _, x := range c {
				s, ok := x.(string)
				if !ok {
					return nil, nil, r.errAt("plugins", "%s.commands must list command names", kp)
				}
				p.Commands = append(p.Commands, s)
			}
		case map[string]any:
			p.Commands = sortedKeys(c)
		default:
			return nil, nil, r.errAt("plugins", "%s.commands must list command names", kp)
		}
		if name == "mcp" {
			opts, err := mcpOptions(r, m["options"])
			if err != nil {
				return nil, nil, err
			}
			mcp = opts
		}
		plugins = append(plugins, p)
	}
	return plugins, mcp, nil
}

func mcpOptions(r reader, v any) (*graph.MCPOptions, error) {
	opts, _ := v.(map[string]any)
	switch run := opts["run"].(type) {
	case nil, bool:
		all, _ := run.(bool)
		if run == nil {
			all = true
		}
		return &graph.MCPOptions{RunAll: all}, nil
	case []any:
		names, err := r.strings("plugins", run)
		if err != nil {
			return nil, r.errAt("plugins", "mcp({ run }) must be true, false or a list of task names")
		}
		for _, n := range names {
			if n == "" || strings.Contains(n, "#") {
				return nil, r.errAt("plugins", "mcp({ run }): %q is not a task name", n)
			}
		}
		return &graph.MCPOptions{RunNames: names}, nil
	}
	return nil, r.errAt("plugins", "mcp({ run }) must be true, false or a list of task names")
}

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
	for _, name := range sortedKeys(m) {
		if err := checkTaskName(r, name); err != nil {
			return nil, err
		}
		ts, err := r.taskSpec(join("tasks", name), m[name])
		if err != nil {
			return nil, err
		}
		if !ts.declares("command") {
			return nil, r.errAt(join("tasks", name), "task %q has no command", name)
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
		p.DependsOn = sortedKeys(deps)
	}
	return projects, nil
}

func depNames(pkg *packageJSON) []string {
	var names []string
	for _, m := range []map[string]string{pkg.Dependencies, pkg.DevDependencies, pkg.PeerDependencies, pkg.OptionalDependencies} {
		for n := range m {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
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
	for _, name := range sortedKeys(names) {
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
			if tmpl == nil && !own.declares("command") {
				return r.errAt(join("tasks", name), "task %q has no command", name)
			}
		}
		t := &graph.Task{ID: graph.TaskID(p.Name, name), Project: p.Name, Name: name, Cache: true, All: true}
		for _, spec := range []*taskSpec{tmpl, own} {
			if spec != nil {
				spec.applyTo(t)
			}
		}
		p.Tasks[name] = t
	}
	return nil
}

// reader returns a reader of one config file that records the secret names it meets.
func (b *build) reader(file string) reader {
	if b.secretNames == nil {
		b.secretNames = map[string]bool{}
	}
	return reader{sess: b.sess, file: file, secrets: b.secretNames}
}

// secretValues returns the values of the secrets named so far.
func (b *build) secretValues() []string {
	var vals []string
	for _, name := range sortedKeys(b.secretNames) {
		if v := b.getenv(name); v != "" {
			vals = append(vals, v)
		}
	}
	return vals
}

// allSecretNames lists every secret the tasks declare.
func (b *build) allSecretNames(ws *graph.Workspace) map[string]bool {
	names := map[string]bool{}
	for _, id := range ws.TaskIDs() {
		t, _ := ws.Task(id)
		for _, name := range t.SecretNames() {
			names[name] = true
		}
	}
	return names
}
