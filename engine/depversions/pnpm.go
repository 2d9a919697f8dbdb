package depversions

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pnpmDoc is the part of a pnpm-lock.yaml document the graph needs.
//
// lockfileVersion 6.x: "packages" keys are dependency paths "/name@version(peers)" (or a
// resolution such as "file:packages/lib") and hold each package's dependencies. 9.x: "packages"
// keys are "name@version" and hold only metadata; "snapshots" keys are "name@version(peers)" and
// hold the dependencies. In both, importers map a project folder to its direct dependencies, whose
// version is a reference relative to the dependency's name ("1.0.0", "1.0.0(peer@2.0.0)",
// "link:../lib", or for an alias "other@1.0.0" in 9.x, "/other@1.0.0" in 6.x). A 6.x lockfile of a
// single project keeps the root importer's fields at the top level.
type pnpmDoc struct {
	LockfileVersion string                  `yaml:"lockfileVersion"`
	Importers       map[string]pnpmImporter `yaml:"importers"`
	pnpmImporter    `yaml:",inline"`
	Packages        map[string]pnpmPackage `yaml:"packages"`
	Snapshots       map[string]pnpmPackage `yaml:"snapshots"`
}

type pnpmImporter struct {
	Dependencies         map[string]pnpmDep `yaml:"dependencies"`
	DevDependencies      map[string]pnpmDep `yaml:"devDependencies"`
	OptionalDependencies map[string]pnpmDep `yaml:"optionalDependencies"`
}

type pnpmDep struct {
	Version string `yaml:"version"`
}

// pnpmPackage is a 6.x package or a 9.x snapshot: the references its dependencies resolved to.
type pnpmPackage struct {
	Dependencies         map[string]string `yaml:"dependencies"`
	OptionalDependencies map[string]string `yaml:"optionalDependencies"`
}

func parsePnpm(data []byte, base string) (*graph, error) {
	doc, err := scanPnpm(data)
	if errors.Is(err, errNotSubset) {
		doc, err = decodePnpm(data)
	}
	if err != nil {
		return nil, unparsable("%w", err)
	}
	return pnpmGraph(doc, base)
}

// decodePnpm decodes the lockfile with the YAML library: the reference reading, and the one taken
// when scanPnpm meets YAML outside the subset it reads. The graph is in the last document; pnpm
// 11 and later may write an env document (config dependencies, pnpm itself) before it.
func decodePnpm(data []byte) (*pnpmDoc, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var last *pnpmDoc
	for {
		var doc pnpmDoc
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		last = &doc
	}
	if last == nil {
		return nil, errors.New("empty document")
	}
	return last, nil
}

func pnpmGraph(doc *pnpmDoc, base string) (*graph, error) {
	var v9 bool
	switch {
	case strings.HasPrefix(doc.LockfileVersion, "6."):
	case strings.HasPrefix(doc.LockfileVersion, "9."):
		v9 = true
	default:
		return nil, unparsable("unsupported lockfileVersion %q", doc.LockfileVersion)
	}
	pkgs, relative := doc.Packages, refToRelative6
	if v9 {
		pkgs, relative = doc.Snapshots, refToRelative9
	}
	importers := doc.Importers
	if len(importers) == 0 {
		importers = map[string]pnpmImporter{".": doc.pnpmImporter}
	}

	b := newBuilder(base)
	nodes := make(map[string]int32, len(pkgs))
	for k := range pkgs {
		nodes[k] = b.node()
	}
	// resolve turns a dependency's reference into the edge to its package; ok is false for a
	// workspace or file: folder and for a package the lockfile does not hold.
	resolve := func(name, ref string) (e edge, ok bool) {
		key := relative(ref, name)
		if key == "" {
			return edge{}, false
		}
		id, found := nodes[key]
		if !found {
			return edge{}, false
		}
		real, version := pnpmKeyVersion(key)
		if localRef(version) {
			return edge{}, false
		}
		return b.edge(name, versionText(name, real, version), id), true
	}
	for k, pkg := range pkgs {
		for _, deps := range []map[string]string{pkg.Dependencies, pkg.OptionalDependencies} {
			for name, ref := range deps {
				if e, ok := resolve(name, ref); ok {
					b.depend(nodes[k], e)
				}
			}
		}
	}
	for dir, imp := range importers {
		key := b.importer(dir)
		for _, deps := range []map[string]pnpmDep{imp.Dependencies, imp.DevDependencies, imp.OptionalDependencies} {
			for name, dep := range deps {
				if e, ok := resolve(name, dep.Version); ok {
					b.direct(key, e)
				}
			}
		}
	}
	return b.done(), nil
}

// refToRelative9 is pnpm 9's dependency-path refToRelative: the snapshot key a reference names,
// "" for a link.
func refToRelative9(ref, name string) string {
	if ref == "" || strings.HasPrefix(ref, "link:") {
		return ""
	}
	if ref[0] == '@' {
		return ref // a scoped alias: "@scope/real@1.0.0"
	}
	at := strings.IndexByte(ref, '@')
	if at < 0 {
		return name + "@" + ref
	}
	colon, paren := strings.IndexByte(ref, ':'), strings.IndexByte(ref, '(')
	if (colon < 0 || at < colon) && (paren < 0 || at < paren) {
		return ref // an alias: "real@1.0.0"
	}
	return name + "@" + ref // an "@" inside a URL or a peer suffix
}

// refToRelative6 is pnpm 8's refToRelative for lockfileVersion 6: the packages key a reference
// names, "" for a link.
func refToRelative6(ref, name string) string {
	switch {
	case ref == "" || strings.HasPrefix(ref, "link:"):
		return ""
	case strings.HasPrefix(ref, "file:"):
		return ref
	}
	paren := strings.IndexByte(ref, '(')
	if !strings.Contains(ref, "/") || paren >= 0 && strings.LastIndexByte(ref[:paren], '/') < 0 {
		return "/" + name + "@" + ref
	}
	return ref // "/real@1.0.0" (an alias) or a resolution such as "github.com/owner/repo/<commit>"
}

// pnpmKeyVersion splits a packages or snapshots key into the package's real name and its version
// text, peer suffix removed: "/@scope/a@1.0.0(b@2.0.0)" → "@scope/a", "1.0.0". A key that is not
// name@version (a 6.x resolution such as "file:packages/lib") answers "" and the whole key.
func pnpmKeyVersion(key string) (real, version string) {
	ident := strings.TrimPrefix(key, "/")
	if ident == key && strings.HasPrefix(key, "file:") {
		return "", key
	}
	name, version, ok := splitIdent(ident)
	if !ok || ident == key && strings.Contains(name, ":") {
		return "", stripPeers(key)
	}
	return name, stripPeers(version)
}

// stripPeers cuts the peer suffix "(peer@1.0.0)(other@2.0.0)" off a version. Two resolutions
// differing only in their peers stay distinct in a closure through the peers themselves, which
// are the resolution's dependencies.
func stripPeers(version string) string {
	if i := strings.IndexByte(version, '('); i > 0 {
		return version[:i]
	}
	return version
}

// scanPnpm reads the lockfile with the subset scanner (yamlscan.go); errNotSubset sends it to
// decodePnpm. Like decodePnpm it decodes every document and answers the last.
func scanPnpm(data []byte) (*pnpmDoc, error) {
	docs, err := yamlDocs(string(data))
	if err != nil {
		return nil, err
	}
	var doc *pnpmDoc
	for _, lines := range docs {
		if doc, err = scanPnpmDoc(&walker{lines}); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

func scanPnpmDoc(w *walker) (*pnpmDoc, error) {
	doc := &pnpmDoc{}
	pkg := func(e *yline, from, to int) (p pnpmPackage, err error) {
		err = w.fields(e, from, to, func(k *yline, from, to int) (err error) {
			switch k.key {
			case "dependencies":
				p.Dependencies, err = mapOf(w, k, from, to, w.str)
			case "optionalDependencies":
				p.OptionalDependencies, err = mapOf(w, k, from, to, w.str)
			default:
				err = w.skip(from, to)
			}
			return err
		})
		return p, err
	}
	dep := func(e *yline, from, to int) (d pnpmDep, err error) {
		err = w.fields(e, from, to, func(k *yline, from, to int) (err error) {
			if k.key == "version" {
				d.Version, err = w.str(k, from, to)
				return err
			}
			return w.skip(from, to)
		})
		return d, err
	}
	// importerField decodes k into imp when k is one of an importer's fields.
	importerField := func(imp *pnpmImporter, k *yline, from, to int) (ok bool, err error) {
		switch k.key {
		case "dependencies":
			imp.Dependencies, err = mapOf(w, k, from, to, dep)
		case "devDependencies":
			imp.DevDependencies, err = mapOf(w, k, from, to, dep)
		case "optionalDependencies":
			imp.OptionalDependencies, err = mapOf(w, k, from, to, dep)
		default:
			return false, nil
		}
		return true, err
	}
	importer := func(e *yline, from, to int) (imp pnpmImporter, err error) {
		err = w.fields(e, from, to, func(k *yline, from, to int) error {
			if ok, err := importerField(&imp, k, from, to); ok {
				return err
			}
			return w.skip(from, to)
		})
		return imp, err
	}
	err := w.document(func(k *yline, from, to int) (err error) {
		if ok, err := importerField(&doc.pnpmImporter, k, from, to); ok {
			return err
		}
		switch k.key {
		case "lockfileVersion":
			doc.LockfileVersion, err = w.str(k, from, to)
		case "importers":
			doc.Importers, err = mapOf(w, k, from, to, importer)
		case "packages":
			doc.Packages, err = mapOf(w, k, from, to, pkg)
		case "snapshots":
			doc.Snapshots, err = mapOf(w, k, from, to, pkg)
		default:
			err = w.skip(from, to)
		}
		return err
	})
	return doc, err
}
