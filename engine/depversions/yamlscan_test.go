package depversions

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A small lockfile: the root depends on a (through an alias), a on b.
const smallPnpm = `lockfileVersion: '9.0'

importers:

  .:
    dependencies:
      alias-a:
        specifier: npm:a@^1
        version: a@1.0.0(b@2.0.0)

snapshots:

  a@1.0.0(b@2.0.0):
    dependencies:
      b: 2.0.0

  b@2.0.0: {}
`

var smallWant = map[string]string{"alias-a": "npm:a@1.0.0", "b": "2.0.0"}

// TestScannerSubset shows what the subset scanner reads itself and what it leaves to the YAML
// library; either way the answer is the same.
func TestScannerSubset(t *testing.T) {
	fixture, err := os.ReadFile(filepath.Join("testdata", "pnpm-v9", "base", "pnpm-lock.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		text    string
		scanned bool // read by the scanner, not the fallback
	}{
		{"plain", smallPnpm, true},
		{"CRLF", strings.ReplaceAll(smallPnpm, "\n", "\r\n"), true},
		{"comments", strings.Replace(smallPnpm, "      b: 2.0.0\n", "      # the peer\n      b: 2.0.0 # resolved\n", 1), true},
		{"quoted", strings.Replace(smallPnpm, "  b@2.0.0: {}", "  'b@2.0.0': {}\n  'it''s@1.0.0': {}", 1), true},
		{"compact sequence", strings.Replace(smallPnpm, "      b: 2.0.0\n", "      b: 2.0.0\n    transitivePeerDependencies:\n    - supports-color\n", 1), true},
		{"flow", strings.Replace(smallPnpm, "  b@2.0.0: {}", "  b@2.0.0:\n    cpu: [x64, 'arm64']\n    resolution: {tarball: 'https://x/b.tgz', integrity: sha512-x}", 1), true},
		{"two documents", "---\nlockfileVersion: '9.0'\nimporters:\n  .:\n    configDependencies: {}\n---\n" + smallPnpm, true},
		{"block scalar", strings.Replace(smallPnpm, "  b@2.0.0: {}", "  b@2.0.0:\n    deprecated: |\n      no: longer\n      - supported", 1), false},
		{"anchor", strings.Replace(smallPnpm, "b: 2.0.0", "b: &v 2.0.0", 1), false},
		{"double-quoted", strings.Replace(smallPnpm, "b: 2.0.0", `b: "2.0.0"`, 1), true},
		{"double-quoted escape", strings.Replace(smallPnpm, "b: 2.0.0", `b: "2.0.\u0030"`, 1), false},
		{"tab", strings.Replace(smallPnpm, "b: 2.0.0", "b:\t2.0.0", 1), false},
		{"multi-line plain", strings.Replace(smallPnpm, "b: 2.0.0", "b: 2.0\n        .0", 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := scanPnpm([]byte(tc.text))
			if tc.scanned && err != nil || !tc.scanned && !errors.Is(err, errNotSubset) {
				t.Errorf("scanPnpm: %v; want scanned %v", err, tc.scanned)
			}
			if err := sameAsLibrary("pnpm-lock.yaml", []byte(tc.text)); err != nil {
				t.Error(err)
			}
			g, err := parsePnpm([]byte(tc.text), ".")
			if err != nil {
				t.Fatal(err)
			}
			want := smallWant
			if tc.name == "multi-line plain" {
				want = map[string]string{"alias-a": "npm:a@1.0.0"} // "2.0 .0" names no snapshot
			}
			if got := answers(g)["."]; !maps.Equal(got, want) {
				t.Errorf("Packages(.) = %v, want %v", got, want)
			}
		})
	}
	if err := sameAsLibrary("pnpm-lock.yaml", []byte(strings.ReplaceAll(string(fixture), "\n", "\r\n"))); err != nil {
		t.Errorf("fixture with CRLF: %v", err)
	}
}
