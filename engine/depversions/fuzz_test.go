package depversions

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"go.yaml.in/yaml/v3"
)

// fuzzFiles are the lockfile names FuzzRead parses its input as: the four text parsers (yarn.lock
// is classic or berry by content).
var fuzzFiles = []string{"package-lock.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock"}

// fuzzFS is the workspace yarn classic reads its projects from.
var fuzzFS = fstest.MapFS{
	"package.json":              {Data: []byte(`{"workspaces": ["packages/*"], "devDependencies": {"typescript": "5.4.5"}}`)},
	"packages/app/package.json": {Data: []byte(`{"dependencies": {"debug": "^4.3.4", "ms-old": "npm:ms@2.0.0", "@fx/lib": "1.0.0"}}`)},
}

// FuzzRead parses arbitrary input as each text format: no input may panic, every failure must be
// an unparsable one, and where the YAML subset scanner answers, the YAML library must answer the
// same.
func FuzzRead(f *testing.F) {
	for i, dir := range []string{"npm-v3/base", "pnpm-v9/base", "yarn-v1/base", "bun/base", "pnpm-v6/base", "yarn-berry/base"} {
		root := filepath.Join("testdata", dir)
		data, err := os.ReadFile(filepath.Join(root, Find(root)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i%4), data)
	}
	f.Add(uint8(1), []byte("lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      a:\n        specifier: ^1\n        version: 1.0.0(b@2.0.0)\nsnapshots:\n  a@1.0.0(b@2.0.0):\n    dependencies:\n      b: 2.0.0\n  b@2.0.0: {}\n"))
	f.Add(uint8(1), []byte("---\nlockfileVersion: '9.0'\n---\nlockfileVersion: '6.0'\ndependencies:\n  a: {specifier: '1', version: 1.0.0}\n"))
	f.Add(uint8(2), []byte("__metadata:\n  version: 8\n\"a@npm:^1\":\n  resolution: \"a@npm:1.0.0\"\n  dependencies:\n    b: \"npm:2\"\n"))
	f.Add(uint8(0), []byte(cyclicNpm))
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		file := fuzzFiles[int(kind)%len(fuzzFiles)]
		g, err := parse(file, data, fuzzFS)
		var unparsable *unparsableError
		if err != nil && !errors.As(err, &unparsable) {
			t.Fatalf("%s: a failure that is not unparsable: %v", file, err)
		}
		if err == nil {
			answers(g)
		}
		if err := sameAsLibrary(file, data); err != nil {
			t.Fatal(err)
		}
	})
}

// sameAsLibrary checks, for a YAML lockfile the subset scanner reads, that the YAML library reads
// it too, to the same graph.
func sameAsLibrary(file string, data []byte) error {
	var scanned, decoded *graph
	var scanErr, decodeErr error
	switch {
	case file == "pnpm-lock.yaml":
		doc, err := scanPnpm(data)
		if err != nil {
			return nil
		}
		scanned, scanErr = pnpmGraph(doc, ".")
		if doc, err = decodePnpm(data); err != nil {
			return fmt.Errorf("the scanner read what the YAML library refuses: %w", err)
		}
		decoded, decodeErr = pnpmGraph(doc, ".")
	case file == "yarn.lock" && isBerry(data):
		entries, err := scanBerry(data)
		if err != nil {
			return nil
		}
		scanned = berryGraph(entries, ".")
		entries = nil
		if err := yaml.Unmarshal(data, &entries); err != nil {
			return fmt.Errorf("the scanner read what the YAML library refuses: %w", err)
		}
		decoded = berryGraph(entries, ".")
	default:
		return nil
	}
	if (scanErr == nil) != (decodeErr == nil) {
		return fmt.Errorf("scanned: %v; decoded: %v", scanErr, decodeErr)
	}
	if scanErr != nil {
		return nil
	}
	a, b := answers(scanned), answers(decoded)
	if !maps.EqualFunc(a, b, maps.Equal) {
		return fmt.Errorf("scanned %v\ndecoded %v", a, b)
	}
	return nil
}

// answers asks the graph for every project it knows.
func answers(g *graph) map[string]map[string]string {
	l := &Lockfile{graph: g}
	out := map[string]map[string]string{}
	for dir := range g.importers {
		out[dir] = l.Packages(dir)
	}
	return out
}
