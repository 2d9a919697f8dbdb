package taskenv

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/proc"
	"github.com/vzn/vx/proc/sandbox"
)

// SandboxOptions say how a run enforces the tasks' sandboxes.
type SandboxOptions struct {
	// Supervisor is the program a sandboxed task is supervised by, which applies its sandbox
	// (proc/sandbox's Main: vx-sandbox, or vx itself); nil enforces nothing: each sandboxed task
	// then runs with a warning, and one whose sandbox is required is refused.
	Supervisor *proc.Supervisor
	// Verdict answers what this host enforces; it is asked once, when the first sandboxed task
	// starts. nil means sandbox.Probe.
	Verdict func() sandbox.Verdict
	// Agent confines every task of the run, as mcp({ sandbox: true }) asks of the runs of an
	// agent (runTasks): the task's own sandbox narrowed to no network and writes to its outputs
	// only, and a default one where it declares none.
	Agent bool
}

// maxViolations bounds the violations kept for one task.
const maxViolations = 50

// Sandboxes is what a run knows of its tasks' sandboxes: how it enforces them, the host's verdict,
// and which tasks run now, so that a task is blamed only for what no other running task may write.
type Sandboxes struct {
	ws     *graph.Workspace
	opts   SandboxOptions
	notice func(taskID, msg string)

	once    sync.Once
	verdict sandbox.Verdict

	mu      sync.Mutex
	running []*Box
}

// NewSandboxes answers the sandboxes of a run of ws's tasks, enforced as opts says; notice shows
// vx's message about a task (a sandbox it cannot enforce).
func NewSandboxes(ws *graph.Workspace, opts SandboxOptions, notice func(taskID, msg string)) *Sandboxes {
	return &Sandboxes{ws: ws, opts: opts, notice: notice}
}

// Box is one running task as its sandbox sees it. A task without a sandbox has one too, with
// decl nil: it counts among the tasks that ran beside a sandboxed one.
type Box struct {
	s       *Sandboxes
	t       *graph.Task
	p       *graph.Project
	decl    *graph.Sandbox
	allowed []*pathglob.Set // what the task may write: its outputs and `write` globs
	writes  []string        // the same, as folders and files for Landlock
	reads   []string        // what a task that narrows its reads may read besides; nil when it reads all
	tmpDir  string
	before  map[string]fileStamp
	// beside are the tasks that ran at some moment while this one ran, of its project or of one
	// whose folder holds it or is inside it.
	beside []*Box
}

// Effective is the sandbox a task runs under: its declaration, narrowed for an agent's run.
// It is what enters the task's key.
func (s *Sandboxes) Effective(t *graph.Task) *graph.Sandbox {
	if !s.opts.Agent {
		return t.Sandbox
	}
	eff := &graph.Sandbox{} // no network, writes to the outputs only
	if t.Sandbox != nil {
		eff.Read, eff.Required = t.Sandbox.Read, t.Sandbox.Required
	}
	return eff
}

// hostVerdict answers what this host enforces, asked once.
func (s *Sandboxes) hostVerdict() sandbox.Verdict {
	s.once.Do(func() {
		probe := s.opts.Verdict
		if probe == nil {
			probe = sandbox.Probe
		}
		s.verdict = probe()
	})
	return s.verdict
}

// Start registers the task as running and, for a sandboxed one, prepares its sandbox into spec:
// its folders, a fresh TMPDIR, the supervisor that applies it, a listing of the project to compare
// with afterwards. It answers the message the task is refused with when its sandbox is required
// and this host cannot enforce it. The box's Finish must be called once the task ended.
func (s *Sandboxes) Start(p *graph.Project, t *graph.Task, spec *proc.Spec) (*Box, string) {
	b := &Box{s: s, t: t, p: p, decl: s.Effective(t)}
	if b.decl != nil {
		if msg := b.prepare(spec); msg != "" {
			return nil, msg
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.running {
		if sharesFolder(o.p.AbsDir, p.AbsDir) {
			o.beside = append(o.beside, b)
			b.beside = append(b.beside, o)
		}
	}
	s.running = append(s.running, b)
	return b, ""
}

// sharesFolder reports whether one of two project folders holds the other (or they are one):
// tasks of both may write the same files.
func sharesFolder(a, b string) bool {
	sep := string(filepath.Separator)
	return a == b || strings.HasPrefix(a, b+sep) || strings.HasPrefix(b, a+sep)
}

// prepare readies a sandboxed task's sandbox into spec (Start); it answers the refusal of a
// required sandbox this host cannot enforce.
func (b *Box) prepare(spec *proc.Spec) string {
	s, t, p := b.s, b.t, b.p
	ws := s.ws
	v := s.hostVerdict()
	missing := v.Missing(b.decl.Network)
	sup := s.opts.Supervisor
	if sup == nil && missing == "" {
		missing = "this vx was started without a sandbox helper"
	}
	if missing != "" && b.decl.Required {
		return fmt.Sprintf("vx: %s: its sandbox is required, and this host cannot enforce it: %s\n", t.ID, missing)
	}
	if missing != "" {
		s.notice(t.ID, "vx: sandbox not enforced: "+missing)
	}
	for _, globs := range [][]string{t.Outputs, b.decl.Write} {
		set, err := pathglob.NewSet(p.Dir, globs)
		if err != nil || set.Empty() {
			continue
		}
		b.allowed = append(b.allowed, set)
		b.writes = append(b.writes, writeFolders(ws.Root, p.Dir, globs)...)
	}
	dir, err := os.MkdirTemp("", "vx-task-")
	if err == nil {
		b.tmpDir = dir
		b.writes = append(b.writes, dir)
		// Replaced, not appended: with a name twice, getenv(3) answers the first.
		env := make([]string, 0, len(spec.Env)+3)
		for _, kv := range spec.Env {
			if name, _, _ := strings.Cut(kv, "="); name != "TMPDIR" && name != "TMP" && name != "TEMP" {
				env = append(env, kv)
			}
		}
		spec.Env = append(env, "TMPDIR="+dir, "TMP="+dir, "TEMP="+dir)
	}
	policy := sandbox.Policy{Write: b.writes, Network: b.decl.Network}
	if b.decl.Read != nil { // `read: []` narrows too, to what read grants without globs of its own
		policy.NarrowRead = true
		policy.Read = b.readPaths(spec.Env)
		b.reads = policy.Read
	}
	if sup != nil && (v.Enforced.Filesystem || v.Enforced.Network) {
		spec.Supervisor = &proc.Supervisor{Path: sup.Path, Name: sup.Name, Args: sandbox.Args(policy), Attr: sandbox.Attr(policy, v)}
	}
	b.before = b.listProject()
	return ""
}

// writeFolders are the folders (made here when missing: a Landlock rule needs a path that exists,
// and the task may not make it in its parent) under which globs' files lie: the fixed leading part
// of a pattern, and for a literal path the file's own folder.
func writeFolders(root, dir string, globs []string) []string {
	var out []string
	for _, g := range globs {
		parsed, err := pathglob.Parse(g)
		if err != nil || parsed.Negated || parsed.Pattern == pathglob.Default {
			continue
		}
		pattern := parsed.FromRoot(dir)
		base := pattern
		if strings.ContainsAny(pattern, "*?[{\\") {
			base, _ = doublestar.SplitPattern(pattern)
		}
		folder := filepath.Join(root, filepath.FromSlash(base))
		if base == pattern {
			// A literal path: the file, or the folder it is to be created in.
			if fi, err := os.Stat(folder); err != nil || !fi.IsDir() {
				folder = filepath.Dir(folder)
			}
		}
		_ = os.MkdirAll(folder, 0o777)
		out = append(out, folder)
	}
	return out
}

// readPaths are what a task that narrows its reads may read: its project, its inputs' and `read`
// globs' folders, node_modules, the system's toolchain folders and those its PATH names
// (pathReadDirs).
func (b *Box) readPaths(env []string) []string {
	ws, p, t := b.s.ws, b.p, b.t
	paths := []string{p.AbsDir, filepath.Join(ws.Root, "node_modules"), filepath.Join(p.AbsDir, "node_modules")}
	for _, globs := range [][]string{t.Inputs, b.decl.Read} {
		if set, err := pathglob.NewSet(p.Dir, globs); err == nil {
			for _, base := range set.Bases() {
				paths = append(paths, filepath.Join(ws.Root, filepath.FromSlash(base)))
			}
		}
	}
	// Node and the like read the package.json of every folder above the project.
	for dir := p.AbsDir; ; dir = filepath.Dir(dir) {
		paths = append(paths, filepath.Join(dir, "package.json"))
		if dir == ws.Root || dir == filepath.Dir(dir) {
			break
		}
	}
	paths = append(paths, sandbox.SystemReadDirs()...)
	return append(paths, pathReadDirs(env)...)
}

// pathReadDirs are what a task that narrows its reads may read for its PATH. Each absolute PATH
// folder is granted whole, unless granting it whole would grant more than programs (broadFolder):
// then only the programs in it are. Of a PATH folder's parent, its folders are granted (a
// toolchain's lib/ beside its bin/), never its own files (~/.cargo/credentials.toml beside
// ~/.cargo/bin), and nothing when that parent is itself a broad folder: with PATH=/usr/bin:/bin,
// /usr/bin, /bin and /usr's folders, not /; with ~/bin, not ~.
func pathReadDirs(env []string) []string {
	var path, home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		} else if v, ok := strings.CutPrefix(kv, "HOME="); ok && filepath.IsAbs(v) {
			home = filepath.Clean(v)
		}
	}
	var out []string
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		dir = filepath.Clean(dir)
		if broadFolder(dir, home) {
			out = append(out, entriesOf(dir, isProgram)...)
		} else {
			out = append(out, dir)
		}
		if parent := filepath.Dir(dir); parent != dir && !broadFolder(parent, home) {
			out = append(out, entriesOf(parent, isFolder)...)
		}
	}
	return out
}

// broadFolder reports whether granting dir whole grants more than a toolchain: dir is /, holds
// $HOME (or is it), or is a top-level folder that is not among the system's
// (sandbox.SystemReadDirs: /home, /tmp, /root, /srv are not).
func broadFolder(dir, home string) bool {
	sep := string(filepath.Separator)
	switch {
	case filepath.Dir(dir) == dir:
		return true
	case home != "" && (home == dir || strings.HasPrefix(home, dir+sep)):
		return true
	}
	return filepath.Dir(dir) == sep && !slices.Contains(sandbox.SystemReadDirs(), dir)
}

// entriesOf are the paths of the entries of dir that keep answers true for; none when dir cannot
// be listed.
func entriesOf(dir string, keep func(path string, e fs.DirEntry) bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if path := filepath.Join(dir, e.Name()); keep(path, e) {
			out = append(out, path)
		}
	}
	return out
}

// isFolder reports whether a folder's entry is a folder itself, not a link to one (which could
// lead anywhere).
func isFolder(_ string, e fs.DirEntry) bool { return e.IsDir() }

// isProgram reports whether a folder's entry is a program: a regular file, or a link to one, that
// may be executed.
func isProgram(path string, _ fs.DirEntry) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// fileStamp is what tells a file changed.
type fileStamp struct {
	size  int64
	mtime time.Time
	mode  fs.FileMode
}

// listProject stamps every file of the task's project folder, but for node_modules, .git, the
// state folder and the folders of other projects inside it (their own tasks answer for those).
func (b *Box) listProject() map[string]fileStamp {
	ws := b.s.ws
	skip := map[string]bool{ws.CacheDir: true}
	for _, o := range ws.Projects {
		if o.AbsDir != b.p.AbsDir && strings.HasPrefix(o.AbsDir, b.p.AbsDir+string(filepath.Separator)) {
			skip[o.AbsDir] = true
		}
	}
	stamps := map[string]fileStamp{}
	_ = filepath.WalkDir(b.p.AbsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if path != b.p.AbsDir && (skip[path] || d.Name() == "node_modules" || d.Name() == ".git") {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(ws.Root, path)
		if err != nil {
			return nil
		}
		stamps[filepath.ToSlash(rel)] = fileStamp{size: fi.Size(), mtime: fi.ModTime(), mode: fi.Mode()}
		return nil
	})
	return stamps
}

// Finish ends the task's part in the run's sandboxes and answers its violations: the paths its
// output says it was denied (when it failed: an EACCES line of a task that passed is its own
// business), and the files of its project it changed outside what it may write (changedOutside).
func (b *Box) Finish(passed bool, log []byte) []string {
	if b == nil {
		return nil
	}
	st := b.s
	st.mu.Lock()
	if i := slices.Index(st.running, b); i >= 0 {
		st.running = slices.Delete(st.running, i, i+1)
	}
	beside := slices.Clone(b.beside)
	st.mu.Unlock()
	if b.decl == nil {
		return nil
	}
	if b.tmpDir != "" {
		defer os.RemoveAll(b.tmpDir)
	}
	var found []string
	if !passed {
		found = append(found, b.denied(log)...)
	}
	found = append(found, b.changedOutside(beside)...)
	slices.Sort(found)
	found = slices.Compact(found)
	if len(found) > maxViolations {
		found = append(found[:maxViolations], fmt.Sprintf("… and %d more", len(found)-maxViolations))
	}
	return found
}

// changedOutside lists the files of the task's project it created, changed or removed outside
// what it, or a sandboxed task running beside it, may write. Nothing is compared while a task
// without a sandbox, of this project or of one whose folder holds it, ran beside it: that one may
// have written anything here. (One of a project inside this one writes in its own folder, which
// is not listed.)
func (b *Box) changedOutside(beside []*Box) []string {
	for _, o := range beside {
		if o.decl == nil && (o.p.AbsDir == b.p.AbsDir || strings.HasPrefix(b.p.AbsDir, o.p.AbsDir+string(filepath.Separator))) {
			return nil
		}
	}
	if b.before == nil {
		return nil
	}
	after := b.listProject()
	mayWrite := func(rel string) bool {
		for _, x := range append([]*Box{b}, beside...) {
			for _, set := range x.allowed {
				if set.Match(rel) {
					return true
				}
			}
		}
		return false
	}
	var found []string
	for rel, s := range after {
		if old, ok := b.before[rel]; (!ok || old != s) && !mayWrite(rel) {
			what := "changed"
			if !ok {
				what = "created"
			}
			found = append(found, fmt.Sprintf("%s: %s outside the task's outputs", rel, what))
		}
	}
	for rel := range b.before {
		if _, ok := after[rel]; !ok && !mayWrite(rel) {
			found = append(found, fmt.Sprintf("%s: removed outside the task's outputs", rel))
		}
	}
	return found
}

// deniedPath finds, in a task's output, the paths a program says it was denied, as Node, the
// shells and coreutils, Python and Go word it. Compiled on first use, not when vx starts.
var deniedPath = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`EACCES: permission denied, \w+ '([^'\n]+)'`),
		regexp.MustCompile(`cannot \w+(?: \w+){0,2} '?([^'\n]+?)'?: Permission denied`),
		regexp.MustCompile(`Permission denied: '([^'\n]+)'`),
		regexp.MustCompile(`(?:open|mkdir|remove|rename|create|symlink|link) ([^\s:]+): permission denied`),
		regexp.MustCompile(`(?m)^[^:\n]*sh: (?:line )?\d+: (?:cannot \w+ )?([^:\n]+): Permission denied`),
		regexp.MustCompile(`(?m)^[\w.+-]+: '?([^:'\n]+?)'?: Permission denied`),
	}
})

// deniedConnect finds a connection the sandbox refused.
var deniedConnect = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`connect (?:EACCES|ENETUNREACH) (\S+)`),
		regexp.MustCompile(`dial (?:tcp|udp) (\S+): connect: (?:permission denied|network is unreachable)`),
		regexp.MustCompile(`Failed to connect to (\S+ port \d+)`),
	}
})

// denied answers the paths and connections the task's output says it was denied that only the
// sandbox denies: a path outside what a task that narrows its reads may read is a read denied (it
// exists and vx could read it), else one outside what it may write is a write denied (vx could
// write it); a refused connection when it has no network.
func (b *Box) denied(log []byte) []string {
	ws := b.s.ws
	text := string(log)
	var found []string
	for _, re := range deniedPath() {
		for _, m := range re.FindAllStringSubmatch(text, maxViolations) {
			path := m[1]
			if !filepath.IsAbs(path) {
				path = filepath.Join(b.p.AbsDir, path)
			}
			path = filepath.Clean(path)
			what := "write"
			switch {
			case b.mayWrite(path):
				continue // denied by something else than the sandbox
			case b.reads != nil && !b.mayRead(path) && sandbox.Readable(path):
				what = "read"
			case !sandbox.Writable(path):
				continue
			}
			shown := path
			if rel, err := filepath.Rel(ws.Root, path); err == nil && !strings.HasPrefix(rel, "..") {
				shown = filepath.ToSlash(rel)
			}
			found = append(found, shown+": "+what+" denied by the sandbox")
		}
	}
	if !b.decl.Network {
		for _, re := range deniedConnect() {
			for _, m := range re.FindAllStringSubmatch(text, maxViolations) {
				found = append(found, "connect "+strings.TrimRight(m[1], ".,:")+": network denied by the sandbox")
			}
		}
	}
	return found
}

// mayWrite reports whether the sandbox lets the task write the absolute path.
func (b *Box) mayWrite(path string) bool {
	for _, w := range b.writes {
		if path == w || strings.HasPrefix(path, w+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// mayRead reports whether the sandbox lets a task that narrows its reads read the absolute path.
func (b *Box) mayRead(path string) bool {
	for _, r := range slices.Concat(b.reads, b.writes, sandbox.Devices()) {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
