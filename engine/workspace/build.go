package workspace

import (
	"cmp"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/vzn/vx/engine/config"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
)

// workspaceFields and projectFields list what the two config files may declare.
var (
	workspaceFields = []string{"projects", "plugins", "tasks", "globalInputs", "remoteCache", "env", "passThroughEnv", "envMode", "memoryBudget", "taskMemory", "runTimeout", "cacheDir", "cacheScope", "cacheRetention", "otel", "affectedBase", "globalRuntimeInputs", "scripts", "remote"}
	projectFields   = []string{"name", "tags", "dependsOn", "tasks"}
)

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
	// discovery, when set, is told as the search for project folders starts and ends.
	discovery func(start bool)
	// dataOnly is set when the build evaluates in the process that may not afford an unbounded
	// evaluation (the session's config.Options.DataOnly): it answers config.ErrNotData for what
	// only a child process's bounds hold.
	dataOnly bool
	// dataBytes counts the package.json bytes a data-only build read.
	dataBytes atomic.Int64
}

// Bounds on the package.json files a data-only build reads: one file, and all of them.
const (
	maxDataPackageJSON  = 1 << 20
	maxDataPackageBytes = 16 << 20
)

// readBounded reads file, within a data-only build's bounds.
func (b *build) readBounded(file string) ([]byte, error) {
	if !b.dataOnly {
		return os.ReadFile(file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDataPackageJSON+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxDataPackageJSON || b.dataBytes.Add(int64(len(data))) > maxDataPackageBytes {
		return nil, config.ErrNotData
	}
	return data, nil
}

// load evaluates the config under root and resolves it.
func (b *build) load(ctx context.Context) (*graph.Workspace, error) {
	wsMod, err := b.sess.EvalWorkspace(ctx, ConfigFileName)
	if err != nil {
		return nil, err
	}
	b.ws = wsMod
	r := b.reader(ConfigFileName)
	// The workspace's secrets are known before any project config runs, so that an error a
	// project config throws has them masked too.
	declaredSecrets(wsMod.Value, b.secretNames)
	top, err := r.object("", wsMod.Value, workspaceFields...)
	if err != nil {
		return nil, err
	}
	globs, err := b.projectGlobs(r, top)
	if err != nil {
		return nil, err
	}
	dirs, err := b.discover(globs)
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
	if err := remoteSettings(r, top, ws); err != nil {
		return nil, err
	}
	if err := workspaceEnv(r, top, ws); err != nil {
		return nil, err
	}
	if err := workspaceCache(r, top, ws); err != nil {
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
	if err := checkGraph(ws); err != nil {
		return nil, err
	}
	if err := b.resolveScripts(ws); err != nil {
		return nil, err
	}
	ws.Secrets = secretValues(slices.Sorted(maps.Keys(b.allSecretNames(ws))), b.getenv)
	return ws, nil
}

// checkGraph refuses a resolved task graph that cannot run: a dependency cycle, or outputs two
// unrelated tasks share.
func checkGraph(ws *graph.Workspace) error {
	if err := cmp.Or(findCycle(ws), refuseReadyWhen(ws)); err != nil {
		return err
	}
	return checkExclusiveOutputs(ws)
}

// resolveScripts records the package scripts each task's command runs (its own package's, and the
// root's it reaches through pnpm -w and friends), and makes a persistent task, an interactive
// one and a group uncached.
func (b *build) resolveScripts(ws *graph.Workspace) error {
	b.watched = append(b.watched, filepath.Join(b.root, "package.json"))
	rootPkg, _, err := b.readPackageJSON(".") // no root package.json: no root scripts
	if errors.Is(err, config.ErrNotData) {
		return err
	}
	src := scriptSource{}
	if rootPkg != nil {
		src.root, src.rootName = rootPkg.Scripts, rootPkg.Name
	}
	for _, p := range ws.Projects {
		src.own, src.dir = p.Scripts, p.Dir
		for _, t := range p.Tasks {
			t.Scripts = scriptsRun(t.Command, src)
			if t.Persistent || t.Interactive || t.IsGroup() {
				t.Cache = false
			}
		}
	}
	serverGroups(ws)
	return nil
}

// serverGroups makes persistent every group that depends on a persistent task, directly or
// through another group (`dev: { dependsOn: ['web#dev', 'api#dev'] }`): it runs as long as its
// servers do, rather than ending at once and having them stopped.
func serverGroups(ws *graph.Workspace) {
	seen := map[string]bool{}
	var serves func(t *graph.Task) bool
	serves = func(t *graph.Task) bool {
		if t.Persistent || !t.IsGroup() || seen[t.ID] {
			return t.Persistent
		}
		seen[t.ID] = true
		for _, id := range t.DependsOn {
			if d, ok := ws.Task(id); ok && serves(d) {
				t.Persistent = true
			}
		}
		return t.Persistent
	}
	for _, id := range ws.TaskIDs() {
		t, _ := ws.Task(id)
		serves(t)
	}
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

// workspaceEnv reads what the workspace declares for every task's environment and memory, and
// for its cache store: env, passThroughEnv, envMode, memoryBudget, taskMemory and cacheRetention;
// and how its package scripts run (scripts.runner).
func workspaceEnv(r reader, top map[string]any, ws *graph.Workspace) (err error) {
	for _, k := range []string{"env", "passThroughEnv", "envMode", "memoryBudget", "taskMemory", "runTimeout", "cacheRetention", "otel", "globalRuntimeInputs", "scripts"} {
		v, ok := top[k]
		if !ok {
			continue
		}
		switch k {
		case "env":
			ws.Env, err = r.strings(k, v)
		case "passThroughEnv":
			ws.PassThroughEnv, err = r.strings(k, v)
		case "envMode":
			ws.EnvMode, err = r.envMode(k, v)
		case "memoryBudget":
			ws.MemoryBudget, err = r.size(k, v)
		case "taskMemory":
			ws.TaskMemory, err = r.size(k, v)
		case "runTimeout":
			ws.RunTimeout, ws.RunTimeoutSpec, err = r.duration(k, v)
		case "cacheRetention":
			ws.CacheRetention, err = cacheRetention(r, v)
		case "otel":
			ws.OTel, err = r.boolean(k, v)
		case "globalRuntimeInputs":
			ws.GlobalRuntimeInputs, err = r.probes(k, v)
		case "scripts":
			ws.ScriptsRunner, err = scriptsRunner(r, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// discover finds the project folders, telling b.discovery as the search starts and ends.
func (b *build) discover(globs []string) ([]*projectDir, error) {
	if b.discovery != nil {
		b.discovery(true)
		defer b.discovery(false)
	}
	return b.findProjects(globs)
}

// reader returns a reader of one config file that records the secret names it meets.
func (b *build) reader(file string) reader {
	if b.secretNames == nil {
		b.secretNames = map[string]bool{}
	}
	return reader{sess: b.sess, file: file, secrets: b.secretNames}
}

// declaredSecrets adds to names every secret v declares anywhere: each { secret: 'NAME' }.
func declaredSecrets(v any, names map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		if name, ok := x["secret"].(string); ok && len(x) == 1 && name != "" {
			names[name] = true
			return
		}
		for _, e := range x {
			declaredSecrets(e, names)
		}
	case []any:
		for _, e := range x {
			declaredSecrets(e, names)
		}
	}
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

// workspaceCache reads where the workspace's cache store is (cacheDir), the remote scope its
// runs read and write as (cacheScope) and the git ref --affected compares with (affectedBase)
// into ws.
func workspaceCache(r reader, top map[string]any, ws *graph.Workspace) (err error) {
	if v, ok := top["cacheDir"]; ok {
		if ws.ConfiguredCacheDir, err = r.str("cacheDir", v); err != nil {
			return err
		}
	}
	if ws.CacheScope, err = cacheScope(r, top); err != nil {
		return err
	}
	ws.AffectedBase, err = affectedBase(r, top)
	return err
}
