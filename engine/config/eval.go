// Package config evaluates vx's TypeScript config with no Node or Bun: esbuild's Go API bundles
// vx.workspace.ts or the vx.project.ts files (with their local, JSON and node_modules imports and
// vx's built-in modules), goja runs the bundle, and the exported values come back as Go values with
// the TypeScript position of every object key. Bundles are cached by the content hash of every file
// they were built from. A Session runs in the process that makes it, under the bounds it samples
// itself; vx makes it in a child process whose bounds the kernel holds (engine/workspace's
// Isolation), and Options.Step tells that child's parent where each step begins and ends.
package config

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"
	"github.com/sourcegraph/conc/iter"

	"github.com/vzn/vx/engine/vxerr"
)

// DefaultTimeout bounds how long one config evaluation may run.
const DefaultTimeout = 5 * time.Second

// Options configure an evaluation session.
type Options struct {
	// Root is the absolute workspace root; file names in errors and positions are relative to it.
	Root string
	// CacheDir is the workspace's state folder; bundles are cached in CacheDir/config only when
	// CacheDir already exists (a read never creates it).
	CacheDir string
	// Console receives console.* output; nil discards it.
	Console io.Writer
	// Version is vx's version; it enters the bundle cache key.
	Version string
	// Timeout bounds each phase's run; zero means DefaultTimeout.
	Timeout time.Duration
	// MemoryLimit bounds, in bytes, how far the Go heap may grow during each phase's run; zero
	// means DefaultMemoryLimit.
	MemoryLimit uint64
	// Step, when set, is called as each bounded step of the evaluation starts and ends (a bundle
	// built, a bundle or a config run, a plugin stage called), with the config file the step is
	// for ("" when it is for several). Between two calls no more than one step's work runs, so a
	// parent process that evaluates config in a child restarts its deadline at each.
	Step func(file string)
	// DataOnly makes the session evaluate only config files that are data (see data.go), and
	// answer ErrNotData for any other before it runs anything of it.
	DataOnly bool
}

// Module is one evaluated config file.
type Module struct {
	// File is the config file relative to the root, with forward slashes.
	File string
	// Value is the file's default export as plain Go values (map[string]any, []any, string,
	// int64, float64, bool, nil); functions are kept as goja values and read through Session.
	Value map[string]any
	// object is the default export as a JS object, for reading functions (plugin stages).
	object *goja.Object
}

// Session is one evaluation of a workspace: one JS runtime that the workspace config and then the
// project configs run in, kept alive so plugin stages can be called after resolution.
type Session struct {
	opts    Options
	vm      *goja.Runtime
	console *console
	// smaps holds each run bundle's source map, by bundle name.
	smaps map[string]*sourcemap.Consumer
	// direct holds the config files run as they are, without bundling (see simple.go).
	direct map[string]bool
	// builtins are the exports of vx's own modules, by name, once a simple config ran.
	builtins map[string]goja.Value
	// inputs are the absolute paths of every file the bundles were built from.
	inputs []string
	pos    *positions
	// watch is the running evaluation's, nil between evaluations; only the goroutine running
	// JavaScript reads or sets it.
	watch *watch
	// stepFile is the config file the running steps are for, as Options.Step receives it.
	stepFile string
	// dataBytes counts what a DataOnly session read of config files.
	dataBytes atomic.Int64
}

// step tells Options.Step that a step starts or ends.
func (s *Session) step() {
	if s.opts.Step != nil {
		s.opts.Step(s.stepFile)
	}
}

// NewSession starts an evaluation session.
func NewSession(opts Options) *Session {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MemoryLimit == 0 {
		opts.MemoryLimit = DefaultMemoryLimit
	}
	vm := goja.New()
	vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	c := newConsole(opts.Console)
	c.install(vm)
	installBuiltins(vm)
	s := &Session{opts: opts, vm: vm, console: c, pos: newPositions(),
		smaps: map[string]*sourcemap.Consumer{}, direct: map[string]bool{}}
	s.guardAmplifiers()
	return s
}

// Inputs returns the absolute paths of every file the session's bundles were built from,
// including package.json and tsconfig.json files that module resolution may have read.
func (s *Session) Inputs() []string { return s.inputs }

// EvalWorkspace evaluates vx.workspace.ts (file, relative to the root).
func (s *Session) EvalWorkspace(ctx context.Context, file string) (*Module, error) {
	abs := filepath.Join(s.opts.Root, filepath.FromSlash(file))
	s.stepFile = file
	if s.opts.DataOnly {
		p := s.prepareSimple(file)
		if p.err != nil || p.compiled == nil || !p.data {
			return nil, ErrNotData
		}
		return s.runSimple(ctx, p)
	}
	code, err := s.bundle(ctx, "workspace", []string{abs}, "")
	if err != nil {
		return nil, err
	}
	exports, err := s.run(ctx, "vx-workspace.js", code)
	if err != nil {
		return nil, err
	}
	mods, err := s.defaults(exports, []string{file})
	if err != nil {
		return nil, err
	}
	return mods[0], nil
}

// EvalProjects evaluates the given vx.project.ts files (relative to the root) in one bundle.
func (s *Session) EvalProjects(ctx context.Context, files []string) ([]*Module, error) {
	if len(files) == 0 {
		return nil, nil
	}
	s.stepFile = ""
	if len(files) == 1 {
		s.stepFile = files[0]
	}
	s.step()
	mods := make([]*Module, len(files))
	var bundled []string
	var at []int
	for i, p := range iter.Map(files, func(f *string) prepared { return s.prepareSimple(*f) }) {
		if p.err != nil {
			return nil, p.err
		}
		if s.opts.DataOnly && (p.compiled == nil || !p.data) {
			return nil, ErrNotData
		}
		if p.compiled == nil {
			bundled = append(bundled, p.file)
			at = append(at, i)
			continue
		}
		m, err := s.runSimple(ctx, p)
		if err != nil {
			return nil, err
		}
		mods[i] = m
	}
	if len(bundled) == 0 {
		return mods, nil
	}
	rest, err := s.evalBundled(ctx, bundled)
	if err != nil {
		return nil, err
	}
	for j, m := range rest {
		mods[at[j]] = m
	}
	return mods, nil
}

// evalBundled evaluates project configs in one esbuild bundle.
func (s *Session) evalBundled(ctx context.Context, files []string) ([]*Module, error) {
	var entry strings.Builder
	abs := make([]string, len(files))
	for i, f := range files {
		abs[i] = filepath.Join(s.opts.Root, filepath.FromSlash(f))
		fmt.Fprintf(&entry, "import * as m%d from %q\n", i, "./"+f)
	}
	entry.WriteString("export const modules = [")
	for i := range files {
		if i > 0 {
			entry.WriteString(", ")
		}
		fmt.Fprintf(&entry, "m%d", i)
	}
	entry.WriteString("]\n")
	code, err := s.bundle(ctx, "projects", abs, entry.String())
	if err != nil {
		return nil, err
	}
	exports, err := s.run(ctx, "vx-projects.js", code)
	if err != nil {
		return nil, err
	}
	return s.defaults(exports, files)
}

// defaults reads each module's default export out of the bundle's exports.
func (s *Session) defaults(exports *goja.Object, files []string) ([]*Module, error) {
	var list []goja.Value
	if len(files) == 1 && exports.Get("modules") == nil {
		list = []goja.Value{exports}
	} else {
		arr := exports.Get("modules").ToObject(s.vm)
		for i := range files {
			list = append(list, arr.Get(fmt.Sprint(i)))
		}
	}
	mods := make([]*Module, len(files))
	for i, ns := range list {
		def := ns.ToObject(s.vm).Get("default")
		if def == nil || goja.IsUndefined(def) || goja.IsNull(def) {
			return nil, &vxerr.ConfigError{File: files[i], Msg: "no default export (write `export default defineProject({...})`)"}
		}
		obj, ok := def.(*goja.Object)
		if !ok || obj.ClassName() == "Array" || obj.ClassName() == "Function" {
			return nil, &vxerr.ConfigError{File: files[i], Msg: "the default export must be an object"}
		}
		val, _ := obj.Export().(map[string]any)
		mods[i] = &Module{File: files[i], Value: val, object: obj}
	}
	return mods, nil
}

// run executes a bundle and returns its exports object. A throw or a timeout becomes a
// *vxerr.ConfigError at the TypeScript position it happened.
func (s *Session) run(ctx context.Context, name, code string) (exports *goja.Object, err error) {
	// vx maps positions itself, once per bundle, rather than have goja resolve a URL per lookup.
	prog, err := goja.Parse(name, code, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, &vxerr.ConfigError{Msg: fmt.Sprintf("bundle does not parse: %v", err)}
	}
	smap, err := inlineSourceMap(code)
	if err != nil {
		return nil, &vxerr.ConfigError{Msg: fmt.Sprintf("bundle source map: %v", err)}
	}
	s.smaps[name] = smap
	s.pos.add(prog, smap)
	compiled, err := goja.CompileAST(prog, false)
	if err != nil {
		return nil, &vxerr.ConfigError{Msg: fmt.Sprintf("bundle does not compile: %v", err)}
	}
	// The IIFE assigns its exports to the global __vx: clear the last bundle's first, so that a
	// bundle that assigns nothing is not read as the one before it.
	if err := s.vm.Set("__vx", goja.Undefined()); err != nil {
		return nil, &vxerr.ConfigError{Msg: fmt.Sprintf("config bundle: %v", err)}
	}
	if _, err := s.guard(ctx, func() (goja.Value, error) { return s.vm.RunProgram(compiled) }); err != nil {
		return nil, err
	}
	obj, ok := s.vm.Get("__vx").(*goja.Object)
	if !ok {
		return nil, &vxerr.ConfigError{Msg: "config bundle exported nothing"}
	}
	return obj, nil
}

// guard runs f with the timeout, the memory limit and the context able to interrupt it, and
// turns a JS exception into a positioned config error.
func (s *Session) guard(ctx context.Context, f func() (goja.Value, error)) (goja.Value, error) {
	v, err := s.watched(ctx, f)
	if err != nil {
		return nil, s.jsError(err)
	}
	return v, nil
}

// watched runs f under a watch that can interrupt it, and ends the watch — however f ends —
// before the runtime is used again.
func (s *Session) watched(ctx context.Context, f func() (goja.Value, error)) (goja.Value, error) {
	s.step()
	s.watch = startWatch(ctx, s.vm, s.opts.Timeout, s.opts.MemoryLimit)
	defer func() {
		s.step()
		s.watch.end()
		s.watch = nil
		s.vm.ClearInterrupt()
	}()
	return f()
}

// jsError turns a goja error into a *vxerr.ConfigError naming the TypeScript file:line:col.
func (s *Session) jsError(err error) error {
	var intr *goja.InterruptedError
	if errors.As(err, &intr) {
		ce := &vxerr.ConfigError{Msg: fmt.Sprint(intr.Value())}
		s.locate(ce, intr.Stack())
		return ce
	}
	var exc *goja.Exception
	if errors.As(err, &exc) {
		msg := exc.Value().String()
		if obj, ok := exc.Value().(*goja.Object); ok {
			if m := obj.Get("message"); m != nil && !goja.IsUndefined(m) {
				name := "Error"
				if n := obj.Get("name"); n != nil && !goja.IsUndefined(n) {
					name = n.String()
				}
				msg = name + ": " + m.String()
			}
		}
		ce := &vxerr.ConfigError{Msg: msg}
		s.locate(ce, exc.Stack())
		return ce
	}
	return &vxerr.ConfigError{Msg: err.Error()}
}

// locate fills the error's position from the innermost stack frame that maps to a workspace file.
func (s *Session) locate(ce *vxerr.ConfigError, stack []goja.StackFrame) {
	for _, fr := range stack {
		p := fr.Position()
		if p.Line == 0 {
			continue
		}
		// A bundle maps back through its source map; a config run directly is its own source.
		src, line, col, ok := p.Filename, p.Line, p.Column-1, s.direct[p.Filename]
		if smap := s.smaps[p.Filename]; smap != nil {
			src, _, line, col, ok = smap.Source(p.Line, p.Column-1)
		}
		file, isConfig := relFile(src)
		if !ok || !isConfig {
			continue
		}
		ce.File, ce.Line, ce.Col = file, line, col+1
		return
	}
}

// Position returns where, in file, the object key at keyPath ("tasks.build.command") was written;
// a path not written literally falls back to its longest written prefix. ok is false when
// nothing of it was found.
func (s *Session) Position(file, keyPath string) (line, col int, ok bool) {
	return s.pos.lookup(file, keyPath)
}

// PluginStage returns the stage function of the plugin at index i of the workspace config's
// plugins list, or nil when it declares none.
func (s *Session) PluginStage(ws *Module, i int) goja.Callable {
	plugins, ok := ws.object.Get("plugins").(*goja.Object)
	if !ok {
		return nil
	}
	p, ok := plugins.Get(fmt.Sprint(i)).(*goja.Object)
	if !ok {
		return nil
	}
	f, ok := goja.AssertFunction(p.Get("stage"))
	if !ok {
		return nil
	}
	return f
}

// CallStage calls a plugin stage with a task map (plain Go values) and returns what it returned as
// plain Go values; nil when it returned nothing (the map is unchanged).
func (s *Session) CallStage(ctx context.Context, stage goja.Callable, tasks map[string]any) (map[string]any, error) {
	s.stepFile = ""
	arg := s.vm.ToValue(tasks)
	// Hand the stage a real JS object graph, not a Go map wrapper, so spreads and Object.keys work.
	arg, err := s.guard(ctx, func() (goja.Value, error) {
		jsonObj := s.vm.Get("JSON").ToObject(s.vm)
		parse, _ := goja.AssertFunction(jsonObj.Get("parse"))
		stringify, _ := goja.AssertFunction(jsonObj.Get("stringify"))
		str, err := stringify(jsonObj, arg)
		if err != nil {
			return nil, err
		}
		return parse(jsonObj, str)
	})
	if err != nil {
		return nil, err
	}
	v, err := s.guard(ctx, func() (goja.Value, error) { return stage(goja.Undefined(), arg) })
	if err != nil {
		return nil, err
	}
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil, nil
	}
	out, ok := v.Export().(map[string]any)
	if !ok {
		return nil, errors.New("a plugin stage must return a task map (an object keyed by task id) or nothing")
	}
	return out, nil
}

// bundle builds the entry points (or the stdin entry importing them) into one IIFE script, reusing
// a cached bundle when every file it was built from is unchanged.
func (s *Session) bundle(ctx context.Context, phase string, entries []string, stdin string) (string, error) {
	s.step()
	defer s.step()
	c := bundleCache{state: s.opts.CacheDir, dir: filepath.Join(s.opts.CacheDir, "config"), root: s.opts.Root, version: s.opts.Version, phase: phase}
	if code, inputs, ok := c.load(entries); ok {
		s.inputs = append(s.inputs, inputs...)
		return code, nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	opts := api.BuildOptions{
		Bundle:         true,
		Write:          false,
		Format:         api.FormatIIFE,
		GlobalName:     "__vx",
		Platform:       api.PlatformNeutral,
		MainFields:     []string{"module", "main"},
		Conditions:     []string{"import", "default"},
		Target:         api.ES2020,
		Supported:      map[string]bool{"async-generator": false, "for-await": false},
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		Metafile:       true,
		LogLevel:       api.LogLevelSilent,
		AbsWorkingDir:  s.opts.Root,
		Outfile:        filepath.Join(s.opts.Root, "vx-config.js"),
		Loader:         map[string]api.Loader{".json": api.LoaderJSON, ".ts": api.LoaderTS, ".mts": api.LoaderTS, ".cts": api.LoaderTS},
		// vx's own modules stay imports, which the IIFE turns into require() calls that the
		// runtime answers (see installBuiltins): cheaper than a resolver plugin per import.
		External: []string{ModuleConfig, ModuleMCP},
	}
	if stdin != "" {
		opts.Stdin = &api.StdinOptions{Contents: stdin, ResolveDir: s.opts.Root, Sourcefile: "vx-projects-entry.ts", Loader: api.LoaderTS}
	} else {
		opts.EntryPoints = entries
	}
	res := api.Build(opts)
	if len(res.Errors) > 0 {
		return "", s.buildError(res.Errors[0])
	}
	if len(res.OutputFiles) == 0 {
		return "", &vxerr.ConfigError{Msg: "esbuild produced no bundle"}
	}
	code := string(res.OutputFiles[0].Contents)
	inputs := metafileInputs(res.Metafile, s.opts.Root)
	s.inputs = append(s.inputs, inputs...)
	c.store(entries, inputs, code)
	return code, nil
}

// buildError turns an esbuild message into a config error at its TypeScript position.
func (s *Session) buildError(m api.Message) error {
	ce := &vxerr.ConfigError{Msg: m.Text}
	if mod, ok := unresolvedNodeBuiltin(m.Text); ok {
		ce.Msg = fmt.Sprintf("cannot import %q: vx config runs without Node, so Node's built-in modules are not available", mod)
	}
	if m.Location != nil && m.Location.File != "" && !strings.HasPrefix(m.Location.File, "vx-projects-entry") {
		ce.File = filepath.ToSlash(m.Location.File)
		if filepath.IsAbs(m.Location.File) {
			if rel, err := filepath.Rel(s.opts.Root, m.Location.File); err == nil {
				ce.File = filepath.ToSlash(rel)
			}
		}
		ce.Line, ce.Col = m.Location.Line, m.Location.Column+1
	}
	return ce
}

// inlineSourceMap decodes the bundle's trailing inline source map.
func inlineSourceMap(code string) (*sourcemap.Consumer, error) {
	const marker = "//# sourceMappingURL=data:application/json;base64,"
	i := strings.LastIndex(code, marker)
	if i < 0 {
		return nil, errors.New("the bundle has no inline source map")
	}
	b64 := strings.TrimSpace(code[i+len(marker):])
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	return sourcemap.Parse("", data)
}
