package remoteexec

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// logBuffer is a task's output as the runner's display keeps it.
type logBuffer struct{ bytes.Buffer }

func (b *logBuffer) Log() []byte { return b.Bytes() }

// TestBuildbarnRun runs vx tasks through Executor on a real Buildbarn: the input root is made
// from the task's key files, its declared environment and the explicit PATH and HOME reach the
// command, stdout and stderr come back as its log, the files of its output folder come back into
// the local blob store by digest, named from the workspace root; a failing command's exit code
// and log come back too.
func TestBuildbarnRun(t *testing.T) {
	bb := startBuildbarn(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	probe, err := grpc.NewClient("passthrough:///"+bb.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	waitServing(ctx, t, probe, bb) // the engine answers its capabilities once per connection
	s, err := remote.Resolve(&graph.RemoteCache{URL: "grpc://" + bb.Addr}, func(string) string { return "" }, "")
	if err != nil {
		t.Fatal(err)
	}
	engine, err := remote.DialREAPI(s)
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	root := t.TempDir()
	for name, content := range map[string]string{"pkg/a/package.json": "{}\n", "pkg/a/src/in.txt": "remote input\n", "lib/shared.txt": "shared\n"} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cas := store.NewCAS(t.TempDir())
	ex := &Executor{Engine: engine, Client: NewClient(engine.Conn(), engine.Instance(), engine.Metadata(), 10*time.Second),
		CAS: cas, Platform: map[string]string{"OSFamily": "linux"}, Path: "/usr/bin:/bin", Home: "/tmp"}
	task := executor.Task{ID: "a#build", Root: root, Dir: filepath.Join(root, "pkg/a"),
		Command:     `mkdir -p dist/sub && cat src/in.txt ../../lib/shared.txt > dist/sub/out.txt && echo "built $GREETING $HOME" && echo warned >&2`,
		DeclaredEnv: map[string]string{"GREETING": "hello"}, Outputs: []string{"dist/**"},
		InputFiles: []string{"lib/shared.txt", "pkg/a/package.json", "pkg/a/src/in.txt"}, Output: &logBuffer{}}
	res, err := ex.Run(ctx, task)
	if err != nil || !res.Passed() {
		t.Fatalf("run: %+v %v\n%s", res, err, bb.Logs())
	}
	if log := string(res.Log); !strings.Contains(log, "built hello /tmp\n") || !strings.Contains(log, "warned\n") {
		t.Fatalf("log %q: want stdout with the declared environment and HOME, and stderr", log)
	}
	want := DigestOf([]byte("remote input\nshared\n"))
	if len(res.RemoteOutputs) != 1 || res.RemoteOutputs[0].Path != "pkg/a/dist/sub/out.txt" || res.RemoteOutputs[0].Hash != want.Hash {
		t.Fatalf("outputs %+v, want pkg/a/dist/sub/out.txt of %s", res.RemoteOutputs, want.Hash)
	}
	if got, err := cas.Get(want.Hash); err != nil || string(got) != "remote input\nshared\n" {
		t.Fatalf("output blob in the local store: %q %v", got, err)
	}

	task.Command, task.Output = "echo boom >&2; exit 3", &logBuffer{}
	res, err = ex.Run(ctx, task)
	if err != nil || res.ExitCode != 3 || !strings.Contains(string(res.Log), "boom") || res.RemoteOutputs != nil {
		t.Fatalf("failing task: want exit 3 with its log and no outputs, got %+v %v", res, err)
	}
}

// A package script vx runs here without its manager (Command: the script's text, with this
// machine's node_modules/.bin on PATH) goes to the engine as its config writes it (Written), for
// the worker's own package manager: never with a path of this machine.
func TestActionSendsTheCommandAsWritten(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "app", "src.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := &Executor{Path: "/usr/bin:/bin", Home: "/tmp"}
	task := executor.Task{ID: "app#build", Root: root, Dir: filepath.Join(root, "app"), Outputs: []string{"dist/**"},
		Command: "PATH=" + root + "/node_modules/.bin:$PATH tsc", Written: "npm run build", InputFiles: []string{"app/src.txt"}}
	a, _, _, err := e.action(task, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(a.Command); !strings.Contains(got, "npm run build") || strings.Contains(got, root) {
		t.Fatalf("the Command sent holds %q, want the command as written and no path of this machine", got)
	}
}
