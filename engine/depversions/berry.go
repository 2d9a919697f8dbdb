package depversions

import (
	"errors"
	"strings"

	"go.yaml.in/yaml/v3"
)

// berryEntry is one package of a yarn berry lockfile (YAML), under every descriptor that
// resolved to it ("name@npm:^1.0.0, name@npm:^1.2.0"). Workspaces are entries too, resolved as
// "name@workspace:<folder>", with their own dependencies.
type berryEntry struct {
	Version    string `yaml:"version"`
	Resolution string `yaml:"resolution"`
	// Dependencies maps a name to its range ("npm:^1.0.0", "workspace:*", "npm:other@1.0.0").
	Dependencies map[string]string `yaml:"dependencies"`
}

func parseBerry(data []byte, base string) (*graph, error) {
	entries, err := scanBerry(data)
	if errors.Is(err, errNotSubset) {
		entries = nil
		err = yaml.Unmarshal(data, &entries)
	}
	if err != nil {
		return nil, unparsable("%w", err)
	}
	return berryGraph(entries, base), nil
}

// scanBerry reads the lockfile with the subset scanner (yamlscan.go).
func scanBerry(data []byte) (map[string]berryEntry, error) {
	docs, err := yamlDocs(string(data))
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 {
		return nil, errNotSubset // the library reads the first document only; leave it the choice
	}
	w := &walker{docs[0]}
	entry := func(e *yline, from, to int) (b berryEntry, err error) {
		err = w.fields(e, from, to, func(k *yline, from, to int) (err error) {
			switch k.key {
			case "version":
				b.Version, err = w.str(k, from, to)
			case "resolution":
				b.Resolution, err = w.str(k, from, to)
			case "dependencies":
				b.Dependencies, err = mapOf(w, k, from, to, w.str)
			default:
				err = w.skip(from, to)
			}
			return err
		})
		return b, err
	}
	top := yline{kind: vBlock}
	return mapOf(w, &top, 0, len(w.lines), entry)
}

func berryGraph(entries map[string]berryEntry, base string) *graph {
	b := newBuilder(base)
	byDescriptor := map[string]string{} // descriptor → entry key
	nodes := map[string]int32{}
	for k, e := range entries {
		if k == "__metadata" {
			continue
		}
		for _, d := range strings.Split(k, ",") {
			byDescriptor[strings.TrimSpace(d)] = k
		}
		if !localRef(berryRef(e.Resolution)) {
			nodes[k] = b.node()
		}
	}
	resolve := func(name, rng string) (edge, bool) {
		k, ok := byDescriptor[name+"@"+rng]
		if !ok && !strings.Contains(rng, ":") {
			k, ok = byDescriptor[name+"@npm:"+rng] // ranges written before berry added the protocol
		}
		id, external := nodes[k]
		if !ok || !external {
			return edge{}, false
		}
		e := entries[k]
		real, ref, _ := splitIdent(e.Resolution)
		version := ref
		if strings.HasPrefix(ref, "npm:") {
			version = e.Version
		}
		return b.edge(name, versionText(name, real, version), id), true
	}
	for k, e := range entries {
		if k == "__metadata" {
			continue
		}
		from, isNode := nodes[k]
		var key string
		if dir, ok := strings.CutPrefix(berryRef(e.Resolution), "workspace:"); ok {
			key = b.importer(dir)
		} else if !isNode {
			continue // a link or portal: not followed
		}
		for name, ref := range e.Dependencies {
			d, ok := resolve(name, ref)
			switch {
			case !ok:
			case isNode:
				b.depend(from, d)
			default:
				b.direct(key, d)
			}
		}
	}
	return b.done()
}

// berryRef answers the reference part of a resolution: "npm:1.0.0" of "name@npm:1.0.0".
func berryRef(resolution string) string {
	_, ref, _ := splitIdent(resolution)
	return ref
}
