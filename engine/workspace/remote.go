package workspace

import (
	"maps"
	"net/url"
	"slices"

	"github.com/vzn/vx/engine/graph"
)

// remoteCacheFields are what `remoteCache` may declare.
var remoteCacheFields = []string{"url", "protocol", "tokenEnv", "team", "slug", "mode", "timeout", "signature"}

// remoteCache reads `remoteCache` (nil when absent): the shared cache server, checked here so
// that a typo is a config error naming the line, not a silent miss at every run.
func remoteCache(r reader, top map[string]any) (*graph.RemoteCache, error) {
	v, ok := top["remoteCache"]
	if !ok || v == nil {
		return nil, nil
	}
	m, err := r.object("remoteCache", v, remoteCacheFields...)
	if err != nil {
		return nil, err
	}
	rc := &graph.RemoteCache{}
	strs := map[string]*string{"url": &rc.URL, "protocol": &rc.Protocol, "tokenEnv": &rc.TokenEnv,
		"team": &rc.Team, "slug": &rc.Slug, "mode": &rc.Mode}
	for _, k := range slices.Sorted(maps.Keys(strs)) {
		if x, ok := m[k]; ok {
			if *strs[k], err = r.str("remoteCache."+k, x); err != nil {
				return nil, err
			}
		}
	}
	if rc.URL != "" {
		u, err := url.Parse(rc.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, r.errAt("remoteCache.url", "remoteCache.url %q is not an http(s) URL", rc.URL)
		}
		if u.User != nil {
			return nil, r.errAt("remoteCache.url", "remoteCache.url must not hold credentials: name them with tokenEnv")
		}
	}
	switch rc.Protocol {
	case "", "bazel", "turbo":
	default:
		return nil, r.errAt("remoteCache.protocol", "remoteCache.protocol must be 'bazel' or 'turbo', not %q", rc.Protocol)
	}
	if !graph.IsRemoteMode(rc.Mode) {
		return nil, r.errAt("remoteCache.mode", "remoteCache.mode must be 'readwrite', 'read' or 'off', not %q", rc.Mode)
	}
	if x, ok := m["timeout"]; ok {
		if rc.Timeout, rc.TimeoutText, err = r.duration("remoteCache.timeout", x); err != nil {
			return nil, err
		}
	}
	if x, ok := m["signature"]; ok {
		sig, err := r.object("remoteCache.signature", x, "keyEnv")
		if err != nil {
			return nil, err
		}
		if k, ok := sig["keyEnv"]; ok {
			if rc.SignatureKeyEnv, err = r.str("remoteCache.signature.keyEnv", k); err != nil {
				return nil, err
			}
		}
		if rc.SignatureKeyEnv == "" {
			return nil, r.errAt("remoteCache.signature", "remoteCache.signature needs keyEnv: the environment variable holding the key")
		}
	}
	return rc, nil
}

// cacheScope reads `cacheScope` ("" when absent): the remote cache scope a run writes to.
func cacheScope(r reader, top map[string]any) (string, error) {
	v, ok := top["cacheScope"]
	if !ok {
		return "", nil
	}
	name, err := r.str("cacheScope", v)
	if err != nil {
		return "", err
	}
	if err := graph.CheckCacheScope(name); err != nil {
		return "", r.errAt("cacheScope", "cacheScope %q: %v", name, err)
	}
	return name, nil
}
