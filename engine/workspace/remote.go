package workspace

import (
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/graph"
)

// remoteCacheFields are what `remoteCache` may declare.
var remoteCacheFields = []string{"url", "protocol", "tokenEnv", "team", "slug", "mode", "timeout", "signature", "reapi", "instance", "headers", "tls"}

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
		"team": &rc.Team, "slug": &rc.Slug, "mode": &rc.Mode, "instance": &rc.Instance}
	for _, k := range slices.Sorted(maps.Keys(strs)) {
		if x, ok := m[k]; ok {
			if *strs[k], err = r.str("remoteCache."+k, x); err != nil {
				return nil, err
			}
		}
	}
	if rc.Protocol == "" && (strings.HasPrefix(rc.URL, "grpc://") || strings.HasPrefix(rc.URL, "grpcs://")) {
		rc.Protocol = "reapi" // a gRPC server speaks REAPI, as VX_REMOTE_CACHE_URL's does
	}
	if err := remoteREAPI(r, m, rc); err != nil {
		return nil, err
	}
	if rc.URL != "" && rc.Protocol != "reapi" {
		u, err := url.Parse(rc.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, r.errAt("remoteCache.url", "remoteCache.url %q is not an http(s) URL", rc.URL)
		}
		if u.User != nil {
			return nil, r.errAt("remoteCache.url", "remoteCache.url must not hold credentials: name them with tokenEnv")
		}
	}
	switch rc.Protocol {
	case "", "bazel", "turbo", "reapi":
	default:
		return nil, r.errAt("remoteCache.protocol", "remoteCache.protocol must be 'bazel', 'turbo' or 'reapi', not %q", rc.Protocol)
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

// remoteREAPI reads the fields of a REAPI server into rc: reapi (its grpc:// or grpcs:// URL,
// which sets the protocol), instance, headers and tls. Headers and tls belong to a reapi server
// only.
func remoteREAPI(r reader, m map[string]any, rc *graph.RemoteCache) error {
	if x, ok := m["reapi"]; ok {
		u, err := r.str("remoteCache.reapi", x)
		if err != nil {
			return err
		}
		if rc.URL != "" {
			return r.errAt("remoteCache.reapi", "remoteCache.reapi and remoteCache.url name the server twice: keep one")
		}
		if rc.Protocol != "" && rc.Protocol != "reapi" {
			return r.errAt("remoteCache.reapi", "remoteCache.reapi is a REAPI server, not protocol %q", rc.Protocol)
		}
		rc.URL, rc.Protocol = u, "reapi"
	}
	if rc.Protocol == "reapi" && rc.URL != "" {
		if err := graph.CheckREAPIURL(rc.URL); err != nil {
			return r.errAt("remoteCache.reapi", "remoteCache.reapi: %v", err)
		}
	}
	if x, ok := m["headers"]; ok {
		hs, err := remoteHeaders(r, x)
		if err != nil {
			return err
		}
		rc.Headers = hs
	}
	if x, ok := m["tls"]; ok {
		t, err := remoteTLS(r, x)
		if err != nil {
			return err
		}
		rc.TLS = t
	}
	if rc.Protocol != "reapi" && (rc.Instance != "" || rc.Headers != nil || rc.TLS != nil) {
		return r.errAt("remoteCache", "remoteCache.instance, headers and tls are settings of a REAPI server (remoteCache.reapi)")
	}
	return nil
}

// remoteHeaders reads remoteCache.headers: an object of header name to a string, or to { env }
// naming the variable that holds a secret value.
func remoteHeaders(r reader, v any) ([]graph.RemoteHeader, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.errAt("remoteCache.headers", "remoteCache.headers must be an object of header name to value, not %s", jsType(v))
	}
	out := []graph.RemoteHeader{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		kp := "remoteCache.headers." + name
		if err := graph.CheckHeaderName(name); err != nil {
			return nil, r.errAt(kp, "%s: %v", kp, err)
		}
		h := graph.RemoteHeader{Name: strings.ToLower(name)}
		switch x := m[name].(type) {
		case string:
			h.Value = x
		case map[string]any:
			o, err := r.object(kp, x, "env")
			if err != nil {
				return nil, err
			}
			if h.Env, err = r.str(kp+".env", o["env"]); err != nil || h.Env == "" {
				return nil, r.errAt(kp, "%s must be a string or { env: 'NAME' }", kp)
			}
		default:
			return nil, r.errAt(kp, "%s must be a string or { env: 'NAME' }, not %s", kp, jsType(x))
		}
		if slices.ContainsFunc(out, func(o graph.RemoteHeader) bool { return o.Name == h.Name }) {
			return nil, r.errAt(kp, "%s: header %s is named twice (header names are case-insensitive)", kp, h.Name)
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b graph.RemoteHeader) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// remoteTLS reads remoteCache.tls: ca, cert, key and serverName, cert and key both or neither.
func remoteTLS(r reader, v any) (*graph.RemoteTLS, error) {
	m, err := r.object("remoteCache.tls", v, "ca", "cert", "key", "serverName")
	if err != nil {
		return nil, err
	}
	t := &graph.RemoteTLS{}
	fields := map[string]*string{"ca": &t.CA, "cert": &t.Cert, "key": &t.Key, "serverName": &t.ServerName}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if x, ok := m[k]; ok {
			if *fields[k], err = r.str("remoteCache.tls."+k, x); err != nil {
				return nil, err
			}
		}
	}
	if (t.Cert == "") != (t.Key == "") {
		return nil, r.errAt("remoteCache.tls", "remoteCache.tls needs cert and key together (the client's certificate and its key)")
	}
	return t, nil
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

// remoteSettings reads `remoteCache` and `remote` into ws.
func remoteSettings(r reader, top map[string]any, ws *graph.Workspace) (err error) {
	if ws.RemoteCache, err = remoteCache(r, top); err != nil {
		return err
	}
	ws.Remote, err = remoteExec(r, top)
	return err
}

// remoteExec reads `remote` (nil when absent): remote execution on a REAPI engine.
func remoteExec(r reader, top map[string]any) (*graph.RemoteExec, error) {
	v, ok := top["remote"]
	if !ok {
		return nil, nil
	}
	m, err := r.object("remote", v, "execute", "executor", "platform", "capacity", "path", "download")
	if err != nil {
		return nil, err
	}
	re := &graph.RemoteExec{}
	if x, ok := m["execute"]; ok {
		if re.Execute, err = r.boolean("remote.execute", x); err != nil {
			return nil, err
		}
	}
	if x, ok := m["executor"]; ok {
		if re.Executor, err = r.str("remote.executor", x); err != nil {
			return nil, err
		}
		if !strings.HasPrefix(re.Executor, "grpc://") && !strings.HasPrefix(re.Executor, "grpcs://") {
			return nil, r.errAt("remote.executor", "remote.executor %q is not a grpc:// or grpcs:// URL", re.Executor)
		}
	}
	if x, ok := m["platform"]; ok {
		if re.Platform, err = r.platform(x); err != nil {
			return nil, err
		}
	}
	if x, ok := m["capacity"]; ok {
		n, isNum := x.(float64)
		if i, isInt := x.(int64); isInt {
			n, isNum = float64(i), true
		}
		if !isNum || n != float64(int(n)) || n < 1 || n > 10000 {
			return nil, r.errAt("remote.capacity", "remote.capacity must be a whole number from 1 to 10000, not %v", x)
		}
		re.Capacity = int(n)
	}
	if x, ok := m["path"]; ok {
		if re.Path, err = remotePath(r, x); err != nil {
			return nil, err
		}
	}
	if x, ok := m["download"]; ok {
		if re.Download, err = r.str("remote.download", x); err != nil {
			return nil, err
		}
		if err := graph.CheckDownload("remote.download", re.Download); err != nil {
			return nil, r.errAt("remote.download", "%s", err.Error())
		}
	}
	return re, nil
}

// remotePath reads remote.path: a PATH of absolute folders, colon-separated.
func remotePath(r reader, v any) (string, error) {
	s, err := r.str("remote.path", v)
	if err != nil {
		return "", err
	}
	for _, dir := range strings.Split(s, ":") {
		if !strings.HasPrefix(dir, "/") {
			return "", r.errAt("remote.path", "remote.path %q must be absolute folders separated by ':', not %q", s, dir)
		}
	}
	return s, nil
}

// platform reads remote.platform: property names to values.
func (r reader) platform(v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.errAt("remote.platform", "remote.platform must be an object of property names to values, not %s", jsType(v))
	}
	out := make(map[string]string, len(m))
	for name, x := range m {
		s, err := r.str("remote.platform."+name, x)
		if err != nil {
			return nil, err
		}
		out[name] = s
	}
	return out, nil
}
