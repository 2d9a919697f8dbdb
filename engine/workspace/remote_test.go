package workspace

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestRemoteCacheConfig(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": `export default {
  projects: ['packages/*'],
  remoteCache: { url: 'http://127.0.0.1:9092', protocol: 'turbo', slug: 'team', tokenEnv: 'TOK',
                 mode: 'read', timeout: '750ms', signature: { keyEnv: 'SIG' } },
}
`,
		"packages/a/package.json": `{"name": "a"}`,
	})
	ws, err := NewLoader(Options{Dir: root}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rc := ws.RemoteCache
	if rc == nil || rc.URL != "http://127.0.0.1:9092" || rc.Protocol != "turbo" || rc.Slug != "team" || rc.TokenEnv != "TOK" ||
		rc.Mode != "read" || rc.Timeout != 750*time.Millisecond || rc.SignatureKeyEnv != "SIG" {
		t.Fatalf("remoteCache: %+v", rc)
	}

	for _, tc := range []struct{ cfg, want string }{
		{`{ url: 'ftp://x' }`, "not an http(s) URL"},
		{`{ url: 'http://u:p@x' }`, "must not hold credentials"},
		{`{ protocol: 'grpc' }`, "must be 'bazel' or 'turbo'"},
		{`{ mode: 'write' }`, "must be 'readwrite', 'read' or 'off'"},
		{`{ token: 'inline' }`, `unknown field "token"`},
		{`{ signature: {} }`, "needs keyEnv"},
	} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"vx.workspace.ts":         "export default {\n  projects: ['packages/*'],\n  remoteCache: " + tc.cfg + ",\n}\n",
			"packages/a/package.json": `{"name": "a"}`,
		})
		_, err := NewLoader(Options{Dir: dir}).Load(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "vx.workspace.ts:3") {
			t.Errorf("remoteCache: %s: want an error with %q at line 3, got %v", tc.cfg, tc.want, err)
		}
	}
}
