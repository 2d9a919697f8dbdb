package config

import (
	"path"
	"reflect"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/go-sourcemap/sourcemap"
)

// positions records, for every object key written literally in a config, the TypeScript file and
// position it was written at, by its key path from the outermost object literal
// ("tasks.build.command"). It lets `vx show` say where each value came from.
type positions struct {
	byFile map[string]map[string]filePos
}

type filePos struct{ line, col int }

func newPositions() *positions { return &positions{byFile: map[string]map[string]filePos{}} }

var (
	objectLiteralType = reflect.TypeOf((*ast.ObjectLiteral)(nil))
	fileType          = reflect.TypeOf((*file.File)(nil))
)

// add walks a parsed program and records the keys of its object literals; smap maps a bundle back
// to its files, nil for a config file run as it stands. It returns p.
func (p *positions) add(prog *ast.Program, smap *sourcemap.Consumer) *positions {
	w := walker{p: p, f: prog.File, smap: smap}
	w.walk(reflect.ValueOf(prog), "")
	return p
}

// merge adds positions recorded apart (by a parallel preparation).
func (p *positions) merge(byFile map[string]map[string]filePos) {
	for file, m := range byFile {
		if p.byFile[file] == nil {
			p.byFile[file] = m
			continue
		}
		for k, v := range m {
			if _, seen := p.byFile[file][k]; !seen {
				p.byFile[file][k] = v
			}
		}
	}
}

type walker struct {
	p    *positions
	f    *file.File
	smap *sourcemap.Consumer
}

// walk visits every node under v. Object literals extend prefix; anything else starts afresh,
// so a helper object built elsewhere does not claim the keys of the config literal.
func (w walker) walk(v reflect.Value, prefix string) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem(), prefix)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if v.Type() == objectLiteralType {
			w.object(v.Interface().(*ast.ObjectLiteral), prefix)
			return
		}
		if v.Elem().Kind() == reflect.Struct {
			w.walk(v.Elem(), "")
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Field(i)
			switch f.Kind() {
			case reflect.Interface, reflect.Pointer, reflect.Slice, reflect.Struct:
				if f.Type() == fileType {
					continue
				}
				w.walk(f, "")
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			w.walk(v.Index(i), prefix)
		}
	}
}

func (w walker) object(o *ast.ObjectLiteral, prefix string) {
	for _, prop := range o.Value {
		switch p := prop.(type) {
		case *ast.PropertyKeyed:
			key, ok := literalKey(p.Key)
			if !ok || p.Computed {
				w.walk(reflect.ValueOf(p.Value), "")
				continue
			}
			w.record(prefix+key, p.Key.Idx0())
			w.walk(reflect.ValueOf(p.Value), prefix+key+".")
		case *ast.PropertyShort:
			w.record(prefix+string(p.Name.Name), p.Name.Idx)
		default:
			w.walk(reflect.ValueOf(prop), "")
		}
	}
}

func literalKey(e ast.Expression) (string, bool) {
	switch k := e.(type) {
	case *ast.Identifier:
		return string(k.Name), true
	case *ast.StringLiteral:
		return string(k.Value), true
	case *ast.NumberLiteral:
		return k.Literal, true
	}
	return "", false
}

func (w walker) record(keyPath string, idx file.Idx) {
	pos := w.f.Position(int(idx) - w.f.Base())
	// Without a source map the program is the config file itself, position for position.
	src, line, col := pos.Filename, pos.Line, pos.Column-1
	if w.smap != nil {
		var ok bool
		if src, _, line, col, ok = w.smap.Source(pos.Line, pos.Column-1); !ok {
			return
		}
	}
	name, ok := relFile(src)
	if !ok {
		return
	}
	m := w.p.byFile[name]
	if m == nil {
		m = map[string]filePos{}
		w.p.byFile[name] = m
	}
	if _, seen := m[keyPath]; !seen {
		m[keyPath] = filePos{line: line, col: col + 1}
	}
}

// relFile maps a source-map file name to a root-relative config file name; vx's built-in modules
// and generated entries are not config files.
func relFile(name string) (string, bool) {
	if name == "" || strings.Contains(name, ":") || strings.HasPrefix(name, "vx-") {
		return "", false
	}
	return path.Clean(strings.TrimPrefix(name, "./")), true
}

func (p *positions) lookup(fileName, keyPath string) (line, col int, ok bool) {
	m := p.byFile[fileName]
	if m == nil {
		return 0, 0, false
	}
	for keyPath != "" {
		if fp, found := m[keyPath]; found {
			return fp.line, fp.col, true
		}
		i := strings.LastIndexByte(keyPath, '.')
		if i < 0 {
			break
		}
		keyPath = keyPath[:i]
	}
	return 0, 0, false
}
