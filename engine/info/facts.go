package info

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"github.com/vzn/vx/engine/graph"
)

// Facts are the original's flat facts of vx info, written beside vx's sections: vx's version, the
// workspace root, the cache's folder, entries, bytes and versions, the runs and hits of the last
// 24 hours, and whether the workspace has a package manager's lockfile. The cache's figures are
// 0 and its folder "" while the cache section is not known.
type Facts struct {
	VX            string `json:"vx"`
	WorkspaceRoot string `json:"workspaceRoot"`
	CacheDir      string `json:"cacheDir"`
	CacheEntries  int    `json:"cacheEntries"`
	CacheBytes    int64  `json:"cacheBytes"`
	CacheVersion  string `json:"cacheVersion"`
	SchemaVersion string `json:"schemaVersion"`
	Runs24h       int    `json:"runs24h"`
	Hits24h       int    `json:"hits24h"`
	Lockfile      bool   `json:"lockfile"`
}

// lockfiles are the package managers' lockfiles a workspace root may hold.
var lockfiles = []string{"package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock", "bun.lock", "bun.lockb"}

// hasLockfile reports whether root holds a package manager's lockfile.
func hasLockfile(root string) bool {
	for _, name := range lockfiles {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			return true
		}
	}
	return false
}

// facts answers the document's flat facts from its sections.
func (d *Document) facts() Facts {
	f := Facts{VX: d.Versions.VX, WorkspaceRoot: d.Root, Lockfile: d.lockfile}
	if c, ok := d.Cache.Value.(cacheReport); ok && c.CacheInfo != nil {
		f.CacheDir, f.CacheEntries, f.CacheBytes = c.Dir, c.Entries, c.TotalBytes
		f.CacheVersion, f.SchemaVersion = c.CacheVersion, strconv.Itoa(c.SchemaVersion)
		f.Runs24h, f.Hits24h = c.Runs24h, c.Hits24h
	}
	return f
}

// workersFact is the workers setting with the original's count, cores and CPU quota beside vx's
// value and source (vx's sources: flag, env, default; the quota null: vx does not report it).
type workersFact struct {
	Setting
	Count    int      `json:"count"`
	Cores    int      `json:"cores"`
	CPUQuota *float64 `json:"cpuQuota"`
}

// pluginFact is a plugin with the original's seams: the parts of vx it plugs into (commands, a
// stage).
type pluginFact struct {
	graph.Plugin
	Seams []string `json:"seams"`
}

// configErrorFact is a config error with the original's path (the file) beside vx's file.
type configErrorFact struct {
	ConfigError
	Path string `json:"path"`
}

// MarshalJSON writes the document, its attention lines first, with the original's flat facts
// after vx's sections, and its workers, plugins and configErrors with the original's fields.
func (d Document) MarshalJSON() ([]byte, error) {
	type plain Document
	plugins := make([]pluginFact, len(d.Plugins))
	for i, p := range d.Plugins {
		plugins[i] = pluginFact{Plugin: p, Seams: []string{}}
		if len(p.Commands) > 0 {
			plugins[i].Seams = append(plugins[i].Seams, "commands")
		}
		if p.Stage {
			plugins[i].Seams = append(plugins[i].Seams, "stage")
		}
	}
	errs := make([]configErrorFact, len(d.ConfigErrors))
	for i, e := range d.ConfigErrors {
		errs[i] = configErrorFact{ConfigError: e, Path: e.File}
	}
	return json.Marshal(struct {
		plain
		Facts
		Workers      workersFact       `json:"workers"`
		Plugins      []pluginFact      `json:"plugins"`
		ConfigErrors []configErrorFact `json:"configErrors"`
	}{plain(d), d.facts(), workersFact{Setting: d.Workers, Count: int(d.Workers.Value), Cores: runtime.NumCPU()}, plugins, errs})
}
