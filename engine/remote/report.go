package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/graph"
)

// CheckFile is the file of the state folder that keeps the last server check of `vx info`, so
// that getWorkspaceInfo reports it without a network call of its own.
const CheckFile = "remote-check.json"

// Report is the remote cache as vx show, vx info and getWorkspaceInfo report it: the settings,
// the token as *** (never its value), and the last check of the server.
type Report struct {
	// Configured is false when neither the workspace nor VX_REMOTE_CACHE_URL names a server.
	Configured bool   `json:"configured"`
	URL        string `json:"url,omitempty"`
	Protocol   string `json:"protocol,omitempty"`
	Mode       string `json:"mode"`
	// Token is "***" when a token is set, "" when none is.
	Token           string `json:"token"`
	TokenEnv        string `json:"tokenEnv,omitempty"`
	Team            string `json:"team,omitempty"`
	Slug            string `json:"slug,omitempty"`
	Timeout         string `json:"timeout,omitempty"`
	SignatureKeyEnv string `json:"signatureKeyEnv,omitempty"`
	// Problem says why settings that name a server cannot be used ("" when they can).
	Problem string `json:"problem,omitempty"`
	// LastCheck is the last time `vx info` asked the server; null when it never did.
	LastCheck *CheckResult `json:"lastCheck"`

	settings Settings
	stateDir string
}

// CheckResult is one check of the server: whether it answered and accepted the token.
type CheckResult struct {
	At        time.Time `json:"at"`
	OK        bool      `json:"ok"`
	LatencyMs int64     `json:"latencyMs"`
	Error     string    `json:"error,omitempty"`
}

// ReportOf reports a workspace's remote cache (cfg may be nil) with the environment's settings and
// the last check kept in the state folder. It makes no network call.
func ReportOf(cfg *graph.RemoteCache, getenv func(string) string, stateDir string) Report {
	s, err := Resolve(cfg, getenv, "")
	r := Report{Configured: s.URL != "", URL: RedactURL(s.URL), Mode: s.Mode, TokenEnv: s.TokenEnv,
		Team: s.Team, Slug: s.Slug, SignatureKeyEnv: s.SignatureKeyEnv, settings: s, stateDir: stateDir}
	if r.Configured {
		r.Protocol, r.Timeout = s.Protocol, s.Timeout.String()
	} else {
		r.Mode = graph.RemoteOff
	}
	if s.Token != "" {
		r.Token = "***"
	}
	if err != nil {
		r.Problem = err.Error()
	}
	if data, err := os.ReadFile(filepath.Join(stateDir, CheckFile)); err == nil {
		var c CheckResult
		if json.Unmarshal(data, &c) == nil {
			r.LastCheck = &c
		}
	}
	return r
}

// maxCheck bounds the server check of vx info.
const maxCheck = 3 * time.Second

// Check asks the server whether it answers and accepts the token (within a short timeout), keeps
// the result in the state folder when there is one, and reports it.
func (r *Report) Check(ctx context.Context, now func() time.Time) {
	if !r.Configured || r.Problem != "" || r.settings.Mode == graph.RemoteOff {
		return
	}
	s := r.settings
	s.Timeout = min(s.Timeout, maxCheck)
	c := New(s)
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, maxCheck)
	defer cancel()
	start := now()
	err := c.Check(ctx)
	c.Close()
	res := &CheckResult{At: start.UTC(), OK: err == nil, LatencyMs: now().Sub(start).Milliseconds()}
	if err != nil {
		msg := err.Error()
		for _, secret := range s.Secrets() {
			msg = strings.ReplaceAll(msg, secret, "***")
		}
		res.Error = msg
	}
	r.LastCheck = res
	if fi, err := os.Stat(r.stateDir); err == nil && fi.IsDir() {
		// A read never creates the state folder; one that exists keeps the result.
		data, _ := json.Marshal(res)
		_ = atomicfile.WriteFile(filepath.Join(r.stateDir, CheckFile), data)
	}
}

// Summary renders the report on one line.
func (r Report) Summary() string {
	if !r.Configured {
		return "none (set remoteCache in vx.workspace.ts, or VX_REMOTE_CACHE_URL)"
	}
	s := fmt.Sprintf("%s %s, %s", r.Protocol, r.URL, r.Mode)
	if r.Token != "" {
		s += ", token ***"
	}
	switch {
	case r.Problem != "":
		s += ": " + r.Problem
	case r.LastCheck == nil:
		s += "; never checked (vx info checks it)"
	case r.LastCheck.OK:
		s += fmt.Sprintf("; answered in %d ms at %s", r.LastCheck.LatencyMs, r.LastCheck.At.Format(time.RFC3339))
	default:
		s += "; check failed at " + r.LastCheck.At.Format(time.RFC3339) + ": " + r.LastCheck.Error
	}
	return s
}
