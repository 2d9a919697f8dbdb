package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/vzn/vx/engine/vxerr"
)

// Most vx.project.ts files are one import of @vzn/vx/config and one `export default
// defineProject({...})` of plain literals. Bundling costs esbuild a parse, a resolution and a link
// per file (figures: docs/performance.md, "Process start and config evaluation"), so such a file is
// run as it stands instead: its import and export are overwritten in place — same length, same
// lines — by a function wrapper, and goja runs the result. Positions then need no source map.
// Anything else — TypeScript syntax, another import, a second export — fails the checks or goja's
// parse and goes through esbuild as before, so the fast path never answers differently, only
// sooner.

// simpleImport matches the one import a simple config may have, at the very start of the file.
var simpleImport = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^import\s*\{\s*((?:define(?:Project|Workspace|Plugin)\s*,?\s*)+)\}\s*from\s*(['"])@vzn/vx/config['"];?`)
})

// moduleKeyword finds the words that make a file a module: a simple config holds exactly one
// `export default` and no other import or export.
var moduleKeyword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(import|export)\b`) })

// simpleSource rewrites a simple config into a script whose completion value is the default
// export, keeping every line and column of the original after the import; ok is false when the
// file is not simple.
func simpleSource(src string) (string, bool) {
	imp := simpleImport().FindStringSubmatchIndex(src)
	if imp == nil {
		return "", false
	}
	// Strict, as the ES module it replaces would be.
	const wrapper = "(function(){'use strict';"
	if imp[1] < len(wrapper) {
		return "", false
	}
	rest := src[imp[1]:]
	kw := moduleKeyword().FindAllStringIndex(rest, -1)
	if len(kw) != 1 || !strings.HasPrefix(rest[kw[0][0]:], "export default") {
		return "", false
	}
	exp := kw[0][0]
	// export default must begin a line's statement.
	if line := rest[strings.LastIndexByte(rest[:exp], '\n')+1 : exp]; strings.TrimSpace(line) != "" {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(src) + 8)
	b.WriteString(wrapper)
	b.WriteString(strings.Repeat(" ", imp[1]-len(wrapper)))
	b.WriteString(rest[:exp])
	b.WriteString("return        ") // as long as "export default"
	b.WriteString(rest[exp+len("export default"):])
	b.WriteString("\n})()")
	return b.String(), true
}

// prepared is a project config read, and when simple, parsed and compiled, ready to run. Preparing
// needs no runtime, so the configs are prepared in parallel and only run one after another.
type prepared struct {
	file, abs string
	compiled  *goja.Program
	positions map[string]map[string]filePos
	err       error
}

// prepareSimple reads a project config and, when it is simple, parses and compiles it; compiled
// stays nil when the file must be bundled.
func (s *Session) prepareSimple(file string) prepared {
	p := prepared{file: file, abs: filepath.Join(s.opts.Root, filepath.FromSlash(file))}
	data, err := os.ReadFile(p.abs)
	if err != nil {
		p.err = &vxerr.ConfigError{File: file, Msg: fmt.Sprintf("read: %v", err)}
		return p
	}
	src, ok := simpleSource(string(data))
	if !ok {
		return p
	}
	prog, err := goja.Parse(file, src, parser.WithDisableSourceMaps)
	if err != nil {
		return p // not plain JavaScript: TypeScript syntax, say
	}
	if p.compiled, err = goja.CompileAST(prog, false); err != nil {
		p.compiled = nil
		return p
	}
	p.positions = newPositions().add(prog, nil).byFile
	return p
}

// runSimple runs a prepared simple config.
func (s *Session) runSimple(ctx context.Context, p prepared) (*Module, error) {
	s.ensureDefines()
	s.direct[p.file] = true
	s.pos.merge(p.positions)
	s.inputs = append(s.inputs, p.abs)
	v, err := s.guard(ctx, func() (goja.Value, error) { return s.vm.RunProgram(p.compiled) })
	if err != nil {
		return nil, err
	}
	obj, isObj := v.(*goja.Object)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) || !isObj || obj.ClassName() == "Array" || obj.ClassName() == "Function" {
		return nil, &vxerr.ConfigError{File: p.file, Msg: "the default export must be an object"}
	}
	val, _ := obj.Export().(map[string]any)
	return &Module{File: p.file, Value: val, object: obj}, nil
}

// ensureDefines makes the config module's functions globals, once, for simple configs.
func (s *Session) ensureDefines() {
	if s.definesSet {
		return
	}
	s.definesSet = true
	mod := s.vm.Get("require")
	req, _ := goja.AssertFunction(mod)
	cfg, err := req(goja.Undefined(), s.vm.ToValue(ModuleConfig))
	if err != nil {
		panic(fmt.Sprintf("config: built-in module %s: %v", ModuleConfig, err))
	}
	obj := cfg.ToObject(s.vm)
	for _, name := range []string{"defineProject", "defineWorkspace", "definePlugin"} {
		_ = s.vm.Set(name, obj.Get(name))
	}
}
