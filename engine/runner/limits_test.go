package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The scheduler stays readable: no non-test function of this package is longer than maxLines
// lines or more complex than maxComplexity, counted as gocyclo does (1 + each if, for, case,
// comm clause, && and ||). overLimits names the functions that are over them today, each with the
// change that takes it out of here; one that is no longer over them must leave the list.
const (
	maxLines      = 80
	maxComplexity = 20
)

var overLimits = map[string]string{
	"writeStale":        "outputs.go moves to engine/cache",
	"(*taskBox).finish": "sandbox.go: not split yet",
}

func TestFunctionLimits(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	seen := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			name := funcName(fn)
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			cyclo := complexity(fn.Body)
			if lines <= maxLines && cyclo <= maxComplexity {
				continue
			}
			seen[name] = true
			if _, known := overLimits[name]; !known {
				t.Errorf("%s (%s): %d lines, complexity %d; at most %d and %d", name, fset.Position(fn.Pos()), lines, cyclo, maxLines, maxComplexity)
			}
		}
	}
	for name := range overLimits {
		if !seen[name] {
			t.Errorf("%s is within the limits now (or gone): take it out of overLimits", name)
		}
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	star := ""
	if s, ok := recv.(*ast.StarExpr); ok {
		star, recv = "*", s.X
	}
	if ix, ok := recv.(*ast.IndexExpr); ok {
		recv = ix.X
	}
	id, _ := recv.(*ast.Ident)
	if id == nil {
		return fn.Name.Name
	}
	return "(" + star + id.Name + ")." + fn.Name.Name
}

func complexity(body *ast.BlockStmt) int {
	c := 1
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			c++
		case *ast.CaseClause:
			if n.List != nil {
				c++
			}
		case *ast.CommClause:
			if n.Comm != nil {
				c++
			}
		case *ast.BinaryExpr:
			if n.Op == token.LAND || n.Op == token.LOR {
				c++
			}
		}
		return true
	})
	return c
}
