package depversions

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genPnpmLock writes a pnpm-lock.yaml (lockfileVersion 9.0) shaped like a large monorepo's:
// npkg packages in four layers (leaves; packages depending on leaves; and so on up), a tenth of
// the upper ones resolved against a peer, a few dependency cycles, and nimp importers with up to
// 190 dependencies each, one of them a workspace link.
func genPnpmLock(npkg, nimp int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	type pkg struct {
		name, version, peer string // peer: the peer suffix of its snapshot key, or ""
		deps                []int
	}
	pkgs := make([]pkg, npkg)
	layerStart := func(l int) int { return []int{0, npkg * 4 / 10, npkg * 7 / 10, npkg * 9 / 10, npkg}[l] }
	for i := range pkgs {
		p := &pkgs[i]
		p.name = fmt.Sprintf("pkg-%s-%d", strings.Repeat("x", i%7), i)
		if i%5 == 0 {
			p.name = fmt.Sprintf("@scope%d/%s", i%23, p.name)
		}
		p.version = fmt.Sprintf("%d.%d.%d", 1+i%9, i%17, i%5)
	}
	host := 7 // a leaf others have as a peer, as react or typescript
	for l := 1; l < 4; l++ {
		for i := layerStart(l); i < layerStart(l+1); i++ {
			for range 2 + rng.IntN(7) {
				pkgs[i].deps = append(pkgs[i].deps, rng.IntN(layerStart(l)))
			}
			if rng.IntN(10) == 0 {
				pkgs[i].peer = fmt.Sprintf("(%s@%s)", pkgs[host].name, pkgs[host].version)
				pkgs[i].deps = append(pkgs[i].deps, host)
			}
		}
	}
	for i := layerStart(1); i < layerStart(1)+20; i += 2 { // cycles of two
		pkgs[i].deps = append(pkgs[i].deps, i+1)
		pkgs[i+1].deps = append(pkgs[i+1].deps, i)
	}
	quote := func(s string) string {
		if s[0] == '@' {
			return "'" + s + "'"
		}
		return s
	}
	ref := func(i int) string { return pkgs[i].version + pkgs[i].peer }

	var b strings.Builder
	b.WriteString("lockfileVersion: '9.0'\n\nsettings:\n  autoInstallPeers: true\n  excludeLinksFromLockfile: false\n\nimporters:\n\n")
	for im := range nimp {
		fmt.Fprintf(&b, "  packages/project-%d:\n", im)
		for _, section := range []struct {
			name  string
			count int
		}{{"dependencies", 150}, {"devDependencies", 40}} {
			fmt.Fprintf(&b, "    %s:\n", section.name)
			seen := map[int]bool{}
			for range section.count {
				i := layerStart(2) + rng.IntN(npkg-layerStart(2))
				if seen[i] {
					continue
				}
				seen[i] = true
				fmt.Fprintf(&b, "      %s:\n        specifier: ^%s\n        version: %s\n", quote(pkgs[i].name), pkgs[i].version, ref(i))
			}
			if section.name == "dependencies" && im > 0 {
				fmt.Fprintf(&b, "      '@repo/project-%d':\n        specifier: workspace:*\n        version: link:../project-%d\n", im-1, im-1)
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("packages:\n\n")
	for _, p := range pkgs {
		fmt.Fprintf(&b, "  %s:\n    resolution: {integrity: sha512-%s==}\n    engines: {node: '>=14.17'}\n", quote(p.name+"@"+p.version), strings.Repeat("Zm9v", 21)+"ab")
		if p.peer != "" {
			fmt.Fprintf(&b, "    peerDependencies:\n      %s: '>=1.0.0'\n", quote(pkgs[host].name))
		}
		if len(p.name)%4 == 0 {
			b.WriteString("    hasBin: true\n    cpu: [x64, arm64]\n    os: [linux, darwin]\n")
		}
		if len(p.name)%9 == 0 {
			b.WriteString("    deprecated: This version is no longer supported; upgrade to the latest major, which fixes a memory leak.\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("snapshots:\n\n")
	for _, p := range pkgs {
		key := quote(p.name + "@" + p.version + p.peer)
		if len(p.deps) == 0 {
			fmt.Fprintf(&b, "  %s: {}\n\n", key)
			continue
		}
		fmt.Fprintf(&b, "  %s:\n    dependencies:\n", key)
		seen := map[int]bool{}
		for _, d := range p.deps {
			if !seen[d] {
				seen[d] = true
				fmt.Fprintf(&b, "      %s: %s\n", quote(pkgs[d].name), ref(d))
			}
		}
		if len(p.deps) > 5 {
			b.WriteString("    transitivePeerDependencies:\n      - supports-color\n")
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}

// BenchmarkPnpmLarge reads a 5 MB pnpm-lock.yaml (3,000 packages, 300 importers): "read" as Read
// does; "read+packages" also answers every importer; "yaml" reads it through the YAML library (the
// fallback) to the same graph, for comparison. Besides wall time each reports cpu-ms/op, the
// process's CPU time per operation (GC included), which a busy machine disturbs less.
func BenchmarkPnpmLarge(b *testing.B) {
	data := genPnpmLock(3000, 300)
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "pnpm-lock.yaml"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	read := func(b *testing.B) *Lockfile {
		l, err := Read(root, "pnpm-lock.yaml")
		if err != nil || l.Unparsed {
			b.Fatal(err, l.Err)
		}
		return l
	}
	for _, bc := range []struct {
		name string
		op   func(b *testing.B)
	}{
		{"read", func(b *testing.B) { read(b) }},
		{"read+packages", func(b *testing.B) {
			l := read(b)
			for dir := range l.graph.importers {
				l.Packages(dir)
			}
		}},
		{"yaml", func(b *testing.B) {
			doc, err := decodePnpm(data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := pnpmGraph(doc, "."); err != nil {
				b.Fatal(err)
			}
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			start := cpuTime()
			for b.Loop() {
				bc.op(b)
			}
			b.ReportMetric(float64((cpuTime()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// TestPnpmLarge checks the benchmark's lockfile: its size, that the scanner reads it (no
// fallback) to the graph the YAML library reads, and that projects answer their closures.
func TestPnpmLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large lockfile")
	}
	data := genPnpmLock(3000, 300)
	if len(data) < 4<<20 || len(data) > 6<<20 {
		t.Errorf("generated %d bytes, want about 5 MB", len(data))
	}
	if _, err := scanPnpm(data); err != nil {
		t.Fatalf("the scanner did not read it: %v", err)
	}
	if err := sameAsLibrary("pnpm-lock.yaml", data); err != nil {
		t.Fatal(err)
	}
	doc, _ := scanPnpm(data)
	g, err := pnpmGraph(doc, ".")
	if err != nil {
		t.Fatal(err)
	}
	if len(g.importers) != 300 || len(g.deps) != 3000 {
		t.Fatalf("%d importers, %d packages", len(g.importers), len(g.deps))
	}
	sizes := 0
	for _, a := range answers(g) {
		sizes += len(a)
	}
	t.Logf("%d bytes; %d package names per project on average", len(data), sizes/300)
}
