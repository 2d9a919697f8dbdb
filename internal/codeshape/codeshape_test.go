package codeshape

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The limits. A function's length is counted from its func keyword to its closing brace.
const (
	maxLines       = 100
	maxRunnerLines = 80
	maxRunnerCyclo = 20
)

// runnerDirs are the folders held to engine/runner's limits: the scheduler, and the packages that
// came out of it (what a task runs in, what a run shows, what it may use, what a plan keeps for the next), which keep its rules.
func runnerDirs() []string {
	return []string{"engine/runner", "engine/taskenv", "engine/runout", "engine/resources", "engine/planmemo", "engine/runrequest", "engine/executor"}
}

// inRunnerDirs reports whether the module-relative file rel lies in one of runnerDirs.
func inRunnerDirs(rel string) bool {
	for _, dir := range runnerDirs() {
		if strings.HasPrefix(rel, dir+"/") {
			return true
		}
	}
	return false
}

// moduleRoot is the folder holding go.mod, above this package's folder.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's folder")
		}
		dir = parent
	}
}

// funcShape is one function's measures.
type funcShape struct {
	pos   string // file:line
	name  string
	lines int
	cyclo int
}

// sourceFiles lists the module's non-test Go files (relative, slash-separated); testdata, dot
// folders and node_modules are not the module's code.
func sourceFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			rel, _ := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func shapes(t *testing.T, root, rel string) []funcShape {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(root, rel), nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []funcShape
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			name = fmt.Sprintf("(%s).%s", receiverType(fn.Recv.List[0].Type), name)
		}
		start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
		out = append(out, funcShape{
			pos:   fmt.Sprintf("%s:%d", rel, start.Line),
			name:  name,
			lines: end.Line - start.Line + 1,
			cyclo: cyclomatic(fn),
		})
	}
	return out
}

func receiverType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return "*" + receiverType(x.X)
	case *ast.IndexExpr:
		return receiverType(x.X)
	case *ast.IndexListExpr:
		return receiverType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// cyclomatic is gocyclo's measure: 1, plus one for each if, for, range, non-default case or
// select clause, && and ||, counting the function literals inside the function too.
func cyclomatic(fn *ast.FuncDecl) int {
	n := 1
	ast.Inspect(fn.Body, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.IfStmt, *ast.ForStmt, *ast.RangeStmt:
			n++
		case *ast.CaseClause:
			if x.List != nil {
				n++
			}
		case *ast.CommClause:
			if x.Comm != nil {
				n++
			}
		case *ast.BinaryExpr:
			if x.Op == token.LAND || x.Op == token.LOR {
				n++
			}
		}
		return true
	})
	return n
}

// TestFunctionShapes is the rule the issues after "The house, round 2" keep.
func TestFunctionShapes(t *testing.T) {
	root := moduleRoot(t)
	var problems []string
	measured := 0
	for _, rel := range sourceFiles(t, root) {
		inRunner := inRunnerDirs(rel)
		for _, s := range shapes(t, root, rel) {
			measured++
			switch {
			case inRunner && s.lines > maxRunnerLines:
				problems = append(problems, fmt.Sprintf("%s: %s is %d lines (engine/runner's limit, kept by %s, is %d)", s.pos, s.name, s.lines, filepath.Dir(rel), maxRunnerLines))
			case s.lines > maxLines:
				problems = append(problems, fmt.Sprintf("%s: %s is %d lines (the limit is %d)", s.pos, s.name, s.lines, maxLines))
			}
			if inRunner && s.cyclo > maxRunnerCyclo {
				problems = append(problems, fmt.Sprintf("%s: %s has cyclomatic complexity %d (engine/runner's limit, kept by %s, is %d)", s.pos, s.name, s.cyclo, filepath.Dir(rel), maxRunnerCyclo))
			}
		}
	}
	if measured < 500 {
		t.Fatalf("measured only %d functions: the walk is not finding the module's code", measured)
	}
	slices.Sort(problems)
	for _, p := range problems {
		t.Error(p)
	}
}

// TestMeasures checks the measures themselves on a function whose shape is known.
func TestMeasures(t *testing.T) {
	src := `package p

func f(a, b bool, c []int, ch chan int) int {
	if a && b || !a {
		return 1
	}
	for range c {
	}
	switch {
	case a:
	case b:
	default:
	}
	select {
	case <-ch:
	default:
	}
	g := func() {
		if b {
		}
	}
	g()
	return 0
}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := shapes(t, dir, "p.go")
	// 1 + if + && + || + range + 2 cases + 1 comm case + the closure's if = 9.
	if len(got) != 1 || got[0].cyclo != 9 || got[0].lines != 22 || got[0].name != "f" {
		t.Fatalf("measures: %+v", got)
	}
}
