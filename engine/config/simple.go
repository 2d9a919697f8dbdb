package config

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"

	"github.com/vzn/vx/engine/vxerr"
)

// Most vx.project.ts files are an import of @vzn/vx/config and one `export default
// defineProject({...})` of plain literals. Bundling costs esbuild a parse, a resolution and a link
// per file (figures: docs/performance.md, "Process start and config evaluation"), so such a file is
// run as it stands instead: its imports of vx's own modules and its export are overwritten in
// place — same length, same lines — by a function wrapper, goja compiles the result as strict
// code, as the module it replaces would be, and runs it with globals of the names it imported.
// Positions then need no source map. Anything else — TypeScript syntax, another import, a second
// export — fails the checks or goja's parse and goes through esbuild as before, so the fast path
// never answers differently, only sooner.

// leadingTrivia matches the white space and comments that may stand before and between a simple
// config's imports.
var leadingTrivia = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:\s+|//[^\n]*|/\*(?s:.*?)\*/)*`)
})

// builtinImport matches one import of named exports of one of vx's own modules.
var builtinImport = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^import\s*\{\s*([A-Za-z]+(?:\s*,\s*[A-Za-z]+)*)\s*,?\s*\}\s*from\s*(['"])(@vzn/vx/config|@vzn/vx-mcp)['"];?`)
})

// builtinExports lists what each of vx's own modules exports.
var builtinExports = map[string][]string{
	ModuleConfig: {"defineProject", "defineWorkspace", "definePlugin"},
	ModuleMCP:    {"mcp"},
}

// moduleKeyword finds the words that make a file a module: a simple config holds exactly one
// `export default` and no other import or export.
var moduleKeyword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b(import|export)\b`) })

// simpleSource rewrites a simple config into a script whose completion value is the default
// export, keeping every line and column of the original; imported are the names it imports of vx's
// own modules, which it expects as globals. ok is false when the file is not simple.
func simpleSource(src string) (script string, imported []string, ok bool) {
	type span struct{ start, module, end int }
	var imports []span
	seen := map[string]bool{}
	pos := len(leadingTrivia().FindString(src))
	for {
		m := builtinImport().FindStringSubmatchIndex(src[pos:])
		if m == nil {
			break
		}
		module := src[pos+m[6] : pos+m[7]]
		if seen[module] {
			return "", nil, false
		}
		seen[module] = true
		for _, name := range strings.FieldsFunc(src[pos+m[2]:pos+m[3]], func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' || r == '\r' }) {
			if !slices.Contains(builtinExports[module], name) || slices.Contains(imported, name) {
				return "", nil, false
			}
			imported = append(imported, name)
		}
		imports = append(imports, span{pos, pos + m[4], pos + m[1]})
		pos += m[1]
		pos += len(leadingTrivia().FindString(src[pos:]))
	}
	if len(imports) == 0 {
		return "", nil, false
	}
	// The wrapper takes the place of the first import's quoted module name, which is longer and
	// holds no line break.
	const wrapper = "(function(){"
	body := imports[len(imports)-1].end
	rest := src[body:]
	kw := moduleKeyword().FindAllStringIndex(rest, -1)
	if len(kw) != 1 || !strings.HasPrefix(rest[kw[0][0]:], "export default") {
		return "", nil, false
	}
	exp := kw[0][0]
	// export default must begin a line's statement.
	if line := rest[strings.LastIndexByte(rest[:exp], '\n')+1 : exp]; strings.TrimSpace(line) != "" {
		return "", nil, false
	}
	out := []byte(src[:body])
	for _, im := range imports {
		for i := im.start; i < im.end; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	copy(out[imports[0].module:], wrapper)
	var b strings.Builder
	b.Grow(len(src) + 64)
	b.Write(out)
	b.WriteString(rest[:exp])
	b.WriteString("return        ") // as long as "export default"
	b.WriteString(rest[exp+len("export default"):])
	b.WriteString("\n})()")
	return b.String(), imported, true
}

// prepared is a project config read, and when simple, parsed and compiled, ready to run. Preparing
// needs no runtime, so the configs are prepared in parallel and only run one after another.
type prepared struct {
	file, abs string
	compiled  *goja.Program
	imported  []string
	positions map[string]map[string]filePos
	// data is set, in a DataOnly session, when the file is only data (see data.go): it runs no
	// code of its own.
	data bool
	err  error
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
	if s.opts.DataOnly && !s.takeDataBytes(len(data)) {
		return p
	}
	src, imported, ok := simpleSource(string(data))
	if !ok {
		return p
	}
	prog, err := goja.Parse(file, src, parser.WithDisableSourceMaps)
	if err != nil {
		return p // not plain JavaScript: TypeScript syntax, say
	}
	if s.opts.DataOnly {
		if p.data = isDataProgram(prog, imported); !p.data {
			return p // compiled for nothing: the file runs in a child
		}
	}
	// Strict, as the ES module it replaces would be.
	if p.compiled, err = goja.CompileAST(prog, true); err != nil {
		p.compiled = nil
		return p
	}
	p.imported = imported
	p.positions = newPositions().add(prog, nil).byFile
	return p
}

// runSimple runs a prepared simple config.
func (s *Session) runSimple(ctx context.Context, p prepared) (*Module, error) {
	s.ensureDefines()
	s.direct[p.file] = true
	s.pos.merge(p.positions)
	s.inputs = append(s.inputs, p.abs)
	global := s.vm.GlobalObject()
	for _, name := range p.imported {
		_ = global.Set(name, s.builtins[name])
	}
	v, err := s.guard(ctx, func() (goja.Value, error) { return s.vm.RunProgram(p.compiled) })
	for _, name := range p.imported {
		_ = global.Delete(name)
	}
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

// ensureDefines gathers the exports of vx's own modules, once, for simple configs.
func (s *Session) ensureDefines() {
	if s.builtins != nil {
		return
	}
	s.builtins = map[string]goja.Value{}
	req, _ := goja.AssertFunction(s.vm.Get("require"))
	for module, names := range builtinExports {
		mod, err := req(goja.Undefined(), s.vm.ToValue(module))
		if err != nil {
			panic(fmt.Sprintf("config: built-in module %s: %v", module, err))
		}
		obj := mod.ToObject(s.vm)
		for _, name := range names {
			s.builtins[name] = obj.Get(name)
		}
	}
}
