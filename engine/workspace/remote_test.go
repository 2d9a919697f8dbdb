package workspace

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/graph"
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
		{`{ protocol: 'grpc' }`, "must be 'bazel', 'turbo' or 'reapi'"},
		{`{ reapi: 'http://x:1' }`, "not a grpc:// or grpcs:// URL"},
		{`{ reapi: 'grpc://x:1', url: 'http://x' }`, "name the server twice"},
		{`{ url: 'http://x', instance: 'main' }`, "settings of a REAPI server"},
		{`{ reapi: 'grpcs://x:1', tls: { cert: 'c.pem' } }`, "needs cert and key together"},
		{`{ reapi: 'grpc://x:1', headers: { 'grpc-timeout': '1S' } }`, "gRPC keeps for itself"},
		{`{ reapi: 'grpc://x:1', headers: { 'x-key': 42 } }`, "must be a string or { env: 'NAME' }"},
		{`{ reapi: 'grpc://x:1', headers: { 'X-Key': 'a', 'x-key': 'b' } }`, "named twice"},
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

func TestRemoteCacheREAPIConfig(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": `export default {
  projects: ['packages/*'],
  remoteCache: { reapi: 'grpcs://cache.example:8980', instance: 'main', tokenEnv: 'TOK',
                 headers: { 'X-Team': 'web', 'x-api-key': { env: 'API_KEY' } },
                 tls: { ca: 'certs/ca.pem', cert: 'certs/client.pem', key: 'certs/client.key', serverName: 'cache' } },
}
`,
		"packages/a/package.json": `{"name": "a"}`,
	})
	ws, err := NewLoader(Options{Dir: root}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rc := ws.RemoteCache
	if rc == nil || rc.URL != "grpcs://cache.example:8980" || rc.Protocol != "reapi" || rc.Instance != "main" || rc.TokenEnv != "TOK" {
		t.Fatalf("remoteCache: %+v", rc)
	}
	if len(rc.Headers) != 2 || rc.Headers[1] != (graph.RemoteHeader{Name: "x-team", Value: "web"}) ||
		rc.Headers[0] != (graph.RemoteHeader{Name: "x-api-key", Env: "API_KEY"}) {
		t.Fatalf("headers: %+v", rc.Headers)
	}
	if rc.TLS == nil || *rc.TLS != (graph.RemoteTLS{CA: "certs/ca.pem", Cert: "certs/client.pem", Key: "certs/client.key", ServerName: "cache"}) {
		t.Fatalf("tls: %+v", rc.TLS)
	}
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"vx.workspace.ts":         "export default { projects: ['packages/*'], remoteCache: { url: 'grpc://127.0.0.1:9092' } }\n",
		"packages/a/package.json": `{"name": "a"}`,
	})
	ws, err = NewLoader(Options{Dir: dir}).Load(context.Background())
	if err != nil || ws.RemoteCache.Protocol != "reapi" {
		t.Fatalf("a grpc:// url: want the reapi protocol, got %+v %v", ws.RemoteCache, err)
	}
}

// TestRemoteExecConfig: remote: { execute, executor, platform, capacity } and a task's
// exec.remote are read; a bad executor, platform or capacity is refused naming the field.
func TestRemoteExecConfig(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"vx.workspace.ts": `export default {
  projects: ['packages/*'],
  remote: { execute: true, executor: 'grpc://127.0.0.1:8980', platform: { OSFamily: 'linux', pool: 'small' }, capacity: 8 },
  tasks: { build: { command: 'true', outputs: ['dist/**'], exec: { remote: false } } },
}
`,
		"packages/a/package.json": `{"name": "a"}`,
	})
	ws, err := NewLoader(Options{Dir: root}).Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	re := ws.Remote
	if re == nil || !re.Execute || re.Executor != "grpc://127.0.0.1:8980" || re.Capacity != 8 ||
		len(re.Platform) != 2 || re.Platform["OSFamily"] != "linux" || re.Platform["pool"] != "small" {
		t.Fatalf("remote: %+v", re)
	}
	task, ok := ws.Task("a#build")
	if !ok || task.RemoteExec == nil || *task.RemoteExec {
		t.Fatalf("a#build exec.remote: %+v", task)
	}
	for bad, want := range map[string]string{
		`remote: { executor: 'http://x:1' }`:        "remote.executor",
		`remote: { platform: { OSFamily: 1 } }`:     "remote.platform.OSFamily",
		`remote: { capacity: 0 }`:                   "remote.capacity",
		`remote: { execute: true, pool: 'x' }`:      "pool",
		`tasks: { b: { exec: { remote: 'yes' } } }`: "exec.remote",
	} {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"vx.workspace.ts":         "export default { projects: ['packages/*'], " + bad + " }\n",
			"packages/a/package.json": `{"name": "a"}`,
		})
		_, err := NewLoader(Options{Dir: dir}).Load(context.Background())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an error naming %s, got %v", bad, want, err)
		}
	}
}
