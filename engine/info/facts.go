package info

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/proc/sandbox"
)

// Facts are the original's flat facts of vx info, written beside vx's sections: vx's version,
// git's version and status caches, the workspace root, the machine's memory, the cache's folder,
// entries, bytes, versions and orphans, the task executions, hits and restoring hits of the last 24 hours,
// the flaky tasks with their counts, whether the workspace has its config lock (vx.lock), and
// the sandbox in brief. The cache's figures are 0 and its folder "" while the cache section is
// not known.
type Facts struct {
	VX string `json:"vx"`
	// Git is git's version, nil when git does not answer.
	Git            *string         `json:"git"`
	GitStatusCache *GitStatusCache `json:"gitStatusCache"`
	WorkspaceRoot  string          `json:"workspaceRoot"`
	Memory         Memory          `json:"memory"`
	CacheDir       string          `json:"cacheDir"`
	CacheEntries   int             `json:"cacheEntries"`
	CacheBytes     int64           `json:"cacheBytes"`
	CacheVersion   string          `json:"cacheVersion"`
	SchemaVersion  string          `json:"schemaVersion"`
	Orphans        Orphans         `json:"orphans"`
	Runs24h        int             `json:"runs24h"`
	Hits24h        int             `json:"hits24h"`
	// Restored24h counts, of Hits24h, the hits that restored output files.
	Restored24h int                `json:"restored24h"`
	FlakyTasks  []store.FlakyCount `json:"flakyTasks"`
	Lockfile    bool               `json:"lockfile"`
	Sandbox     SandboxFact        `json:"sandbox"`
}

// GitStatusCache says whether git's caches of the status walk are on (core.fsmonitor,
// core.untrackedCache); nil when git does not answer.
type GitStatusCache struct {
	Fsmonitor      bool `json:"fsmonitor"`
	UntrackedCache bool `json:"untrackedCache"`
}

// Memory is the machine's memory: what tasks may use, the machine's RAM, and the cgroup's limit
// when it binds (nil otherwise).
type Memory struct {
	UsableBytes      int64  `json:"usableBytes"`
	TotalBytes       int64  `json:"totalBytes"`
	CgroupLimitBytes *int64 `json:"cgroupLimitBytes"`
}

// Orphans are the blobs of the cache no entry references (and stale temporary files): what vx
// cache prune removes besides entries.
type Orphans struct {
	Artifacts int   `json:"artifacts"`
	Bytes     int64 `json:"bytes"`
}

// SandboxFact is the sandbox in the original's brief: whether this host enforces a task's
// sandbox (its filesystem part), the verdict's line, how many tasks declare one, and why vx
// cannot name a denied access it does not see (nil when no sandbox is available).
type SandboxFact struct {
	Available bool    `json:"available"`
	Reason    string  `json:"reason"`
	Declared  int     `json:"declared"`
	Untraced  *string `json:"untraced"`
}

// untracedReason is why vx cannot name every access a sandbox denied: it reads the denials from
// a failed task's output.
const untracedReason = "vx names the accesses a sandbox denied from a failed task's output: a task that tolerates a denied read passes with no word of it"

// hasLock reports whether root holds the config lock (vx.lock): the original's lockfile, its
// vx-lock.json.
func hasLock(root string) bool {
	_, err := os.Stat(filepath.Join(root, configlock.FileName))
	return err == nil
}

// factsOf answers the document's flat facts: from its sections, git, the machine and the host's
// sandbox.
func factsOf(ctx context.Context, d *Document) Facts {
	f := Facts{VX: d.Versions.VX, WorkspaceRoot: d.Root, Lockfile: hasLock(d.Root), FlakyTasks: []store.FlakyCount{}}
	f.Git, f.GitStatusCache = gitFacts(ctx, d.Root)
	if usable, total, limit, err := resources.Memory(); err == nil {
		f.Memory = Memory{UsableBytes: usable, TotalBytes: total, CgroupLimitBytes: limit}
	}
	if c, ok := d.Cache.Value.(cacheReport); ok && c.CacheInfo != nil {
		f.CacheDir, f.CacheEntries, f.CacheBytes = c.Dir, c.Entries, c.TotalBytes
		f.CacheVersion, f.SchemaVersion = c.CacheVersion, strconv.Itoa(c.SchemaVersion)
		f.Runs24h, f.Hits24h, f.Restored24h, f.Orphans = c.Runs24h, c.Hits24h, c.restored24h, c.orphans
	}
	if fl, ok := d.FlakyTasks.Value.(FlakyReport); ok && fl.counts != nil {
		f.FlakyTasks = fl.counts
	}
	s, ok := d.Sandbox.Value.(SandboxReport)
	if !ok {
		v := sandbox.Probe()
		s = SandboxReport{Enforced: v.Enforced.Filesystem, Verdict: v.Summary()}
	}
	f.Sandbox = SandboxFact{Available: s.Enforced, Reason: s.Verdict, Declared: s.TasksDeclaring}
	if s.Enforced {
		reason := untracedReason
		f.Sandbox.Untraced = &reason
	}
	return f
}

// gitFacts answers git's version and whether its status caches are on in root; nil for what
// git does not answer.
func gitFacts(ctx context.Context, root string) (*string, *GitStatusCache) {
	var version *string
	if out, err := git.Run(ctx, root, "--version"); err == nil {
		v := strings.TrimPrefix(strings.TrimSpace(out), "git version ")
		version = &v
	}
	out, err := git.Run(ctx, root, "config", "--list")
	if err != nil {
		return version, nil
	}
	// The last value of a key is the one git uses; git writes the keys in lower case.
	values := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			values[k] = strings.ToLower(strings.TrimSpace(v))
		}
	}
	on := func(key string) bool {
		switch values[key] {
		case "true", "1", "yes", "on":
			return true
		}
		return false
	}
	return version, &GitStatusCache{Fsmonitor: on("core.fsmonitor"), UntrackedCache: on("core.untrackedcache")}
}

// workersFact is the workers setting in the original's shape — count, source, cores and CPU
// quota — with vx's value beside it. The source is the original's "cores" when vx's default (the
// CPU count) applies, else vx's own: "flag" or "env".
type workersFact struct {
	Count    int      `json:"count"`
	Source   string   `json:"source"`
	Cores    int      `json:"cores"`
	CPUQuota *float64 `json:"cpuQuota"`
	Value    int64    `json:"value"`
}

// workersOf answers the workers setting s in the original's shape.
func workersOf(s Setting) workersFact {
	w := workersFact{Count: int(s.Value), Source: s.Source, Cores: runtime.NumCPU(), Value: s.Value}
	if s.Source == resources.WorkersFromCPUs {
		w.Source = "cores"
	}
	if q, ok := resources.CPUQuota(); ok {
		w.CPUQuota = &q
	}
	return w
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

// sections is a Document's own fields as JSON writes them (its Facts left out), without its
// MarshalJSON.
type sections Document

// Written is the document as JSON writes it: vx's sections, its attention lines first, the
// original's flat facts after them, and its workers, plugins and configErrors in the original's
// shapes. getWorkspaceInfo's output schema describes it.
type Written struct {
	sections
	Facts
	Workers      workersFact       `json:"workers"`
	Plugins      []pluginFact      `json:"plugins"`
	ConfigErrors []configErrorFact `json:"configErrors"`
}

// MarshalJSON writes the document as Written.
func (d Document) MarshalJSON() ([]byte, error) {
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
	return json.Marshal(Written{sections(d), d.Facts, workersOf(d.Workers), plugins, errs})
}
