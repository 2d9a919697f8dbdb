package config

import (
	"errors"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// A config file is only data when it is simple (see simple.go) and its default export is a
// literal: objects of plain keys, arrays, strings, numbers, booleans, null and template strings
// without substitutions, the calls it makes being to what it imported of vx's own modules
// (defineWorkspace, defineProject, definePlugin, mcp), with data for their argument. Such a file
// runs nothing of the repository's: its evaluation allocates in proportion to its size and ends.
// So a Session with Options.DataOnly evaluates such files in the process that made it, under the
// bounds below, and answers ErrNotData for any other, having run none of it; its caller then
// evaluates the workspace in a child process, as everything else is.

// ErrNotData is a DataOnly session's answer for a config file that is not only data, or that
// passes the bounds a process evaluating config in itself keeps to.
var ErrNotData = errors.New("the config is not only data")

// Bounds on what a DataOnly session reads: one file, all of them, and how deep a literal nests.
const (
	maxDataFile  = 256 << 10
	maxDataBytes = 8 << 20
	maxDataDepth = 64
)

// takeDataBytes counts n bytes of config read by a DataOnly session, and reports whether they
// stay within its bounds.
func (s *Session) takeDataBytes(n int) bool {
	return n <= maxDataFile && s.dataBytes.Add(int64(n)) <= maxDataBytes
}

// isDataProgram reports whether prog, a simple config's rewritten program, does nothing but
// answer data: the wrapper, empty statements, and the return of a data expression in which only
// the imported names are called.
func isDataProgram(prog *ast.Program, imported []string) bool {
	if len(prog.Body) != 1 {
		return false
	}
	stmt, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return false
	}
	call, ok := stmt.Expression.(*ast.CallExpression)
	if !ok {
		return false
	}
	fn, ok := call.Callee.(*ast.FunctionLiteral)
	if !ok || fn.Body == nil || len(fn.Body.List) == 0 || len(call.ArgumentList) != 0 {
		return false
	}
	list := fn.Body.List
	ret, ok := list[len(list)-1].(*ast.ReturnStatement)
	if !ok || ret.Argument == nil {
		return false
	}
	for _, st := range list[:len(list)-1] {
		if _, empty := st.(*ast.EmptyStatement); !empty {
			return false
		}
	}
	callable := map[string]bool{}
	for _, name := range imported {
		callable[name] = true
	}
	return isData(ret.Argument, callable, 0)
}

// isData reports whether e is a literal of data, calling nothing but the callable names.
func isData(e ast.Expression, callable map[string]bool, depth int) bool {
	if depth > maxDataDepth {
		return false
	}
	switch x := e.(type) {
	case *ast.StringLiteral, *ast.NumberLiteral, *ast.BooleanLiteral, *ast.NullLiteral:
		return true
	case *ast.TemplateLiteral:
		return x.Tag == nil && len(x.Expressions) == 0
	case *ast.UnaryExpression:
		_, number := x.Operand.(*ast.NumberLiteral)
		return x.Operator == token.MINUS && !x.Postfix && number
	case *ast.ArrayLiteral:
		for _, el := range x.Value {
			if el == nil || !isData(el, callable, depth+1) {
				return false
			}
		}
		return true
	case *ast.ObjectLiteral:
		for _, prop := range x.Value {
			p, ok := prop.(*ast.PropertyKeyed)
			if !ok || p.Kind != ast.PropertyKindValue || p.Computed {
				return false
			}
			if _, ok := literalKey(p.Key); !ok || !isData(p.Value, callable, depth+1) {
				return false
			}
		}
		return true
	case *ast.CallExpression:
		callee, ok := x.Callee.(*ast.Identifier)
		if !ok || !callable[string(callee.Name)] || len(x.ArgumentList) > 1 {
			return false
		}
		for _, arg := range x.ArgumentList {
			if !isData(arg, callable, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}
