package failloc

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/logtext"
)

// A workspace with one project, app, whose files the outputs below name.
func locationsWorkspace(t testing.TB) (root, project string) {
	t.Helper()
	root = t.TempDir()
	for _, f := range []string{
		"apps/web/src/index.ts", "apps/web/src/sum.test.ts", "apps/web/main.go", "apps/web/main_test.go",
		"apps/web/lib/util.c", "apps/web/lib/util.h", "apps/web/src/main.rs", "apps/web/tool.py",
		"apps/web/src/esm.mjs", "apps/web/node_modules/dep/index.js", "shared/config.ts", "Makefile",
	} {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, filepath.Join(root, "apps", "web")
}

func TestParseLocations(t *testing.T) {
	root, project := locationsWorkspace(t)
	web := func(rel string) string { return filepath.Join(project, filepath.FromSlash(rel)) }
	at := func(file string, line, col int) Location { return Location{File: file, Line: line, Col: col} }
	for _, tc := range []struct {
		name, output string
		want         []Location
	}{
		{"tsc --pretty false", "src/index.ts(12,5): error TS2322: Type 'string' is not assignable to type 'number'.\n",
			[]Location{at(web("src/index.ts"), 12, 5)}},
		{"tsc pretty", "src/index.ts:12:5 - error TS2322: Type 'string' is not assignable to type 'number'.\n\n12   let x: number = 'a'\n",
			[]Location{at(web("src/index.ts"), 12, 5)}},
		{"go build", "# web\n./main.go:7:2: undefined: fmt.Printn\n",
			[]Location{at(web("main.go"), 7, 2)}},
		{"go test, no column", "--- FAIL: TestSum (0.00s)\n    main_test.go:14: got 3, want 4\nFAIL\n",
			[]Location{at(web("main_test.go"), 14, 0)}},
		{"eslint unix", web("src/index.ts") + ":3:10: Unexpected console statement. [Error/no-console]\n",
			[]Location{at(web("src/index.ts"), 3, 10)}},
		{"eslint stylish", "\n" + web("src/index.ts") + "\n   3:10  error  Unexpected console statement  no-console\n  5:1   warning  Missing semicolon  semi\n\n✖ 2 problems\n",
			[]Location{at(web("src/index.ts"), 3, 10), at(web("src/index.ts"), 5, 1)}},
		{"gcc", "In file included from lib/util.c:1,\nlib/util.h:3:5: error: unknown type name 'sizet'\n",
			[]Location{at(web("lib/util.c"), 1, 0), at(web("lib/util.h"), 3, 5)}},
		{"node stack frames", "TypeError: x is not a function\n    at add (/ABS/src/index.ts:4:11)\n    at Object.<anonymous> (src/sum.test.ts:8:3)\n    at node:internal/main:1:1\n",
			[]Location{at(web("src/index.ts"), 4, 11), at(web("src/sum.test.ts"), 8, 3)}},
		{"node ESM frame", "    at file:///ABS/src/esm.mjs:2:9\n",
			[]Location{at(web("src/esm.mjs"), 2, 9)}},
		{"python traceback", "Traceback (most recent call last):\n  File \"tool.py\", line 3, in <module>\n    main()\n  File \"/usr/lib/python3/x.py\", line 9\nValueError: bad\n",
			[]Location{at(web("tool.py"), 3, 0)}},
		{"rust", "error[E0425]: cannot find value `y` in this scope\n --> src/main.rs:2:13\n  |\n2 |     let x = y;\n",
			[]Location{at(web("src/main.rs"), 2, 13)}},
		{"vitest", " FAIL  src/sum.test.ts > sum > adds\nAssertionError: expected 3 to be 4\n ❯ src/sum.test.ts:6:17\n",
			[]Location{at(web("src/sum.test.ts"), 6, 17)}},
		{"jest", "  ● sum › adds\n\n    expect(received).toBe(expected)\n\n      at Object.toBe (src/sum.test.ts:6:17)\n",
			[]Location{at(web("src/sum.test.ts"), 6, 17)}},
		{"the workspace root after the project folder", "shared/config.ts:1:1: bad\nMakefile:3: *** missing separator.  Stop.\n",
			[]Location{at(filepath.Join(root, "shared", "config.ts"), 1, 1), at(filepath.Join(root, "Makefile"), 3, 0)}},
		{"deduplicated, in order", "src/index.ts:1:1 a\nmain.go:2:2 b\nsrc/index.ts:1:1 a again\n./src/index.ts:1:1 once more\n",
			[]Location{at(web("src/index.ts"), 1, 1), at(web("main.go"), 2, 2)}},
		{"only files that exist, inside the workspace, outside node_modules",
			"missing.ts:1:1 x\n/etc/passwd:1:1 x\nnode_modules/dep/index.js:1:1 x\n../../../etc/hosts:1:1\nsrc:1:1\n12:30:45 started\nhttp://localhost:3000/x\n",
			[]Location{}},
		{"no line 0", "src/index.ts:0:0 x\n", []Location{}},
		{"quoted, several on a line, after a timestamp", "12:30:45 'src/index.ts:4:2' then main.go:7 and src/sum.test.ts(2,3).\n",
			[]Location{at(web("src/index.ts"), 4, 2), at(web("main.go"), 7, 0), at(web("src/sum.test.ts"), 2, 3)}},
		{"not a line number", "main.go:12abc main.go(1,x) main.go(3,4 main.go:\n", []Location{}},
		{"CRLF and ANSI-free text", "src/index.ts:5:6: x\r\n", []Location{at(web("src/index.ts"), 5, 6)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			output := strings.ReplaceAll(tc.output, "/ABS/", project+"/")
			got := New(root, project).Parse(output)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Parse(%q)\n got %+v\nwant %+v", output, got, tc.want)
			}
		})
	}
}

func TestParseLocationsWithoutProject(t *testing.T) {
	root, _ := locationsWorkspace(t)
	got := New(root, "").Parse("apps/web/main.go:3:1: x\nmain.go:1:1: y\n")
	want := []Location{{File: filepath.Join(root, "apps", "web", "main.go"), Line: 3, Col: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestParseLocationsBounded(t *testing.T) {
	root, project := locationsWorkspace(t)
	var b strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&b, "main.go:%d:1: y\n", i)
	}
	if got := New(root, project).Parse(b.String()); len(got) != MaxLocations {
		t.Errorf("%d locations, want at most %d", len(got), MaxLocations)
	}
}

// BenchmarkFailureOutput is what getFailures does with a 200 KB log: plain text, cut, locations.
func BenchmarkFailureOutput(b *testing.B) {
	root, project := locationsWorkspace(b)
	log := strings.Repeat("\x1b[2m  ✓ noise line of a chatty test runner (12 ms)\x1b[0m\n", 4000) +
		"src/index.ts:1:1: error: failed\n    at check (src/sum.test.ts:9:1)\n"
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		text := logtext.Plain(log)
		logtext.Cut(text)
		if locs := New(root, project).Parse(text); len(locs) != 2 {
			b.Fatalf("locations: %v", locs)
		}
	}
}

// Findings names each location with the line that named it, which a CI annotation says.
func TestFindingsCarryTheirLine(t *testing.T) {
	root, project := locationsWorkspace(t)
	got := New(root, project).Findings("noise\n  src/index.ts:12:5 - error TS2322: bad\n")
	want := []Finding{{Location: Location{File: filepath.Join(project, "src", "index.ts"), Line: 12, Col: 5},
		Message: "src/index.ts:12:5 - error TS2322: bad"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
