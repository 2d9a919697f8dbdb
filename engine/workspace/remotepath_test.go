package workspace

import (
	"context"
	"strings"
	"testing"
)

// TestRemotePathConfig: remote.path is read as written; one that is not absolute folders
// separated by ':' is refused naming the field.
func TestRemotePathConfig(t *testing.T) {
	load := func(remote string) (string, error) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"vx.workspace.ts":         "export default { projects: ['packages/*'], remote: " + remote + " }\n",
			"packages/a/package.json": `{"name": "a"}`,
		})
		ws, err := NewLoader(Options{Dir: dir}).Load(context.Background())
		if err != nil {
			return "", err
		}
		return ws.Remote.Path, nil
	}
	if got, err := load(`{ execute: true, path: '/opt/pnpm/bin:/usr/bin:/bin' }`); err != nil || got != "/opt/pnpm/bin:/usr/bin:/bin" {
		t.Fatalf("remote.path: %q %v", got, err)
	}
	if got, err := load(`{ execute: true }`); err != nil || got != "" {
		t.Fatalf("no remote.path: %q %v", got, err)
	}
	for _, bad := range []string{`{ path: 'bin:/usr/bin' }`, `{ path: 3 }`, `{ path: '/usr/bin::/bin' }`} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "remote.path") {
			t.Errorf("%s: want an error naming remote.path, got %v", bad, err)
		}
	}
}
