package remote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

// EnvScope is the environment variable that names a run's cache scope, over the workspace's
// cacheScope and under vx run --cache-scope.
const EnvScope = "VX_CACHE_SCOPE"

// ResolveScope answers the cache scope a run uses and where it came from: flag (vx run
// --cache-scope, "" for none), else VX_CACHE_SCOPE, else the workspace's cacheScope (configured,
// "" for none), else graph.ScopeTrusted. A name that cannot be a scope is refused, naming where it
// was given; the configured one was checked when the config loaded.
func ResolveScope(flag string, getenv func(string) string, configured string) (name, source string, err error) {
	switch {
	case flag != "":
		name, source = flag, "--cache-scope"
	case getenv(EnvScope) != "":
		name, source = getenv(EnvScope), EnvScope
	case configured != "":
		name, source = configured, "cacheScope"
	default:
		return graph.ScopeTrusted, "default", nil
	}
	if err := graph.CheckCacheScope(name); err != nil {
		return "", source, fmt.Errorf("%s %q: %w", source, name, err)
	}
	return name, source, nil
}

// ScopedKey is the key under which scope keeps the entry of task key on a server: the task key
// itself for the trusted scope, else a digest of both, so that an untrusted scope's entries never
// sit under a key the trusted scope reads. It is a SHA-256 in hex, as every key a server takes.
func ScopedKey(scope, key string) string {
	if scope == graph.ScopeTrusted || scope == graph.ScopeReadOnly || scope == "" {
		return key
	}
	sum := sha256.Sum256([]byte("vx cache scope\x00" + scope + "\x00" + key))
	return hex.EncodeToString(sum[:])
}

// Scoped answers c as seen from scope: the trusted and read-only scopes read the task keys as they
// are (a read-only run is one whose settings never upload); an untrusted scope reads its own key
// first, then the trusted one, and writes its own only. c itself when the scope is trusted.
func Scoped(c Cache, scope string) Cache {
	if c == nil || scope == "" || scope == graph.ScopeTrusted || scope == graph.ScopeReadOnly {
		return c
	}
	return &scoped{Cache: c, scope: scope}
}

// scoped is a server seen from an untrusted scope.
type scoped struct {
	Cache
	scope string
}

// Fetch answers the scope's own entry of key, else the trusted one. An error from the first ask
// ends the lookup: the session counts it, and a server that is down is not asked again.
func (s *scoped) Fetch(ctx context.Context, key string, cas *store.CAS) (Meta, bool, error) {
	m, ok, err := s.Cache.Fetch(ctx, ScopedKey(s.scope, key), cas)
	if err != nil || ok {
		return m, ok, err
	}
	return s.Cache.Fetch(ctx, key, cas)
}

// Store writes the entry of key under the scope's own key only.
func (s *scoped) Store(ctx context.Context, key string, m Meta, cas *store.CAS) error {
	return s.Cache.Store(ctx, ScopedKey(s.scope, key), m, cas)
}
