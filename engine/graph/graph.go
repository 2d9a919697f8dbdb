// Package graph holds the resolved model of a vx workspace: its projects, their tasks with every
// field resolved, and the task dependency graph. It is built from evaluated config by Build and is
// read-only afterwards: every verb of the engine reads it, none changes it.
package graph

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Origin says where a value came from: the config file (relative to the workspace root) and the
// 1-based line that set it. A zero Line means the whole file (or a default, when File is empty).
type Origin struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Col is the 1-based column, for errors; String leaves it out.
	Col int `json:"-"`
}

// String renders the origin as file:line, "default" for a built-in default.
func (o Origin) String() string {
	switch {
	case o.File == "":
		return "default"
	case o.Line == 0:
		return o.File
	default:
		return fmt.Sprintf("%s:%d", o.File, o.Line)
	}
}

// EnvValue is one exec.env entry: a literal value, or a secret read from the environment at run time
// under the name Secret. A secret's value never appears in any answer: it reads "***".
type EnvValue struct {
	Value  string `json:"value,omitempty"`
	Secret string `json:"secret,omitempty"`
}

// Sandbox is a task's declared sandbox, which the runner enforces (proc/sandbox): writes only to
// the outputs and Write, reads only beneath Read when it is set, no network unless Network.
type Sandbox struct {
	Network bool `json:"network"`
	// Read is nil when not declared; `read: []` (empty, not nil) narrows reads too, and encodes
	// (so hashes) apart from nil.
	Read  []string `json:"read,omitzero"`
	Write []string `json:"write,omitempty"`
	// Required refuses to run the task where the host cannot enforce the sandbox, rather than
	// run it with a warning.
	Required bool `json:"required,omitempty"`
}

// Task is one resolved task of one project.
type Task struct {
	// ID is "project#task".
	ID      string `json:"id"`
	Project string `json:"project"`
	Name    string `json:"name"`
	Command string `json:"command"`
	// Description is free text for people and agents.
	Description string `json:"description,omitempty"`
	// DependsOnSpec holds dependsOn as declared (`^build`, `lint`, `lib#build`).
	DependsOnSpec []string `json:"-"`
	// DependsOn holds the resolved task ids this task waits for, sorted.
	DependsOn []string `json:"dependsOn"`
	// Through holds, sorted, the projects a `^task` dependency passed through because they lack
	// the task: their files enter this task's key. Nil for none.
	Through []string `json:"-"`
	// DependencyFiles holds, sorted, the projects this task's project depends on, transitively,
	// whose git-visible files enter its key because its inputs name DependencyDefault. Nil for none.
	DependencyFiles []string `json:"-"`
	// Inputs are globs relative to the project folder. Nil means the default: every file of the
	// project that git does not ignore.
	Inputs []string `json:"inputs"`
	// Outputs are globs relative to the project folder.
	Outputs []string `json:"outputs"`
	// Env holds environment variable names whose values enter the cache key.
	Env []string `json:"env"`
	// ExecEnv holds the environment given to the command (values or secrets), by variable name.
	ExecEnv map[string]EnvValue `json:"-"`
	// PassThroughEnv holds names (a trailing or inner * matches any run of characters; a leading !
	// excludes) of variables the command sees without their values entering the cache key, as
	// Turborepo's passThroughEnv.
	PassThroughEnv []string `json:"passThroughEnv,omitempty"`
	// EnvMode is "strict" (the command sees only what is declared), "loose" (it sees all of vx's
	// environment) or "" for the workspace's mode.
	EnvMode string `json:"envMode,omitempty"`
	// Cache is false for tasks that never hit the cache.
	Cache bool `json:"cache"`
	// Timeout is zero for none; TimeoutSpec is the value as declared ("2m").
	Timeout     time.Duration `json:"-"`
	TimeoutSpec string        `json:"-"`
	// Sandbox is nil when the task declares none.
	Sandbox *Sandbox `json:"sandbox"`
	// Persistent marks a long-running task (a dev server, a watcher): never cached, never part of
	// --all, refused by runTasks; a task depending on it gets it started first and stopped when
	// every dependent has finished.
	Persistent bool `json:"persistent,omitempty"`
	// Interruptible lets vx watch restart a persistent task when its key moves (Turborepo's
	// interruptible); one that is not keeps running with its own reload.
	Interruptible bool `json:"interruptible,omitempty"`
	// All is false for a task that --all leaves out (a clean-up script); it still runs by name.
	All bool `json:"-"`
	// IfScript, on a workspace task, gives the task only to projects whose package.json defines a
	// script of the task's name (Turborepo's rule).
	IfScript bool `json:"-"`
	// Scripts holds the package.json scripts the command runs (`npm run build`, `pnpm build`, …):
	// script name → its text. They enter the cache key and the lock.
	Scripts map[string]string `json:"-"`
	// Origins says where each field's value was set.
	Origins Origins `json:"-"`
	// Retries is exec.retries: how many times a failed run of the command is tried again in
	// the same run (0 for none). It is not part of the key.
	Retries int `json:"-"`
	// RemoteExec is exec.remote: true sends the task to the remote executor, false keeps it on
	// this machine, nil leaves it to remote.execute.
	RemoteExec *bool `json:"remoteExec,omitempty"`
	// Rewrites are globs, relative to the project folder, of input files the command writes
	// itself (tshy writes its package.json on every build): after it ran, such a file has moved
	// only when its content is no longer the content the key took. Not part of the key.
	Rewrites []string `json:"rewrites,omitempty"`
	// ReadyWhen, on a persistent task, gates its dependents on its readiness: they start once
	// any condition it gives holds; nil means they start as soon as its command does.
	ReadyWhen *ReadyWhen `json:"readyWhen,omitempty"`
	// RuntimeInputs are commands (`node -v`) whose trimmed standard output enters the task's
	// key: a probe of the tools the task runs with, beside the workspace's GlobalRuntimeInputs.
	RuntimeInputs []string `json:"runtimeInputs,omitempty"`
	// Interactive marks a task that reads the terminal (a prompt, a login): its command gets
	// vx's stdin, it is never cached, no other task runs while it does, and runTasks refuses it.
	Interactive bool `json:"interactive,omitempty"`
}

// ReadyWhen is a persistent task's readiness gate: it is ready once any condition given holds,
// and not ready (stopped, its dependents blocked) when none held within Timeout.
type ReadyWhen struct {
	// Log is a text (not a pattern) that a line of the task's output holds, colours removed.
	Log string `json:"log,omitempty"`
	// Port is a TCP port on localhost that accepts a connection; 0 for none.
	Port int `json:"port,omitempty"`
	// Timeout bounds the wait (DefaultReadyTimeout when not declared); TimeoutSpec is the
	// value as declared.
	Timeout     time.Duration `json:"-"`
	TimeoutSpec string        `json:"timeout,omitempty"`
}

// DefaultReadyTimeout is how long a persistent task with readyWhen and no readyWhen.timeout is
// given to become ready.
const DefaultReadyTimeout = 60 * time.Second

// IsGroup reports whether the task is a group: it declares dependsOn and no command, so running
// it runs its dependencies and nothing else. Its key is made of its dependencies' keys only, and
// it is never stored in the cache.
func (t *Task) IsGroup() bool { return t.Command == "" }

// MaxRetries bounds exec.retries and vx run --retry: a task that fails more often is broken,
// not flaky.
const MaxRetries = 10

// TaskField describes one field a task may declare in config. TaskFields answers the one list of them:
// the config reader, the origins, vx show and the lock all go by it.
type TaskField struct {
	// Name is the field's key in config ("dependsOn").
	Name string
	// Flag marks a boolean that answers leave out while it keeps its default.
	Flag bool
	// Lock is the field's name in vx.lock ("exec.env"), "" for a field the lock does not audit.
	Lock string
}

// TaskFields answers the fields a task declares, in the order answers (and vx.lock's drift) show
// them; the list is the caller's.
func TaskFields() []TaskField { return slices.Clone(taskFields[:]) }

// taskFields is the one list TaskFields answers.
var taskFields = [...]TaskField{
	{Name: "command", Lock: "command"},
	{Name: "description"},
	{Name: "env", Lock: "env"},
	{Name: "exec", Lock: "exec.env"},
	{Name: "inputs", Lock: "inputs"},
	{Name: "outputs", Lock: "outputs"},
	{Name: "dependsOn", Lock: "dependsOn"},
	{Name: "cache", Lock: "cache"},
	{Name: "timeout"},
	{Name: "sandbox", Lock: "sandbox"},
	{Name: "persistent", Flag: true, Lock: "persistent"},
	{Name: "interruptible", Flag: true},
	{Name: "all", Flag: true, Lock: "all"},
	{Name: "ifScript", Flag: true},
	{Name: "passThroughEnv"},
	{Name: "envMode"},
	{Name: "rewrites", Lock: "rewrites"},
	{Name: "readyWhen"},
	{Name: "runtimeInputs"},
	{Name: "interactive", Flag: true},
}

// TaskFieldIndex answers the position of a field in TaskFields, -1 for an unknown name.
func TaskFieldIndex(name string) int {
	for i, f := range taskFields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Origins holds where each of a task's fields was set, in the order of TaskFields; a zero Origin
// is the built-in default.
type Origins struct {
	byField [taskFieldCount]Origin
}

// taskFieldCount is the number of TaskFields, as a constant for the Origins array.
const taskFieldCount = len(taskFields)

// Get returns where the field was set.
func (o *Origins) Get(name string) Origin {
	if i := TaskFieldIndex(name); i >= 0 {
		return o.byField[i]
	}
	return Origin{}
}

// Set records where the field was set; unknown names are ignored.
func (o *Origins) Set(name string, origin Origin) {
	if i := TaskFieldIndex(name); i >= 0 {
		o.byField[i] = origin
	}
}

// DependencyDefault, among a task's inputs, stands for every git-visible file of each project the
// task's project depends on, transitively (Nx's `^default`): one digest per project enters the key,
// and no task of theirs need run.
const DependencyDefault = "^default"

// DependencyPrefix begins a dependency input: `^default`, or `^GLOB`, the files of each project
// the task's project depends on, transitively, that GLOB matches in it (Nx's `^production`, its
// named input's globs in each dependency): `'^src/**', '^!**/*.spec.ts'`.
const DependencyPrefix = "^"

// OwnInputs are the task's inputs less the dependency inputs: the globs over its own project's
// files (and root files). Nil stays nil (the default inputs).
func (t *Task) OwnInputs() []string {
	if !slices.ContainsFunc(t.Inputs, isDependencyInput) {
		return t.Inputs
	}
	own := []string{}
	for _, g := range t.Inputs {
		if !isDependencyInput(g) {
			own = append(own, g)
		}
	}
	return own
}

// OutputsOutside reports whether the task's outputs name a path outside its project: a glob from
// the workspace root ("//", negated or not). What such a task writes may lie in any project.
func (t *Task) OutputsOutside() bool {
	for _, o := range t.Outputs {
		if strings.HasPrefix(strings.TrimPrefix(o, "!"), "//") {
			return true
		}
	}
	return false
}

// DependencyInputs answers the globs a task's dependency inputs take in each project its project
// depends on, and whether it has any: nil (every git-visible file) under `^default`, else the
// `^GLOB`s' globs in order.
func (t *Task) DependencyInputs() (globs []string, any bool) {
	for _, g := range t.Inputs {
		switch {
		case g == DependencyDefault:
			return nil, true
		case isDependencyInput(g):
			globs = append(globs, strings.TrimPrefix(g, DependencyPrefix))
		}
	}
	return globs, len(globs) > 0
}

func isDependencyInput(g string) bool { return strings.HasPrefix(g, DependencyPrefix) }

// InputsDefault reports whether the task hashes every non-ignored file of its project.
func (t *Task) InputsDefault() bool { return t.Inputs == nil }

// SecretNames lists the environment variable names the task reads secrets from, sorted.
func (t *Task) SecretNames() []string {
	var names []string
	for _, v := range t.ExecEnv {
		if v.Secret != "" {
			names = append(names, v.Secret)
		}
	}
	sort.Strings(names)
	return names
}

// Project is one project folder of the workspace.
type Project struct {
	Name string `json:"name"`
	// Dir is the project folder relative to the workspace root, with forward slashes ("." for the root).
	Dir string `json:"dir"`
	// AbsDir is the absolute project folder.
	AbsDir string `json:"-"`
	// ConfigFile is the vx.project.ts path relative to the root, or "" when the project has none.
	ConfigFile string   `json:"configFile,omitempty"`
	Tags       []string `json:"tags"`
	// DependsOn holds the names of the projects this one depends on (declared or from package.json), sorted.
	DependsOn []string `json:"dependsOn"`
	// Tasks holds the project's tasks by task name.
	Tasks map[string]*Task `json:"-"`
	// Scripts holds the scripts of the project's package.json, by name.
	Scripts map[string]string `json:"-"`
	// NameOrigin says where the name came from.
	NameOrigin Origin `json:"-"`
}

// TaskNames lists the project's task names, sorted.
func (p *Project) TaskNames() []string {
	names := make([]string, 0, len(p.Tasks))
	for n := range p.Tasks {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// MCPOptions are the options of the mcp() plugin.
type MCPOptions struct {
	// RunAll is true when any task may be run (run: true, the default).
	RunAll bool `json:"runAll"`
	// RunNames lists the task names an agent may run when RunAll is false; empty with RunAll false
	// means nothing may run (run: false).
	RunNames []string `json:"runNames,omitempty"`
	// AnswerChars is the budget of every tool answer's text, in characters (mcp({ answerChars }));
	// 0 means DefaultAnswerChars.
	AnswerChars int `json:"answerChars,omitempty"`
	// Sandbox confines every task an agent runs (mcp({ sandbox: true })): runTasks runs them
	// sandboxed, narrowed to no network and writes to their outputs only.
	Sandbox bool `json:"sandbox,omitempty"`
	// Args lets runTasks pass arguments to the commands of the tasks it names (mcp({ args:
	// true })): arguments can make a test runner load any file, which run's list must not let
	// through unasked.
	Args bool `json:"args,omitempty"`
	// Tools, when not nil, names the only tools `vx mcp` lists (mcp({ tools })), each one of
	// MCPToolNames.
	Tools []string `json:"tools,omitempty"`
}

// MCPToolNames are the tools of `vx mcp`, the names mcp({ tools }) may give.
var MCPToolNames = []string{"listTasks", "getCacheStats", "getRunHistory", "explainCacheKey", "whyDidThisRerun",
	"pruneCache", "planInit", "searchDocs", "checkLock", "getConfig", "getTaskLog", "getFailures", "runTasks",
	"planTasks", "getWorkspaceInfo"}

// The answer budget of `vx mcp`: the default, and the bounds mcp({ answerChars }) must keep to (an
// answer smaller than the least could not hold one task's summary; one larger than the most is
// more than any agent reads).
const (
	DefaultAnswerChars = 40_000
	MinAnswerChars     = 8_000
	MaxAnswerChars     = 1_000_000
)

// Budget is the answer budget in characters: AnswerChars, or DefaultAnswerChars.
func (o *MCPOptions) Budget() int {
	if o == nil || o.AnswerChars == 0 {
		return DefaultAnswerChars
	}
	return o.AnswerChars
}

// CanRun reports whether an agent may run tasks at all.
func (o *MCPOptions) CanRun() bool { return o.RunAll || len(o.RunNames) > 0 }

// Allows reports whether an agent may ask to run the task name.
func (o *MCPOptions) Allows(taskName string) bool {
	if o.RunAll {
		return true
	}
	for _, n := range o.RunNames {
		if n == taskName {
			return true
		}
	}
	return false
}

// Plugin describes one declared plugin and the seams it uses.
type Plugin struct {
	Name     string   `json:"name"`
	Commands []string `json:"commands"`
	Stage    bool     `json:"stage"`
}

// Workspace is a resolved workspace.
type Workspace struct {
	// Root is the absolute workspace root (the folder holding vx.workspace.ts).
	Root string `json:"root"`
	// CacheDir is the checkout's own absolute state folder (.vx/ or $VX_STATE_DIR): its run
	// history, stat cache, watcher socket and task locks.
	CacheDir string `json:"cacheDir"`
	// SharedDir is the absolute folder of the store every checkout of the repository shares (cache
	// entries, blobs, durations and peaks), and SharedDirSource what chose it (engine/statedirs:
	// default, config, flag, env); "" means CacheDir itself (a workspace built in a test).
	SharedDir       string `json:"sharedDir,omitempty"`
	SharedDirSource string `json:"sharedDirSource,omitempty"`
	// ConfiguredCacheDir is cacheDir as vx.workspace.ts declares it ("" when it does not).
	ConfiguredCacheDir string `json:"configuredCacheDir,omitempty"`
	// ConfigFile is the workspace config file, relative to Root.
	ConfigFile string `json:"configFile"`
	// Projects holds every project, sorted by name.
	Projects []*Project `json:"projects"`
	// Plugins holds the declared plugins in order.
	Plugins []Plugin `json:"plugins"`
	// MCP is nil when the workspace does not declare mcp().
	MCP *MCPOptions `json:"mcp,omitempty"`
	// GlobalInputs are workspace-root globs whose files enter every task's key.
	GlobalInputs []string `json:"globalInputs,omitempty"`
	// RemoteCache is the shared cache server the workspace declares; nil for none.
	RemoteCache *RemoteCache `json:"remoteCache,omitempty"`
	// Env holds variable names whose values enter every task's key and which every task sees
	// (Turborepo's globalEnv); PassThroughEnv names variables every task sees without them entering
	// a key (globalPassThroughEnv); EnvMode is every task's default mode ("" means strict).
	Env            []string `json:"env,omitempty"`
	PassThroughEnv []string `json:"passThroughEnv,omitempty"`
	EnvMode        string   `json:"envMode,omitempty"`
	// MemoryBudget is memoryBudget as declared ("6GiB", or a number of bytes), "" when not set;
	// TaskMemory is taskMemory, the reservation of a task with no recorded peak.
	MemoryBudget string `json:"memoryBudget,omitempty"`
	TaskMemory   string `json:"taskMemory,omitempty"`
	// RunTimeout is runTimeout: how long a whole run may take (0 for no bound); RunTimeoutSpec
	// is the value as declared.
	RunTimeout     time.Duration `json:"-"`
	RunTimeoutSpec string        `json:"runTimeout,omitempty"`
	// CacheScope is cacheScope: the remote cache scope a run writes to (ScopeTrusted,
	// ScopeReadOnly or an untrusted scope's name), "" when not set; --cache-scope and
	// VX_CACHE_SCOPE override it.
	CacheScope string `json:"cacheScope,omitempty"`
	// CacheRetention is cacheRetention, how much the cache store keeps; nil for the defaults.
	CacheRetention *CacheRetention `json:"cacheRetention,omitempty"`
	// OTel is otel: every run is exported as OpenTelemetry traces, to the endpoint the standard
	// OTEL_EXPORTER_OTLP_* variables name (vx run --otel[=URL] does it for one run).
	OTel bool `json:"otel,omitempty"`
	// AffectedBase is affectedBase: the git ref --affected compares with by default ("" for the
	// default branch); the flag's value and VX_AFFECTED_BASE override it.
	AffectedBase string `json:"affectedBase,omitempty"`
	// Secrets holds the values of every secret the workspace's tasks read, as found in the
	// environment at load time; used only for masking, never serialised.
	Secrets []string `json:"-"`
	// GlobalRuntimeInputs are commands (`node -v`) whose trimmed standard output enters every
	// task's key, as GlobalInputs' files do.
	GlobalRuntimeInputs []string `json:"globalRuntimeInputs,omitempty"`
	// ScriptsRunner is scripts.runner: "package-manager" runs every package script through its
	// manager as its command says; "" or "direct" runs a script that needs no manager through sh
	// itself (engine/pkgscript). It is not part of any key.
	ScriptsRunner string `json:"scriptsRunner,omitempty"`

	// Remote is the workspace's remote execution (remote: { ... }); nil when it declares none.
	Remote *RemoteExec `json:"remote,omitempty"`

	byName map[string]*Project
	tasks  map[string]*Task
	ids    []string
}

// Project returns the project of that name.
func (w *Workspace) Project(name string) (*Project, bool) {
	p, ok := w.byName[name]
	return p, ok
}

// Task returns the task with that id ("project#task").
func (w *Workspace) Task(id string) (*Task, bool) {
	t, ok := w.tasks[id]
	return t, ok
}

// TaskIDs lists every task id, sorted.
func (w *Workspace) TaskIDs() []string { return w.ids }

// TaskCount is the number of tasks across all projects.
func (w *Workspace) TaskCount() int { return len(w.ids) }

// Index builds the lookup tables after Projects and their Tasks are set. Build calls it; code that
// assembles a Workspace by hand (tests) must call it too.
func (w *Workspace) Index() {
	sort.Slice(w.Projects, func(i, j int) bool { return w.Projects[i].Name < w.Projects[j].Name })
	w.byName = make(map[string]*Project, len(w.Projects))
	w.tasks = map[string]*Task{}
	// A new slice, never w.ids[:0]: a copy of a workspace (workspace.WithArgs) shares the
	// original's array, which other calls read.
	w.ids = nil
	for _, p := range w.Projects {
		w.byName[p.Name] = p
		for _, t := range p.Tasks {
			w.tasks[t.ID] = t
			w.ids = append(w.ids, t.ID)
		}
	}
	sort.Strings(w.ids)
}

// SplitTaskID splits "project#task" into its halves; ok is false unless both are non-empty.
func SplitTaskID(id string) (project, task string, ok bool) {
	project, task, found := strings.Cut(id, "#")
	return project, task, found && project != "" && task != ""
}

// TaskID joins a project and a task name.
func TaskID(project, task string) string { return project + "#" + task }

// GobEncode packs the origins into one byte string: a task's ten origins name one or two files,
// and decoding ten structs by reflection for each of thousands of tasks was most of reading a
// kept workspace back.
func (o Origins) GobEncode() ([]byte, error) {
	var b []byte
	prev := "\x00" // no file: the first origin always writes its file
	for _, og := range o.byField {
		if og.File == prev {
			b = binary.AppendUvarint(b, 0) // same file as the origin before
		} else {
			b = binary.AppendUvarint(b, uint64(len(og.File))+1)
			b = append(b, og.File...)
			prev = og.File
		}
		b = binary.AppendUvarint(b, uint64(og.Line))
		b = binary.AppendUvarint(b, uint64(og.Col))
	}
	return b, nil
}

// GobDecode unpacks what GobEncode packed.
func (o *Origins) GobDecode(b []byte) error {
	next := func() (uint64, error) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, errors.New("graph: truncated origins")
		}
		b = b[n:]
		return v, nil
	}
	var file string
	for i := range o.byField {
		n, err := next()
		if err != nil {
			return err
		}
		if n > 0 {
			if uint64(len(b)) < n-1 {
				return errors.New("graph: truncated origins")
			}
			file, b = string(b[:n-1]), b[n-1:]
		}
		line, err := next()
		if err != nil {
			return err
		}
		col, err := next()
		if err != nil {
			return err
		}
		o.byField[i] = Origin{File: file, Line: int(line), Col: int(col)}
	}
	return nil
}

// RemoteExec is the workspace's `remote`: remote execution on a REAPI engine.
type RemoteExec struct {
	// Execute sends every cacheable task that may run remotely to the engine.
	Execute bool `json:"execute"`
	// Executor is the engine's grpc:// or grpcs:// address; "" means remoteCache.reapi's.
	Executor string `json:"executor,omitempty"`
	// Platform are the properties a worker must match exactly, by name.
	Platform map[string]string `json:"platform,omitempty"`
	// Capacity is how many tasks run remotely at once; 0 means 4 per local worker.
	Capacity int `json:"capacity,omitempty"`
	// Path is the explicit PATH of every remote command (part of its Action); "" means
	// /usr/local/bin:/usr/bin:/bin.
	Path string `json:"path,omitempty"`
	// Download is what of the run's remote work comes back (DownloadAll, DownloadRequested,
	// DownloadMinimal); "" means all.
	Download string `json:"download,omitempty"`
}
