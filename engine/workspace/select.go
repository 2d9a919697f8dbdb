package workspace

import (
	"container/heap"
	"context"
	"fmt"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/suggest"
	"github.com/vzn/vx/engine/vxerr"
)

// Select picks the projects and tasks a verb works on: the filters' projects (all when none, or
// when every filter is an exclusion) less the excluded ones, narrowed to the affected ones under
// --affected (with tasks named or --all, task by task instead: see selectAffectedTasks), then the named tasks (or, under --all with no task named, every task of those
// projects that --all takes; --all beside task names selects those tasks in every project, as a
// name alone does) and everything those tasks depend on.
//
// A selection narrowed by git (--affected, a [REF] filter) may hold no task: nothing it names
// changed. That is an answer, not a refusal: its NothingAffected says since when. A task name no
// project declares is still refused.
func Select(ctx context.Context, ws *graph.Workspace, opts SelectOptions) (*Selection, error) {
	projects, ranges, err := filterProjects(ctx, ws, opts.Filters)
	if err != nil {
		return nil, err
	}
	sel := &Selection{Projects: []string{}, Requested: []string{}, TaskIDs: []string{}}
	// Naming tasks (or --all), --affected narrows task by task (selectAffectedTasks); a selection
	// of projects only, project by project.
	byTask := opts.Affected && (len(opts.Tasks) > 0 || opts.All)
	if byTask {
		return selectAffectedTasks(ctx, ws, opts, projects, ranges, sel)
	}
	if opts.Affected {
		affected, base, err := affectedSince(ctx, ws, opts.AffectedRef)
		if err != nil {
			return nil, err
		}
		ranges = append(ranges, base)
		sel.Affected = map[string]string{}
		for name := range projects {
			if why, ok := affected[name]; ok {
				sel.Affected[name] = why
			} else {
				delete(projects, name)
			}
		}
	}
	sel.Projects = append([]string{}, slices.Sorted(maps.Keys(projects))...)
	requested, err := requestedTasks(ws, projects, opts, sel.Projects, len(ranges) > 0)
	if err != nil {
		return nil, err
	}
	return finishSelection(ws, opts, sel, requested, ranges), nil
}

// selectAffectedTasks is Select under --affected with tasks named (or --all): of the tasks the
// names select in the filtered projects, those affected since the base (affectedTasks), and what
// they depend on. sel.Affected holds, for each project with an affected task of the selection,
// the reason of its first one.
func selectAffectedTasks(ctx context.Context, ws *graph.Workspace, opts SelectOptions, projects map[string]bool, ranges []string, sel *Selection) (*Selection, error) {
	affected, base, err := affectedTaskSet(ctx, ws, opts.AffectedRef)
	if err != nil {
		return nil, err
	}
	ranges = append(ranges, base)
	all := append([]string{}, slices.Sorted(maps.Keys(projects))...)
	requested, err := requestedTasks(ws, projects, opts, all, true)
	if err != nil {
		return nil, err
	}
	for id := range requested {
		if _, ok := affected[id]; !ok {
			delete(requested, id)
		}
	}
	sel.Affected = map[string]string{}
	keep := map[string]bool{}
	for _, id := range Closure(ws, slices.Collect(maps.Keys(requested))) {
		t, _ := ws.Task(id)
		if why, ok := affected[id]; ok && sel.Affected[t.Project] == "" {
			sel.Affected[t.Project] = why
		}
		if requested[id] {
			keep[t.Project] = true
		}
	}
	sel.Projects = append([]string{}, slices.Sorted(maps.Keys(keep))...)
	return finishSelection(ws, opts, sel, requested, ranges), nil
}

// requestedTasks answers the tasks the selection's names (or --all) ask for in the projects
// (names: the same, sorted); narrowed says git narrowed the projects, so that a name none of them
// has is no refusal.
func requestedTasks(ws *graph.Workspace, projects map[string]bool, opts SelectOptions, names []string, narrowed bool) (map[string]bool, error) {
	requested := map[string]bool{}
	for _, name := range opts.Tasks {
		ids, err := matchTask(ws, projects, name, opts, narrowed)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			requested[id] = true
		}
	}
	if opts.All && len(opts.Tasks) == 0 {
		for _, pn := range names {
			p, _ := ws.Project(pn)
			for _, tn := range p.TaskNames() {
				// A dev server or a watcher never ends, and a task marked all: false (a clean-up)
				// is not wanted by accident: --all leaves them out; naming them still runs them.
				if t := p.Tasks[tn]; t.Persistent || !t.All {
					continue
				}
				requested[graph.TaskID(pn, tn)] = true
			}
		}
	}
	return requested, nil
}

// finishSelection completes sel with the requested tasks, what they depend on, and why it is
// empty where git narrowed it to nothing.
func finishSelection(ws *graph.Workspace, opts SelectOptions, sel *Selection, requested map[string]bool, ranges []string) *Selection {
	sel.Requested = append([]string{}, slices.Sorted(maps.Keys(requested))...)
	sel.TaskIDs = Closure(ws, sel.Requested)
	// A selection of projects only (vx show, vx ls) is empty when it holds no project.
	empty := len(sel.TaskIDs) == 0
	if len(opts.Tasks) == 0 && !opts.All {
		empty = len(sel.Projects) == 0
	}
	if empty && len(ranges) > 0 {
		sel.NothingAffected = "nothing affected since " + strings.Join(slices.Compact(slices.Sorted(slices.Values(ranges))), ", ")
	}
	return sel
}

// matchTask resolves one task argument: an id names that task; a name matches it in every
// selected project that has it. Under a selection narrowed by git (narrowed), a name that no
// selected project has is no refusal: none of its projects changed.
func matchTask(ws *graph.Workspace, projects map[string]bool, arg string, opts SelectOptions, narrowed bool) ([]string, error) {
	if task, ok := strings.CutPrefix(arg, RootAlias+"#"); ok {
		root := RootProject(ws)
		if root == nil {
			return nil, vxerr.Usagef("task id %q: the workspace folder is no project (add '.' to projects)", arg)
		}
		arg = graph.TaskID(root.Name, task)
	}
	if strings.Contains(arg, "#") {
		if _, _, ok := graph.SplitTaskID(arg); !ok {
			return nil, vxerr.Usagef("task id %q is missing a half (write project#task)", arg)
		}
		if _, ok := ws.Task(arg); !ok {
			return nil, vxerr.Usagef("unknown task %q%s", arg, DidYouMean(arg, ws.TaskIDs()))
		}
		return []string{arg}, nil
	}
	var ids []string
	exists := false
	for _, p := range ws.Projects {
		if p.Tasks[arg] == nil {
			continue
		}
		exists = true
		if projects[p.Name] {
			ids = append(ids, graph.TaskID(p.Name, arg))
		}
	}
	if !exists {
		return nil, vxerr.Usagef("unknown task %q: no project declares it%s", arg, DidYouMean(arg, TaskNames(ws)))
	}
	if len(ids) == 0 && len(opts.Filters) > 0 && !narrowed {
		return nil, vxerr.Usagef("no project selected by --filter %s has task %q", strings.Join(opts.Filters, " --filter "), arg)
	}
	return ids, nil
}

// RootProject is the project of the workspace folder itself (RootAlias names it), nil when the
// workspace has none.
func RootProject(ws *graph.Workspace) *graph.Project {
	for _, p := range ws.Projects {
		if p.Dir == "." {
			return p
		}
	}
	return nil
}

// filterProjects resolves the --filter values to the set of project names: the union of what the
// including filters select (every project when there is none), less what the exclusions select,
// and the git ranges the including filters were narrowed to (as "HEAD^" or "main...topic").
// Every value is parsed before any is resolved, so that a malformed one is named before git runs.
func filterProjects(ctx context.Context, ws *graph.Workspace, filters []string) (map[string]bool, []string, error) {
	var include, exclude []*selector
	for _, f := range filters {
		s, err := parseFilter(f)
		if err != nil {
			return nil, nil, err
		}
		if s.dir == ".." || strings.HasPrefix(s.dir, "../") {
			return nil, nil, vxerr.Usagef("--filter %q: the folder %s is outside the workspace", f, s.dir)
		}
		if s.exclude {
			exclude = append(exclude, s)
		} else {
			include = append(include, s)
		}
	}
	projects := map[string]bool{}
	if len(include) == 0 {
		for _, p := range ws.Projects {
			projects[p.Name] = true
		}
	}
	r := &resolver{ctx: ctx, ws: ws, changed: map[[2]string]map[string]string{}}
	var ranges []string
	for _, s := range include {
		names, err := r.resolve(s)
		if err != nil {
			return nil, nil, err
		}
		if s.fromRef != "" {
			ranges = append(ranges, s.rangeText())
		}
		for _, n := range names {
			projects[n] = true
		}
	}
	for _, s := range exclude {
		names, err := r.resolve(s)
		if err != nil {
			return nil, nil, err
		}
		for _, n := range names {
			delete(projects, n)
		}
	}
	return projects, ranges, nil
}

// selector is one parsed --filter value, in Turborepo's grammar (which pnpm's is too):
//
//	[!] [...[^]] ( ./PATH | NAME? {PATH}? ([REF] | [REF...REF] | ...[REF])? ) [[^]...]
//
// NAME is a glob of project names or tag:NAME; PATH a glob of project folders; REF a git ref.
type selector struct {
	raw string
	// exclude (!) removes what the selector selects from what the others select.
	exclude bool
	// withDeps (X...) adds the projects the matched ones depend on, withDependents (...X) the
	// projects that depend on them; excludeSelf (X^... or ...^X) leaves the matched ones out.
	withDeps, withDependents, excludeSelf bool
	// name is a glob of project names, or tag:NAME; "" matches every project.
	name string
	// dir is a glob of project folders relative to the workspace root ("" for none); dirAt and
	// dirEnd say where it is written in raw, so that RebaseFilters can rewrite it.
	dir           string
	dirAt, dirEnd int
	// fromRef (and toRef, for a range) keep the projects with files changed since fromRef.
	fromRef, toRef string
	// matchDeps (NAME...[REF]) keeps a matched project when it or any project it depends on
	// changed, instead of only when it changed itself.
	matchDeps bool
	// root (//, as Turborepo's //#task) matches the root project, the workspace folder itself.
	root bool
}

// RootAlias is how a filter or a task id names the root project whatever its name: --filter //,
// //#lint, as Turborepo names the root package.
const RootAlias = "//"

// selectorBody is what a filter holds inside its ! and ... marks: a name, a {folder} and a git
// range, each optional, in that order. A name cannot start or end with a dot, so that ./PATH and
// NAME... read unambiguously.
var selectorBody = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?P<name>[^.](?:[^{}\[\]]*[^{}\[\].])?)?(?:\{(?P<dir>[^}]*)\})?(?P<commits>(?:\.\.\.)?\[[^\]]*\])?$`)
})

// filterForms says, in one line, what a filter can be; errors about a malformed one end with it.
const filterForms = "write NAME, a glob, tag:NAME, ./PATH, {PATH}, [REF], or NAME{PATH}[REF], with ... or ^... after and ... or ...^ before, ! first to exclude"

// parseFilter parses one --filter value, naming what is wrong with a malformed one.
func parseFilter(raw string) (*selector, error) {
	if strings.TrimSpace(raw) == "" {
		return nil, vxerr.Usagef("--filter needs a value (a project name, a glob, tag:NAME, ./PATH, [REF], NAME... or ...NAME)")
	}
	unsupported := func(why string) error {
		return vxerr.Usagef("--filter %q: unsupported form (%s)", raw, why)
	}
	s := &selector{raw: raw}
	body, at := raw, 0
	if strings.HasPrefix(body, "!") {
		s.exclude, body, at = true, body[1:], 1
	}
	if strings.HasSuffix(body, "^...") {
		s.withDeps, s.excludeSelf, body = true, true, strings.TrimSuffix(body, "^...")
	} else if strings.HasSuffix(body, "...") {
		s.withDeps, body = true, strings.TrimSuffix(body, "...")
	}
	if strings.HasPrefix(body, "...^") {
		s.withDependents, s.excludeSelf, body, at = true, true, body[4:], at+4
	} else if strings.HasPrefix(body, "...") {
		s.withDependents, body, at = true, body[3:], at+3
	}
	switch {
	case body == "":
		return nil, vxerr.Usagef("--filter %q names no project: %s", raw, filterForms)
	case strings.HasPrefix(body, "!"):
		return nil, unsupported("! goes first, once: !NAME, !./PATH, !...NAME")
	case body == RootAlias:
		s.root = true
		return s, nil
	case body == "." || body == ".." || strings.HasPrefix(body, "./") || strings.HasPrefix(body, "../"):
		// A path: the whole body, globs included (turbo reads it so too).
		if strings.Contains(body, "...[") || strings.HasSuffix(body, "}") {
			return nil, unsupported("a path with a git range or braces: write {./PATH}[REF] or {./PATH}...[REF]")
		}
		if err := s.setDir(body, at, unsupported); err != nil {
			return nil, err
		}
		return s, nil
	case strings.HasPrefix(body, "/"):
		return nil, unsupported("an absolute path: write it relative, ./PATH")
	}
	m := selectorBody().FindStringSubmatchIndex(body)
	if m == nil {
		switch {
		case strings.Contains(body, ","):
			return nil, unsupported("a comma-separated list: repeat --filter, once per project")
		case strings.Count(body, "{") > 1 || strings.Count(body, "[") > 1:
			return nil, unsupported("one {PATH} and one [REF] at most")
		case strings.HasPrefix(body, ".") && !strings.HasPrefix(body, "..."):
			return nil, unsupported("a path starts with ./ or ../")
		}
		return nil, unsupported(filterForms)
	}
	group := func(name string) (string, int, int, bool) {
		i := selectorBody().SubexpIndex(name)
		start, end := m[2*i], m[2*i+1]
		if start < 0 {
			return "", 0, 0, false
		}
		return body[start:end], start, end, true
	}
	if name, _, _, ok := group("name"); ok {
		switch {
		case strings.Contains(name, ","):
			return nil, unsupported("a comma-separated list: repeat --filter, once per project")
		case strings.Contains(name, "^"):
			return nil, unsupported("^ goes with ...: NAME^... for what NAME depends on, ...^NAME for what depends on it")
		case strings.Contains(name, "!"):
			return nil, unsupported("! goes first, once: !NAME")
		case name == "tag:":
			return nil, vxerr.Usagef("--filter %q: tag: needs a tag name (tag:NAME)", raw)
		case !strings.HasPrefix(name, "tag:") && !doublestar.ValidatePattern(name):
			return nil, vxerr.Usagef("--filter %q is not a project name or glob", raw)
		}
		s.name = name
	}
	if dir, start, _, ok := group("dir"); ok {
		if dir == "" {
			return nil, unsupported("an empty {}: write {PATH}")
		}
		if strings.HasPrefix(dir, "/") {
			return nil, unsupported("an absolute path: write it relative, {./PATH}")
		}
		if err := s.setDir(dir, at+start, unsupported); err != nil {
			return nil, err
		}
	}
	if commits, _, _, ok := group("commits"); ok {
		if err := s.setCommits(commits, unsupported); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// setCommits records a filter's git range, [REF], [FROM...TO] or ...[REF].
func (s *selector) setCommits(commits string, unsupported func(string) error) error {
	if rest, found := strings.CutPrefix(commits, "..."); found {
		if s.name == "" && s.dir == "" {
			return unsupported("...[REF] after a NAME or {PATH} only: NAME...[REF] keeps NAME when it or what it depends on changed")
		}
		s.matchDeps, commits = true, rest
	}
	inner := strings.TrimSuffix(strings.TrimPrefix(commits, "["), "]")
	from, to, isRange := strings.Cut(inner, "...")
	switch {
	case strings.TrimSpace(inner) == "":
		return unsupported("an empty []: write [REF]")
	case from == "" || (isRange && to == ""):
		return unsupported("a range needs both ends: [FROM...TO]")
	case strings.ContainsAny(inner, " \t"):
		return unsupported("a git ref holds no space")
	case strings.HasPrefix(from, "-") || strings.HasPrefix(to, "-"):
		return unsupported("a git ref does not start with -")
	}
	s.fromRef, s.toRef = from, to
	return nil
}

// setDir records a folder glob written at raw[at:], cleaned and relative to the workspace root.
func (s *selector) setDir(p string, at int, unsupported func(string) error) error {
	clean := path.Clean(p)
	if !doublestar.ValidatePattern(clean) {
		return unsupported(fmt.Sprintf("%s is not a folder or a glob of folders", p))
	}
	s.dir, s.dirAt, s.dirEnd = clean, at, at+len(p)
	return nil
}

// matchesName reports whether the project matches the selector's name part.
func (s *selector) matchesName(p *graph.Project) bool {
	if s.root {
		return p.Dir == "."
	}
	if s.name == "" {
		return true
	}
	if tag, ok := strings.CutPrefix(s.name, "tag:"); ok {
		for _, t := range p.Tags {
			if t == tag {
				return true
			}
		}
		return false
	}
	return nameMatch(s.name, p.Name)
}

// nameMatch reports whether the project name matches the name glob as pnpm and Turborepo match
// it: a name is no path, so `*` crosses the `/` of a scope (`*` matches `@acme/ui`, `*ui` too).
func nameMatch(glob, name string) bool {
	const slash = "\x00"
	ok, _ := doublestar.Match(strings.ReplaceAll(glob, "/", slash), strings.ReplaceAll(name, "/", slash))
	return ok
}

// inFolder reports whether the project folder dir matches the glob, or lies below a folder that
// does: "./packages" and "./packages/*" both select packages/web, "." every project.
func inFolder(glob, dir string) bool {
	for d := dir; ; d = path.Dir(d) {
		if ok, _ := doublestar.Match(glob, d); ok {
			return true
		}
		if d == "." || d == "/" {
			return false
		}
	}
}

// resolver resolves selectors against one workspace, asking git once per range.
type resolver struct {
	ctx     context.Context
	ws      *graph.Workspace
	changed map[[2]string]map[string]string
}

// resolve answers the names of the projects a selector selects, sorted. A selector that selects
// nothing is refused, saying why when the reason is not the name; one whose projects did not
// change in its git range answers none.
func (r *resolver) resolve(s *selector) ([]string, error) {
	base := map[string]bool{}
	for _, p := range r.ws.Projects {
		if s.matchesName(p) && (s.dir == "" || inFolder(s.dir, p.Dir)) {
			base[p.Name] = true
		}
	}
	if len(base) == 0 {
		return nil, r.noMatch(s)
	}
	if s.fromRef != "" {
		changed, err := r.changedSince(s)
		if err != nil {
			return nil, err
		}
		for n := range base {
			keep := changed[n] != "" && !(s.matchDeps && s.excludeSelf)
			if !keep && s.matchDeps {
				for _, d := range projectClosure(r.ws, n, false) {
					if changed[d] != "" {
						keep = true
						break
					}
				}
			}
			if !keep {
				delete(base, n)
			}
		}
		if len(base) == 0 {
			return []string{}, nil // nothing changed: an answer (Selection.NothingAffected), not a refusal
		}
	}
	out := map[string]bool{}
	if !s.excludeSelf {
		for n := range base {
			out[n] = true
		}
	}
	for n := range base {
		if s.withDeps {
			for _, d := range projectClosure(r.ws, n, false) {
				out[d] = true
			}
		}
		if s.withDependents {
			for _, d := range projectClosure(r.ws, n, true) {
				out[d] = true
			}
		}
	}
	if len(out) == 0 {
		what := "depends on no project"
		if s.withDependents {
			what = "has no dependents"
		}
		return nil, vxerr.Usagef("--filter %q matches no project: %s %s", s.raw, strings.Join(slices.Sorted(maps.Keys(base)), ", "), what)
	}
	return append([]string{}, slices.Sorted(maps.Keys(out))...), nil
}

// noMatch is the refusal of a selector whose name and folder match no project. A name that is a
// project's folder gets a hint to write it as a path; a name or tag near a project's, that one.
func (r *resolver) noMatch(s *selector) error {
	if s.root {
		return vxerr.Usagef("--filter %q matches no project: the workspace folder is no project (add '.' to projects)", s.raw)
	}
	if s.name != "" && s.dir == "" && !strings.HasPrefix(s.name, "tag:") && strings.Contains(s.name, "/") {
		clean := path.Clean(s.name)
		for _, p := range r.ws.Projects {
			if inFolder(clean, p.Dir) {
				return vxerr.Usagef("--filter %q matches no project name (for the folder, write ./%s)", s.raw, clean)
			}
		}
	}
	hint := ""
	if s.name != "" && s.dir == "" && !strings.ContainsAny(s.name, "*?[{") {
		if tag, ok := strings.CutPrefix(s.name, "tag:"); ok {
			if best, ok := suggest.Closest(tag, projectTags(r.ws)); ok {
				hint = " (did you mean tag:" + best + "?)"
			}
		} else {
			hint = DidYouMean(s.name, projectNames(r.ws))
		}
	}
	return vxerr.Usagef("--filter %q matches no project%s", s.raw, hint)
}

// changedSince answers the projects with files changed in the selector's git range, each with
// the file that made it, computing each range once.
func (r *resolver) changedSince(s *selector) (map[string]string, error) {
	k := [2]string{s.fromRef, s.toRef}
	if c, ok := r.changed[k]; ok {
		return c, nil
	}
	files, _, err := changedFiles(r.ctx, r.ws.Root, s.fromRef, s.toRef, gitAsker{
		noRepo: fmt.Sprintf("--filter %q needs a git repository", s.raw),
		noRef:  fmt.Sprintf("--filter %q: no such git ref", s.raw),
	})
	if err != nil {
		return nil, err
	}
	c := changedProjects(r.ws, files, s.rangeText())
	r.changed[k] = c
	return c, nil
}

func (s *selector) rangeText() string {
	if s.toRef != "" {
		return s.fromRef + "..." + s.toRef
	}
	return s.fromRef
}

// RebaseFilters rewrites the folders written in filters (./PATH, {PATH}) from relative to dir
// (a folder relative to the workspace root) to relative to the root, as Select reads them: the CLI
// reads a path on its command line from the folder it was started in. A folder outside the
// workspace is refused as written; other filters, and those that do not parse (Select names
// what is wrong with them), come back as they were.
func RebaseFilters(filters []string, dir string) ([]string, error) {
	dir = path.Clean(dir)
	out := make([]string, len(filters))
	for i, f := range filters {
		out[i] = f
		s, err := parseFilter(f)
		if err != nil || s.dir == "" {
			continue
		}
		rebased := path.Join(dir, f[s.dirAt:s.dirEnd])
		if rebased == ".." || strings.HasPrefix(rebased, "../") {
			return nil, vxerr.Usagef("--filter %q: the folder %s is outside the workspace", f, f[s.dirAt:s.dirEnd])
		}
		if dir == "." {
			continue
		}
		if rebased != "." {
			rebased = "./" + rebased
		}
		out[i] = f[:s.dirAt] + rebased + f[s.dirEnd:]
	}
	return out, nil
}

// projectClosure lists the projects name depends on (or, reversed, that depend on it), transitively.
func projectClosure(ws *graph.Workspace, name string, dependents bool) []string {
	next := func(n string) []string {
		if !dependents {
			p, _ := ws.Project(n)
			return p.DependsOn
		}
		var out []string
		for _, p := range ws.Projects {
			for _, d := range p.DependsOn {
				if d == n {
					out = append(out, p.Name)
				}
			}
		}
		return out
	}
	seen := map[string]bool{name: true}
	queue := []string{name}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, d := range next(n) {
			if !seen[d] {
				seen[d] = true
				queue = append(queue, d)
			}
		}
	}
	delete(seen, name)
	return append([]string{}, slices.Sorted(maps.Keys(seen))...)
}

// Closure returns ids and every task they transitively depend on, in dependency order: each task
// after everything it depends on, ties broken by id.
func Closure(ws *graph.Workspace, ids []string) []string {
	in := map[string]bool{}
	var add func(id string)
	add = func(id string) {
		if in[id] {
			return
		}
		in[id] = true
		t, _ := ws.Task(id)
		for _, d := range t.DependsOn {
			add(d)
		}
	}
	for _, id := range ids {
		add(id)
	}
	pending := map[string]int{}
	dependents := map[string][]string{}
	for id := range in {
		t, _ := ws.Task(id)
		pending[id] = len(t.DependsOn)
		for _, d := range t.DependsOn {
			dependents[d] = append(dependents[d], id)
		}
	}
	ready := &idHeap{}
	for id, n := range pending {
		if n == 0 {
			heap.Push(ready, id)
		}
	}
	out := make([]string, 0, len(in))
	for ready.Len() > 0 {
		id := heap.Pop(ready).(string)
		out = append(out, id)
		for _, d := range dependents[id] {
			pending[d]--
			if pending[d] == 0 {
				heap.Push(ready, d)
			}
		}
	}
	if len(out) != len(in) {
		panic(fmt.Sprintf("workspace: dependency cycle among %d tasks survived resolution", len(in)-len(out)))
	}
	return out
}

// idHeap is a min-heap of task ids, so ready tasks come out in id order.
type idHeap []string

func (h idHeap) Len() int           { return len(h) }
func (h idHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h idHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *idHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *idHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
