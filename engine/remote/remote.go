// Package remote is vx's client of the shared cache servers teams already run: bazel-remote (its
// HTTP /ac/ and /cas/ API), any server of the Turborepo remote cache API (/v8/artifacts), such as
// Vercel's or ducktors/turborepo-remote-cache, and any server of the Remote Execution API v2 over
// gRPC (bazel-remote's gRPC port, Buildbarn, BuildBuddy, NativeLink). vx is only ever a client.
//
// A cache entry travels as what the local cache keeps: its outputs archive (one blob), its masked
// log (another) and a small JSON document, Meta, that lists the archive's files with their hashes.
// Whatever a server answers is checked before the runner sees it: every blob's SHA-256 against its
// digest as it streams to the local blob store, sizes bounded, a Turborepo artifact's signature;
// package cache then restores through the same hardened extraction as a local hit, which writes only
// the task's declared outputs. A server that is down, slow or wrong costs a miss and one warning,
// never a failed or stalled run (package cache's session). Only package cache uses these clients.
package remote

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/store"
)

// The protocols vx speaks.
const (
	ProtocolBazel = "bazel"
	ProtocolTurbo = "turbo"
	ProtocolREAPI = "reapi"
)

// The environment variables that configure a remote cache for CI, over the workspace's remoteCache.
const (
	EnvURL      = "VX_REMOTE_CACHE_URL"
	EnvToken    = "VX_REMOTE_CACHE_TOKEN"
	EnvProtocol = "VX_REMOTE_CACHE_PROTOCOL"
)

// DefaultTimeout bounds a request's wait for the server's answer when the config names none.
const DefaultTimeout = 5 * time.Second

// MetaVersion is the layout of Meta this vx writes and reads; another is a miss.
const MetaVersion = 1

// maxMetaBytes bounds an entry's Meta document (its file listing).
const maxMetaBytes = 16 << 20

// MaxBlobBytes bounds one blob a server may send (an outputs archive or a log).
const MaxBlobBytes = 4 << 30

// Meta is the document that describes one remote entry: what store.Entry holds for it locally.
type Meta struct {
	Version     int                `json:"v"`
	TaskID      string             `json:"taskId"`
	Outputs     []store.OutputFile `json:"outputs"`
	OutputsBlob string             `json:"outputsBlob,omitempty"`
	OutputsSize int64              `json:"outputsSize"`
	LogBlob     string             `json:"logBlob"`
	LogSize     int64              `json:"logSize"`
	DurationMs  int64              `json:"durationMs"`
	// FilesInCAS says that each output file's blob is in the server's CAS under the hash the
	// listing gives (a remote task's entry): a reader fetches the files it wants, not the
	// archive, which such an entry has only when its outputs came back where it was made.
	FilesInCAS bool `json:"filesInCas,omitempty"`
}

// check refuses a document that cannot describe an entry of this vx.
func (m *Meta) check() error {
	if m.Version != MetaVersion {
		return fmt.Errorf("%w: entry layout %d", ErrCorrupt, m.Version)
	}
	if m.OutputsSize < 0 || m.OutputsSize > MaxBlobBytes || m.LogSize < 0 || m.LogSize > MaxBlobBytes ||
		(m.OutputsBlob == "" && (m.OutputsSize != 0 || len(m.Outputs) != 0 && !m.FilesInCAS)) {
		return fmt.Errorf("%w: entry sizes", ErrCorrupt)
	}
	if !isDigest(m.LogBlob) || (m.OutputsBlob != "" && !isDigest(m.OutputsBlob)) {
		return fmt.Errorf("%w: entry digests", ErrCorrupt)
	}
	return nil
}

// MetaOf describes a local cache entry for upload.
func MetaOf(e store.Entry, outputsSize, logSize int64) Meta {
	return Meta{Version: MetaVersion, TaskID: e.TaskID, Outputs: e.Outputs, OutputsBlob: e.OutputsBlob,
		OutputsSize: outputsSize, LogBlob: e.LogBlob, LogSize: logSize, DurationMs: e.Duration.Milliseconds(),
		FilesInCAS: e.OutputsRemote()}
}

// Entry is the local cache entry a fetched Meta makes, for key.
func (m Meta) Entry(key string, t *graph.Task, now time.Time) store.Entry {
	if m.FilesInCAS && len(m.Outputs) > 0 {
		// Its outputs stay remote (store.Entry.OutputsRemote) until a run fetches its files.
		m.OutputsBlob, m.OutputsSize = "", 0
	}
	return store.Entry{Hash: key, TaskID: t.ID, Project: t.Project, Command: t.Command, OutputsBlob: m.OutputsBlob,
		Outputs: m.Outputs, LogBlob: m.LogBlob, Size: m.OutputsSize + m.LogSize,
		Duration: time.Duration(m.DurationMs) * time.Millisecond, Created: now, LastUsed: now}
}

// Errors a client answers. A miss is not an error: Fetch answers ok false.
var (
	// ErrUnavailable is a server that cannot be used now: unreachable, too slow, 5xx, or refusing
	// the token. The session stops asking it for the rest of the run.
	ErrUnavailable = errors.New("unavailable")
	// ErrCorrupt is an answer that does not check out: a blob whose hash does not match, a bad
	// signature, a malformed entry. That entry is a miss.
	ErrCorrupt = errors.New("entry rejected")
	// ErrWriteRefused is an upload the server refused for want of a credential that may write (401
	// or 403): a read-only token, as a pull request's job holds. The session uploads nothing more
	// in this run and goes on reading.
	ErrWriteRefused = errors.New("upload refused")
)

// Cache is one remote cache server, as the local cache is one store: an entry by key in, an entry
// by key out. Fetch streams an entry's blobs into the local blob store, each checked against its
// digest, and answers its Meta; ok is false for a miss. Store sends an entry whose blobs are in the
// local blob store. Check asks the server whether it answers and accepts the token. Close drops
// idle connections, so that no transport goroutine outlives the run. Package cache uses a Cache
// through its Backend interface (Fetch and Store), beside the local store of record.
type Cache interface {
	Fetch(ctx context.Context, key string, cas *store.CAS) (m Meta, ok bool, err error)
	Store(ctx context.Context, key string, m Meta, cas *store.CAS) error
	Check(ctx context.Context) error
	Close()
}

// Settings are a remote cache's resolved settings: config, then environment, then the run's flag.
type Settings struct {
	URL      string
	Protocol string
	Mode     string
	// Token is a secret: it reads *** wherever it could be shown.
	Token           string
	TokenEnv        string
	Team, Slug      string
	Timeout         time.Duration
	SignatureKeyEnv string
	SignatureKey    string
	// Scope is the cache scope the run reads and writes as (ResolveScope); "" is the trusted one.
	Scope string
	// Instance, Headers and TLS are a reapi server's: its instance name, the metadata of every
	// call (Headers' values resolved, secrets among them), and its TLS files.
	Instance string
	Headers  []Header
	TLS      graph.RemoteTLS
	// Root is the folder relative TLS paths are read from: the workspace root.
	Root string
}

// Header is one header of a reapi server's calls, its value resolved; Secret when it came from
// the environment.
type Header struct {
	Name, Value string
	Secret      bool
}

// Resolve answers a workspace's remote cache settings: the config's remoteCache, under
// VX_REMOTE_CACHE_URL, VX_REMOTE_CACHE_PROTOCOL and VX_REMOTE_CACHE_TOKEN, under mode (the run's
// --remote-cache flag, "" for none). Without a URL the mode is off.
func Resolve(cfg *graph.RemoteCache, getenv func(string) string, mode string) (Settings, error) {
	var s Settings
	if cfg != nil {
		s = Settings{URL: cfg.URL, Protocol: cfg.Protocol, Mode: cfg.Mode, TokenEnv: cfg.TokenEnv, Team: cfg.Team,
			Slug: cfg.Slug, Timeout: cfg.Timeout, SignatureKeyEnv: cfg.SignatureKeyEnv, Instance: cfg.Instance}
		if cfg.TLS != nil {
			s.TLS = *cfg.TLS
		}
		for _, h := range cfg.Headers {
			v := Header{Name: h.Name, Value: h.Value}
			if h.Env != "" {
				v.Value, v.Secret = getenv(h.Env), true
			}
			s.Headers = append(s.Headers, v)
		}
	}
	if v := getenv(EnvURL); v != "" {
		s.URL = v
	}
	if v := getenv(EnvProtocol); v != "" {
		s.Protocol = v
	}
	if s.TokenEnv != "" {
		s.Token = getenv(s.TokenEnv)
	}
	if s.Token == "" {
		s.Token = getenv(EnvToken)
	}
	if s.SignatureKeyEnv != "" {
		s.SignatureKey = getenv(s.SignatureKeyEnv)
	}
	if isGRPCURL(s.URL) {
		// A grpc:// or grpcs:// server speaks REAPI, whatever protocol an http one was given.
		s.Protocol = ProtocolREAPI
	}
	if s.Protocol == "" {
		s.Protocol = ProtocolBazel
	}
	if s.Mode == "" {
		s.Mode = graph.RemoteReadWrite
	}
	if mode != "" {
		s.Mode = mode
	}
	if s.Timeout <= 0 {
		s.Timeout = DefaultTimeout
	}
	switch s.Mode {
	case graph.RemoteReadWrite, graph.RemoteRead, graph.RemoteOff:
	default:
		return s, fmt.Errorf("remote cache mode must be readwrite, read or off, not %q", s.Mode)
	}
	if s.URL == "" {
		s.Mode = graph.RemoteOff
		return s, nil
	}
	switch s.Protocol {
	case ProtocolBazel, ProtocolTurbo:
	case ProtocolREAPI:
		return s, checkREAPISettings(s)
	default:
		return s, fmt.Errorf("remote cache protocol must be bazel, turbo or reapi, not %q", s.Protocol)
	}
	u, err := url.Parse(s.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return s, fmt.Errorf("remote cache URL %q is not an http(s) URL", RedactURL(s.URL))
	}
	if s.Protocol == ProtocolTurbo && s.Team == "" && s.Slug == "" {
		return s, errors.New("a turbo remote cache needs team or slug")
	}
	if s.SignatureKeyEnv != "" && s.SignatureKey == "" {
		return s, fmt.Errorf("remote cache signature key %s is not set", s.SignatureKeyEnv)
	}
	return s, nil
}

// Secrets are the values to mask wherever the remote cache could show up.
func (s Settings) Secrets() []string {
	var out []string
	for _, v := range []string{s.Token, s.SignatureKey} {
		if v != "" {
			out = append(out, v)
		}
	}
	for _, h := range s.Headers {
		if h.Secret && h.Value != "" {
			out = append(out, h.Value)
		}
	}
	if u, err := url.Parse(s.URL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// New answers the client of the settings' server; nil when the mode is off.
func New(s Settings) Cache {
	if s.Mode == graph.RemoteOff || s.URL == "" {
		return nil
	}
	if s.Protocol == ProtocolREAPI {
		return Scoped(newREAPI(s), s.Scope)
	}
	h := newHTTP(s)
	if s.Protocol == ProtocolTurbo {
		return Scoped(&turbo{h: h, team: s.Team, slug: s.Slug, key: []byte(s.SignatureKey)}, s.Scope)
	}
	return Scoped(&bazel{h: h}, s.Scope)
}

// isGRPCURL reports whether raw is a grpc:// or grpcs:// URL.
func isGRPCURL(raw string) bool {
	return strings.HasPrefix(raw, "grpc://") || strings.HasPrefix(raw, "grpcs://")
}

// checkREAPISettings refuses a reapi server's settings that cannot work: a URL that is not
// grpc:// or grpcs://, TLS files for a plain-text server. (A header whose variable is unset is
// not sent, as a token whose variable is unset is not.)
func checkREAPISettings(s Settings) error {
	if err := graph.CheckREAPIURL(s.URL); err != nil {
		return fmt.Errorf("remote cache URL: %w", err)
	}
	if strings.HasPrefix(s.URL, "grpc://") && s.TLS != (graph.RemoteTLS{}) {
		return errors.New("remote cache tls is set for a grpc:// (plain-text) server: use grpcs://")
	}
	return nil
}

// RedactURL is u without a password.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "***")
	}
	return u.String()
}

// isDigest reports whether s is a lowercase hex SHA-256.
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// emptyDigest is the SHA-256 of no bytes.
const emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// trimErr keeps a server's error text short for a one-line warning.
func trimErr(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
