package handoff

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
)

// Stamp answers the digest of what a task's key is made of besides its files and its
// dependencies' keys, for the tasks ids of ws: each task's resolved config as vx.lock records it,
// the projects whose files it takes, its folder, the workspace's global inputs and env, the
// cache's version, and the whole environment (its marker variable left out). Two processes
// with the same stamp and the same files make the same keys.
func Stamp(ws *graph.Workspace, ids []string, environ []string) string {
	type taskStamp struct {
		ID              string                 `json:"id"`
		Config          configlock.Fingerprint `json:"config"`
		Dir             string                 `json:"dir"`
		Through         []string               `json:"through"`
		DependencyFiles []string               `json:"dependencyFiles"`
		DependencyGlobs []string               `json:"dependencyGlobs"`
		EnvMode         string                 `json:"envMode"`
		PassThroughEnv  []string               `json:"passThroughEnv"`
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, CallMarkerPrefix) {
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	_ = enc.Encode([]any{hasher.CacheVersion, ws.Root, ws.CacheDir, ws.GlobalInputs, ws.Env, ws.EnvMode, ws.PassThroughEnv, env})
	sorted := slices.Sorted(slices.Values(ids))
	for _, id := range sorted {
		t, ok := ws.Task(id)
		if !ok {
			_ = enc.Encode(id)
			continue
		}
		ts := taskStamp{ID: id, Config: configlock.FingerprintOf(t), Through: t.Through, DependencyFiles: t.DependencyFiles,
			EnvMode: t.EnvMode, PassThroughEnv: t.PassThroughEnv}
		ts.DependencyGlobs, _ = t.DependencyInputs()
		if p, ok := ws.Project(t.Project); ok {
			ts.Dir = p.Dir
		}
		_ = enc.Encode(ts)
	}
	return hex.EncodeToString(h.Sum(nil))
}
