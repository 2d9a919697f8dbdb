// Package initplan answers `vx init`: it reads an existing JavaScript or TypeScript monorepo — its
// package manager, its workspace packages, and its Turborepo or Nx config or else its package
// scripts — and plans the vx config that runs the same tasks: the files to write with their text,
// what could not be translated (todos, each naming the source file and key), notes, and the commands
// to run next. Without --dry the plan is carried out: each file written atomically, an existing file
// kept unless forced.
package initplan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// Modes of `vx init --mode`.
const (
	ModeAuto    = "auto"
	ModeTurbo   = "turbo"
	ModeNx      = "nx"
	ModeScripts = "scripts"
)

// File statuses in a plan.
const (
	// StatusNew is a file that does not exist yet: it is (or, dry, would be) written.
	StatusNew = "new"
	// StatusKept is a file that exists and is left as it is (no --force, or already the planned text).
	StatusKept = "kept"
	// StatusReplaced is an existing file that --force overwrites with the planned text.
	StatusReplaced = "replaced"
	// StatusUpdated is an existing file vx init adds lines to, --force or not (.gitignore gets
	// .vx/).
	StatusUpdated = "updated"
)

// Options say how to plan.
type Options struct {
	// Dir is where vx init was started; the repository root is found from it.
	Dir string
	// Mode is auto (or ""), turbo, nx or scripts.
	Mode string
	// Dry plans and writes nothing.
	Dry bool
	// Force replaces existing files.
	Force bool
}

// Plan is the answer of `vx init`, and its --format json document: the original's (dry, source,
// files with their contents, kept, replaced, todos with a reason and tasks, notes, next) and vx's
// own (mode, packageManager, projects, each file's status, each todo's file, key and projects,
// every next command).
type Plan struct {
	// Mode is where the tasks came from: turbo, nx or scripts.
	Mode string `json:"mode"`
	// Source says it in words: turbo.json, the nx graph, or package.json scripts.
	Source string `json:"source"`
	// PackageManager runs the package scripts: npm, pnpm, yarn or bun.
	PackageManager string `json:"packageManager"`
	// Dry is true when nothing was written.
	Dry bool `json:"dry"`
	// Projects lists the projects the config declares.
	Projects []PlannedProject `json:"projects"`
	// Files lists the files of the plan: the workspace config first, then each project config.
	Files []File `json:"files"`
	// Todos lists what could not be translated.
	Todos []Todo `json:"todos"`
	// Notes explain choices made while translating.
	Notes []string `json:"notes"`
	// Kept and Replaced list the paths of the files the plan keeps as they are and those it
	// replaces (Derive fills them from Files).
	Kept     []string `json:"kept"`
	Replaced []string `json:"replaced"`
	// NextCommand is the command to type after the real run (Derive picks it from Next); null
	// when the plan names none.
	NextCommand *string `json:"next"`
	// Next lists the commands to run next.
	Next []string `json:"nextCommands"`
}

// Derive fills the fields that restate others: Source from Mode, Kept and Replaced from the
// files' statuses, NextCommand from Next, each todo's reason and tasks. Init calls it; a caller
// that adds files or todos to a plan calls it again.
func (p *Plan) Derive() {
	p.Source = map[string]string{"turbo": "turbo.json", "nx": "nx graph"}[p.Mode]
	if p.Source == "" {
		p.Source = "package.json scripts"
	}
	p.Kept, p.Replaced = []string{}, []string{}
	for _, f := range p.Files {
		switch f.Status {
		case "kept":
			p.Kept = append(p.Kept, f.Path)
		case "replaced":
			p.Replaced = append(p.Replaced, f.Path)
		}
	}
	p.NextCommand = nil
	if i := slices.Index(p.Next, "vx init"); i+1 < len(p.Next) {
		p.NextCommand = &p.Next[i+1]
	}
	for i := range p.Todos {
		p.Todos[i].derive()
	}
}

// PlannedProject is one project as the planned config declares it.
type PlannedProject struct {
	Name string `json:"name"`
	// Dir is the project folder relative to the root.
	Dir string `json:"dir"`
	// Tasks lists the project's task names, sorted.
	Tasks []string `json:"tasks"`
}

// File is one file of the plan.
type File struct {
	// Path is relative to the repository root, with forward slashes.
	Path string `json:"path"`
	// Text is the planned content (for a kept file: what --force would write): the original's
	// contents.
	Text string `json:"contents"`
	// Status is new, kept, replaced or updated.
	Status string `json:"status"`
	// addsLines is true for a file vx init adds to, keeping what it holds (.gitignore): it is
	// written whatever --force says.
	addsLines bool
}

// Todo is something vx init could not translate: where it is and what to do about it.
type Todo struct {
	// File is the source file, relative to the root ("turbo.json", "apps/web/project.json").
	File string `json:"file"`
	// Key is the path of the untranslated key in that file ("tasks.dev.persistent").
	Key string `json:"key"`
	// Message says what was left out and what to do.
	Message string `json:"message"`
	// Projects names the projects the todo applies to, when it is one project's or several's: one
	// todo stands for the same finding in each of them.
	Projects []string `json:"projects,omitempty"`
	// Reason is Message, and Tasks the project#task ids the todo names (its key's task in each of
	// its projects), under the original's names.
	Reason string   `json:"reason"`
	Tasks  []string `json:"tasks"`
}

// derive fills Reason and Tasks: a key tasks.NAME.… or targets.NAME.… names task NAME.
func (t *Todo) derive() {
	t.Reason, t.Tasks = t.Message, []string{}
	parts := strings.Split(t.Key, ".")
	if len(parts) < 2 || parts[0] != "tasks" && parts[0] != "targets" && parts[0] != "pipeline" {
		return
	}
	name := parts[1]
	if _, task, ok := strings.Cut(name, "#"); ok {
		t.Tasks = append(t.Tasks, name)
		name = task
	}
	for _, project := range t.Projects {
		if id := project + "#" + name; !slices.Contains(t.Tasks, id) {
			t.Tasks = append(t.Tasks, id)
		}
	}
}

// Init plans vx's config for the repository around opts.Dir and, unless opts.Dry, writes it.
func Init(opts Options) (*Plan, error) {
	mode := opts.Mode
	if mode == "" {
		mode = ModeAuto
	}
	switch mode {
	case ModeAuto, ModeTurbo, ModeNx, ModeScripts:
	default:
		return nil, vxerr.Usagef("--mode %q: want auto, turbo, nx or scripts", opts.Mode)
	}
	root, err := findRoot(opts.Dir)
	if err != nil {
		return nil, err
	}
	r, err := scanRepo(root)
	if err != nil {
		return nil, err
	}
	turboFile, turboScript := r.turboConfig()
	if mode == ModeAuto {
		switch {
		case turboFile != "":
			mode = ModeTurbo
		case exists(filepath.Join(root, "nx.json")):
			mode = ModeNx
		default:
			mode = ModeScripts
		}
	}
	switch {
	case mode == ModeTurbo && turboFile == "":
		return nil, vxerr.Usagef("--mode turbo: no turbo.json or turbo.jsonc in %s, and no package.json script names --root-turbo-json", root)
	case mode == ModeNx && !exists(filepath.Join(root, "nx.json")):
		return nil, vxerr.Usagef("--mode nx: no nx.json in %s", root)
	}
	b := newBuilder(r, mode)
	switch mode {
	case ModeTurbo:
		err = b.fromTurbo(turboFile, turboScript)
	case ModeNx:
		err = b.fromNx()
	default:
		err = b.fromScripts()
	}
	if err != nil {
		return nil, err
	}
	plan := b.plan()
	plan.Dry = opts.Dry
	if f, ok := stateIgnoreFile(r); ok {
		plan.Files = append(plan.Files, f)
		plan.Notes = append(plan.Notes, ".gitignore: .vx/ added (vx's state folder: the cache and the run history, never committed, and never a change --affected counts)")
	}
	if err := settle(root, plan, opts); err != nil {
		return nil, err
	}
	plan.Next = next(r, plan, opts.Dry)
	plan.Derive()
	return plan, nil
}

// rootMarkers are the files that mark the root of a JavaScript monorepo, looked for upward.
var rootMarkers = []string{"turbo.json", "turbo.jsonc", "nx.json", "pnpm-workspace.yaml"}

// findRoot is the folder vx init works on: the vx workspace around dir when there is one, else the
// nearest ancestor that is a monorepo root (turbo.json(c), nx.json, pnpm-workspace.yaml, or a package.json
// with workspaces), else dir itself.
func findRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("vx init in %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", vxerr.Usagef("vx init: %s is not a folder", abs)
	}
	if root, err := workspace.FindRoot(abs); err == nil {
		return root, nil
	}
	for d := abs; ; {
		for _, m := range rootMarkers {
			if exists(filepath.Join(d, m)) {
				return d, nil
			}
		}
		var pkg packageJSON
		if ok, _ := readJSON(d, "package.json", &pkg); ok && len(pkg.Workspaces) > 0 && string(pkg.Workspaces) != "null" {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs, nil
		}
		d = parent
	}
}

// settle gives each file its status and, unless dry, writes the new and replaced ones.
func settle(root string, plan *Plan, opts Options) error {
	for i := range plan.Files {
		f := &plan.Files[i]
		abs := filepath.Join(root, filepath.FromSlash(f.Path))
		old, err := os.ReadFile(abs)
		switch {
		case errors.Is(err, os.ErrNotExist):
			f.Status = StatusNew
		case err != nil:
			return fmt.Errorf("vx init: read %s: %w", f.Path, err)
		case f.addsLines:
			f.Status = StatusUpdated
		case string(old) == f.Text || !opts.Force:
			f.Status = StatusKept
		default:
			f.Status = StatusReplaced
		}
	}
	if ws := plan.Files[0]; ws.Status == StatusKept && !opts.Force {
		plan.Notes = append(plan.Notes, fmt.Sprintf("%s exists and is kept (--force replaces it); the project files were planned against the planned %s",
			workspace.ConfigFileName, workspace.ConfigFileName))
	}
	if opts.Dry {
		return nil
	}
	for _, f := range plan.Files {
		if f.Status == StatusKept {
			continue
		}
		if err := writeFileAtomic(filepath.Join(root, filepath.FromSlash(f.Path)), []byte(f.Text)); err != nil {
			return fmt.Errorf("vx init: %w", err)
		}
	}
	return nil
}

// next lists the commands that follow the plan: first, where the repository's package.json does
// not list it yet, the one that adds vx to its dev dependencies.
func next(r *repo, plan *Plan, dry bool) []string {
	var cmds []string
	install := installStep(r)
	if install != "" {
		cmds = append(cmds, install)
		cmds = append(cmds, unpublishedSteps(r)...)
	}
	if dry {
		cmds = append(cmds, "vx init")
	}
	cmds = append(cmds, "vx show")
	if t := firstTask(plan); t != "" {
		cmds = append(cmds, "vx run "+t)
	}
	cmds = append(cmds, "vx lock")
	paths := make([]string, 0, len(plan.Files)+1)
	for _, f := range plan.Files {
		paths = append(paths, f.Path)
	}
	paths = append(paths, "vx.lock")
	if install != "" {
		paths = append(paths, installedFiles(r)...)
	}
	cmds = append(cmds, "git add "+strings.Join(paths, " "))
	return cmds
}

// firstTask picks the task to suggest running: build when some project has it, else the first task.
func firstTask(plan *Plan) string {
	first := ""
	for _, p := range plan.Projects {
		for _, t := range p.Tasks {
			if t == "build" {
				return t
			}
			if first == "" || t < first {
				first = t
			}
		}
	}
	return first
}

// stateIgnoreFile plans the root .gitignore with .vx/ added, so that vx's state folder is never
// committed nor counted as a change; false when .gitignore names it already or git ignores it by
// another rule. The line goes on a line of its own, after what the file holds.
func stateIgnoreFile(r *repo) (File, bool) {
	data, err := os.ReadFile(filepath.Join(r.root, ".gitignore"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		data = nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Trim(strings.TrimSpace(line), "/") == ".vx" {
			return File{}, false
		}
	}
	if r.gitIgnored([]string{".vx"})[".vx"] {
		return File{}, false
	}
	text := string(data)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n" // .vx/ glued onto the last line would ignore nothing
	}
	return File{Path: ".gitignore", Text: text + ".vx/\n", addsLines: true}, true
}

// writeFileAtomic writes data to a temp file beside path and renames it over path, so a reader sees
// the old file or the new one, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, atomicfile.Perm(0o644)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
