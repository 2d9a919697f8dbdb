package graph

import (
	"errors"
	"fmt"
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
