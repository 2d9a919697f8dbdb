package cache

import (
	"fmt"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
)

// RemoteConfig is a run's resolved remote cache; the zero value is none.
type RemoteConfig struct {
	settings remote.Settings
}

// ResolveRemote resolves a run's remote cache: the workspace's remoteCache (cfg, nil for none),
// the environment, and mode (vx run --remote-cache, "" for the workspace's). A setting that cannot
// work is one notice and no remote cache: the run goes on with the local cache.
func ResolveRemote(cfg *graph.RemoteCache, getenv func(string) string, mode string, notice func(string)) RemoteConfig {
	s, err := remote.Resolve(cfg, getenv, mode)
	if err != nil {
		if notice != nil {
			notice(fmt.Sprintf("remote cache off: %v", err))
		}
		s.Mode = graph.RemoteOff
	}
	return RemoteConfig{settings: s}
}

// Secrets are the values to mask wherever the remote cache could show up (its token, signature
// key, a password in its URL).
func (r RemoteConfig) Secrets() []string { return r.settings.Secrets() }

// WithScope answers r as seen from the cache scope name (remote.ResolveScope): an untrusted scope
// reads its own entries, then the trusted ones, and writes its own only; the read-only scope never
// uploads (a readwrite mode reads only). The local cache is the same in every scope.
func (r RemoteConfig) WithScope(name string) RemoteConfig {
	if name == graph.ScopeTrusted {
		name = ""
	}
	r.settings.Scope = name
	if name == graph.ScopeReadOnly && r.settings.Mode == graph.RemoteReadWrite {
		r.settings.Mode = graph.RemoteRead
	}
	return r
}

// WithRoot answers r with relative TLS file paths of a reapi server read from root (the
// workspace root).
func (r RemoteConfig) WithRoot(root string) RemoteConfig {
	r.settings.Root = root
	return r
}

// backend answers the client of the configured server; nil when the mode is off.
func (r RemoteConfig) backend() Backend {
	c := remote.New(r.settings)
	if c == nil {
		return nil
	}
	return c
}
