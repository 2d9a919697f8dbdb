package graph

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// RemoteCache is the workspace's `remoteCache`: a shared cache server that vx reads hits from and
// fills, as a client only. Secrets are named, never held: the token and the signature key are read
// from the environment when a run starts.
type RemoteCache struct {
	// URL is the server's base URL (http or https).
	URL string `json:"url,omitempty"`
	// Protocol is "bazel" (bazel-remote's /ac/ and /cas/) or "turbo" (the Turborepo /v8 API).
	Protocol string `json:"protocol,omitempty"`
	// TokenEnv names the environment variable holding the token ("" means VX_REMOTE_CACHE_TOKEN).
	TokenEnv string `json:"tokenEnv,omitempty"`
	// Team and Slug select the Turborepo team (teamId and slug query parameters).
	Team string `json:"team,omitempty"`
	Slug string `json:"slug,omitempty"`
	// Mode is RemoteReadWrite (the default), RemoteRead or RemoteOff.
	Mode string `json:"mode,omitempty"`
	// Timeout bounds each request's wait for the server (0: the default); TimeoutText as written.
	Timeout     time.Duration `json:"-"`
	TimeoutText string        `json:"timeout,omitempty"`
	// SignatureKeyEnv names the environment variable holding the HMAC key of Turborepo artifact
	// signatures ("" for unsigned artifacts).
	SignatureKeyEnv string `json:"signatureKeyEnv,omitempty"`
	// Instance is the REAPI instance name a reapi server is asked under ("" for its default).
	Instance string `json:"instance,omitempty"`
	// Headers are the gRPC metadata sent with every call to a reapi server, in name order.
	Headers []RemoteHeader `json:"headers,omitempty"`
	// TLS names the files of a grpcs:// server's trust and of the client's own certificate
	// (mutual TLS): absolute, or relative to the workspace root. Nil for the system's roots.
	TLS *RemoteTLS `json:"tls,omitempty"`
}

// RemoteHeader is one header of a reapi server's calls: a literal value, or (a secret) the value
// of the environment variable Env when the run starts.
type RemoteHeader struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
	Env   string `json:"env,omitempty"`
}

// RemoteTLS is the TLS of a grpcs:// server: CA the PEM file of the roots its certificate must
// chain to ("" for the system's), Cert and Key the client's PEM certificate and key (both or
// neither), ServerName the name its certificate must hold ("" for the URL's host).
type RemoteTLS struct {
	CA         string `json:"ca,omitempty"`
	Cert       string `json:"cert,omitempty"`
	Key        string `json:"key,omitempty"`
	ServerName string `json:"serverName,omitempty"`
}

// The modes of a remote cache, as remoteCache.mode and vx run --remote-cache spell them.
const (
	RemoteReadWrite = "readwrite"
	RemoteRead      = "read"
	RemoteOff       = "off"
)

// IsRemoteMode reports whether mode is one of the remote cache's modes, or "" (the default).
func IsRemoteMode(mode string) bool {
	switch mode {
	case "", RemoteReadWrite, RemoteRead, RemoteOff:
		return true
	}
	return false
}

// The cache scopes every run knows: ScopeTrusted reads and writes the remote cache's task keys
// (the default branch's CI), ScopeReadOnly reads them and writes nothing. Any other name that
// CheckCacheScope accepts is an untrusted scope (a pull request's): it reads its own entries, then
// the trusted ones, and writes its own only.
const (
	ScopeTrusted  = "trusted"
	ScopeReadOnly = "read-only"
)

// MaxScopeLen bounds a cache scope's name.
const MaxScopeLen = 128

// CheckCacheScope refuses a name that cannot be a cache scope: empty, longer than MaxScopeLen, or
// holding anything but letters, digits and . _ - / @.
func CheckCacheScope(name string) error {
	if name == "" {
		return errors.New("a cache scope is a name such as trusted, read-only or pr-123, not empty")
	}
	if len(name) > MaxScopeLen {
		return fmt.Errorf("a cache scope is at most %d characters, not %d", MaxScopeLen, len(name))
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("._-/@", c)
		if !ok {
			return fmt.Errorf("a cache scope holds letters, digits and . _ - / @ only, not %q", c)
		}
	}
	return nil
}

// CheckREAPIURL refuses what cannot be a REAPI server's URL: a scheme other than grpc (plain
// text) or grpcs (TLS), no host, a path, or credentials (name those with tokenEnv or headers).
func CheckREAPIURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "grpc" && u.Scheme != "grpcs") || u.Host == "" {
		return fmt.Errorf("%q is not a grpc:// or grpcs:// URL", raw)
	}
	if u.User != nil {
		return errors.New("the URL must not hold credentials: name them with tokenEnv or headers")
	}
	if strings.Trim(u.Path, "/") != "" || u.RawQuery != "" {
		return fmt.Errorf("%q has a path: name the instance with instance", raw)
	}
	return nil
}

// CheckHeaderName refuses a name that cannot be a gRPC header of a call: empty, holding anything
// but letters, digits and - _ ., or one gRPC keeps for itself (grpc-*, a pseudo-header).
func CheckHeaderName(name string) error {
	if name == "" {
		return errors.New("a header name is not empty")
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_.", c)
		if !ok {
			return fmt.Errorf("a header name holds letters, digits and - _ . only, not %q", c)
		}
	}
	if l := strings.ToLower(name); strings.HasPrefix(l, "grpc-") || strings.HasSuffix(l, "-bin") {
		return fmt.Errorf("%s is a header gRPC keeps for itself", name)
	}
	return nil
}
