package remoteexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/vzn/vx/engine/executor"
)

// EnvBuildbarn names the folder holding Buildbarn's four programs (bb_storage, bb_scheduler,
// bb_worker, bb_runner, or the same with dashes), built from its public repositories; the tests
// that need a real engine are skipped without it.
const EnvBuildbarn = "VX_TEST_BUILDBARN"

// buildbarn is a real Buildbarn on loopback: bb_storage serving the CAS and the Action Cache in
// memory and Execution through the scheduler, bb_scheduler, and one bb_worker with its bb_runner.
type buildbarn struct {
	// Addr is the storage's gRPC address: the one endpoint a client talks to.
	Addr string
	logs *lockedLog
}

// lockedLog keeps the programs' output for a failing test.
type lockedLog struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// buildbarnProgram answers the path of one of Buildbarn's programs in dir.
func buildbarnProgram(t *testing.T, dir, name string) string {
	t.Helper()
	for _, n := range []string{name, strings.ReplaceAll(name, "_", "-")} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
			return filepath.Join(dir, n)
		}
	}
	t.Fatalf("%s=%s holds no %s", EnvBuildbarn, dir, name)
	return ""
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// localBlobstore is a bb_storage local backend held in memory, of blocks blockBytes each.
func localBlobstore(entries, blockBytes int) string {
	return fmt.Sprintf(`{ 'local': { keyLocationMapInMemory: { entries: %d }, keyLocationMapMaximumGetAttempts: 16,
  keyLocationMapMaximumPutAttempts: 64, oldBlocks: 1, currentBlocks: 4, newBlocks: 1,
  blocksInMemory: { blockSizeBytes: %d } } }`, entries, blockBytes)
}

// buildbarnConfigs writes the four programs' Jsonnet configurations into dir and answers their
// paths by program, with the storage's client address.
func buildbarnConfigs(t *testing.T, dir string) (map[string]string, string) {
	t.Helper()
	storage, schedClients, schedWorkers, schedState := freeAddr(t), freeAddr(t), freeAddr(t), freeAddr(t)
	runnerSock := filepath.Join(dir, "runner.sock")
	build, cache := filepath.Join(dir, "build"), filepath.Join(dir, "cache")
	for _, d := range []string{build, cache} {
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	// As root, actions run as nobody (bb_runner's run-as); the worker makes the folders of their
	// input roots writable by them (startBuildbarn starts it with umask 0).
	runAs := ""
	if os.Geteuid() == 0 {
		runAs = `runCommandsAs: { userId: 65534, groupId: 65534 },`
	}
	grpcClient := func(addr string) string { return `{ grpc: { client: { address: '` + addr + `' } } }` }
	configs := map[string]string{
		"bb_storage": `{
  grpcServers: [{ listenAddresses: ['` + storage + `'], authenticationPolicy: { allow: {} } }],
  schedulers: { '': { endpoint: { address: '` + schedClients + `' } } },
  maximumMessageSizeBytes: 4194304,
  contentAddressableStorage: { backend: ` + localBlobstore(1<<16, 16<<20) + `,
    getAuthorizer: { allow: {} }, putAuthorizer: { allow: {} }, findMissingAuthorizer: { allow: {} } },
  actionCache: { backend: ` + localBlobstore(1<<12, 1<<20) + `,
    getAuthorizer: { allow: {} }, putAuthorizer: { allow: {} } },
  executeAuthorizer: { allow: {} },
}`,
		"bb_scheduler": `{
  clientGrpcServers: [{ listenAddresses: ['` + schedClients + `'], authenticationPolicy: { allow: {} } }],
  workerGrpcServers: [{ listenAddresses: ['` + schedWorkers + `'], authenticationPolicy: { allow: {} } }],
  buildQueueStateGrpcServers: [{ listenAddresses: ['` + schedState + `'], authenticationPolicy: { allow: {} } }],
  browserUrl: 'http://127.0.0.1:1',
  contentAddressableStorage: ` + grpcClient(storage) + `,
  maximumMessageSizeBytes: 4194304,
  executeAuthorizer: { allow: {} }, modifyDrainsAuthorizer: { allow: {} }, killOperationsAuthorizer: { allow: {} },
  synchronizeAuthorizer: { allow: {} },
  actionRouter: { simple: { platformKeyExtractor: { action: {} }, invocationKeyExtractors: [{ toolInvocationId: {} }],
    initialSizeClassAnalyzer: { defaultExecutionTimeout: '300s', maximumExecutionTimeout: '600s' } } },
  platformQueueWithNoWorkersTimeout: '60s',
}`,
		"bb_worker": `{
  blobstore: { contentAddressableStorage: ` + grpcClient(storage) + `, actionCache: ` + grpcClient(storage) + ` },
  browserUrl: 'http://127.0.0.1:1',
  maximumMessageSizeBytes: 4194304,
  scheduler: { address: '` + schedWorkers + `' },
  buildDirectories: [{
    native: { buildDirectoryPath: '` + build + `', cacheDirectoryPath: '` + cache + `',
      maximumCacheFileCount: 10000, maximumCacheSizeBytes: 268435456, cacheReplacementPolicy: 'LEAST_RECENTLY_USED' },
    runners: [{ endpoint: { address: 'unix://` + runnerSock + `' }, concurrency: 2,
      platform: { properties: [{ name: 'OSFamily', value: 'linux' }] },
      workerId: { hostname: 'vx-test' } }],
  }],
  inputDownloadConcurrency: 4,
  outputUploadConcurrency: 4,
  directoryCache: { maximumCount: 1000, maximumSizeBytes: 1048576, cacheReplacementPolicy: 'LEAST_RECENTLY_USED' },
}`,
		"bb_runner": `{
  buildDirectoryPath: '` + build + `',
  grpcServers: [{ listenPaths: ['` + runnerSock + `'], authenticationPolicy: { allow: {} } }],
  ` + runAs + `
}`,
	}
	paths := map[string]string{}
	for name, text := range configs {
		p := filepath.Join(dir, name+".jsonnet")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths, storage
}

// traversableDir answers a new folder for the engine's configuration, build and cache folders
// that every user can traverse, the folders above it included: actions run as nobody when the
// test runs as root, and t.TempDir()'s folders (0700, root's) would refuse nobody its way to
// the build folder. It is removed when the test ends.
func traversableDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vx-buildbarn-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("%s is not traversable by other users; set TMPDIR to a folder that is", d)
		}
		if d == filepath.Dir(d) {
			return dir
		}
	}
}

// startBuildbarn starts the four programs from $VX_TEST_BUILDBARN, or skips the test saying so.
func startBuildbarn(t *testing.T) *buildbarn {
	t.Helper()
	dir := os.Getenv(EnvBuildbarn)
	if dir == "" {
		t.Skip(EnvBuildbarn + " is not set: it names the folder holding bb_storage, bb_scheduler, bb_worker and " +
			"bb_runner built from Buildbarn's repositories; the execution tests against a real engine are skipped")
	}
	configs, addr := buildbarnConfigs(t, traversableDir(t))
	bb := &buildbarn{Addr: addr, logs: &lockedLog{}}
	for _, name := range []string{"bb_storage", "bb_scheduler", "bb_runner", "bb_worker"} {
		cmd := exec.Command(buildbarnProgram(t, dir, name), configs[name])
		if name == "bb_worker" && os.Geteuid() == 0 {
			// A native build folder's input roots are made by the worker (root) with mode 0777
			// less its umask: umask 0 lets the actions, run as nobody, write their outputs there.
			cmd = exec.Command("sh", "-c", `umask 0 && exec "$0" "$1"`, buildbarnProgram(t, dir, name), configs[name])
		}
		cmd.Stdout, cmd.Stderr = bb.logs, bb.logs
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatalf("start %s: %v", name, err)
		}
		done := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(done)
		}()
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		})
	}
	return bb
}

// upload puts blobs into the engine's CAS in one batch.
func upload(ctx context.Context, t *testing.T, conn *grpc.ClientConn, blobs map[Digest][]byte) {
	t.Helper()
	req := &pb.BatchUpdateBlobsRequest{}
	for d, data := range blobs {
		if d.Size == 0 {
			continue // the empty blob is in every CAS
		}
		req.Requests = append(req.Requests, &pb.BatchUpdateBlobsRequest_Request{Digest: d.Proto(), Data: data})
	}
	res, err := pb.NewContentAddressableStorageClient(conn).BatchUpdateBlobs(ctx, req)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	for _, r := range res.GetResponses() {
		if r.GetStatus().GetCode() != int32(codes.OK) {
			t.Fatalf("upload %s: %s", r.GetDigest().GetHash(), r.GetStatus().GetMessage())
		}
	}
}

// action uploads the Action of a command over inputs (path to content) and answers it.
func action(ctx context.Context, t *testing.T, conn *grpc.ClientConn, spec Spec, inputs map[string]string) Action {
	t.Helper()
	blobs := map[Digest][]byte{}
	var in []Input
	for p, content := range inputs {
		d := DigestOf([]byte(content))
		blobs[d] = []byte(content)
		in = append(in, Input{Path: p, Digest: d})
	}
	tree, err := BuildTree(in)
	if err != nil {
		t.Fatal(err)
	}
	for d, data := range tree.Directories {
		blobs[d] = data
	}
	cmd, err := Command(spec)
	if err != nil {
		t.Fatal(err)
	}
	a := NewAction(cmd, tree.Root, time.Minute)
	blobs[a.Digest], blobs[a.CommandDigest] = a.Action, a.Command
	upload(ctx, t, conn, blobs)
	return a
}

// TestBuildbarnExecute runs an Action on a real Buildbarn: its output file and stdout come back
// by digest, a second Execute of it is answered from the Action Cache, and a platform no worker
// has is refused as ErrRemoteUnavailable.
func TestBuildbarnExecute(t *testing.T) {
	bb := startBuildbarn(t)
	conn, err := grpc.NewClient("passthrough:///"+bb.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	waitServing(ctx, t, conn, bb)
	client := NewClient(conn, "", nil, 10*time.Second)
	spec := Spec{Shell: "mkdir -p out && cat ../in/a.txt > out/copy.txt && echo done", Dir: "pkg",
		Env:      map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/tmp"},
		Outputs:  []string{"out/copy.txt"},
		Platform: map[string]string{"OSFamily": "linux"}}
	a := action(ctx, t, conn, spec, map[string]string{"in/a.txt": "hello\n", "pkg/.keep": ""})
	var stages []pb.ExecutionStage_Value
	out, err := client.Execute(ctx, a, func(u Update) { stages = append(stages, u.Stage) })
	if err != nil || out.Result == nil || out.Result.GetExitCode() != 0 {
		t.Fatalf("execute: %+v %v\nstderr: %s\n%s", out, err, readBlob(ctx, conn, out.Result.GetStderrDigest()), bb.logs.String())
	}
	files := out.Result.GetOutputFiles()
	if len(files) != 1 || files[0].GetPath() != "out/copy.txt" || files[0].GetDigest().GetHash() != DigestOf([]byte("hello\n")).Hash {
		t.Fatalf("output files %v", files)
	}
	if d := out.Result.GetStdoutDigest(); d.GetHash() != DigestOf([]byte("done\n")).Hash {
		t.Fatalf("stdout digest %v, want the digest of %q", d, "done\n")
	}
	if len(stages) == 0 {
		t.Fatal("no operation update streamed")
	}
	again, err := client.Execute(ctx, a, nil)
	if err != nil || !again.Cached {
		t.Fatalf("second execute: want the Action Cache's answer, got %+v %v", again, err)
	}
	spec.Platform = map[string]string{"OSFamily": "plan9"}
	_, err = client.Execute(ctx, action(ctx, t, conn, spec, map[string]string{"in/a.txt": "hello\n", "pkg/.keep": ""}), nil)
	if !errors.Is(err, executor.ErrRemoteUnavailable) {
		t.Fatalf("a platform no worker has: want ErrRemoteUnavailable, got %v", err)
	}
}

// waitServing waits until the storage answers and the worker has registered: until then the
// scheduler refuses an Action of the worker's platform (no worker exists for it).
func waitServing(ctx context.Context, t *testing.T, conn *grpc.ClientConn, bb *buildbarn) {
	t.Helper()
	caps := pb.NewCapabilitiesClient(conn)
	for {
		_, err := caps.GetCapabilities(ctx, &pb.GetCapabilitiesRequest{})
		if err == nil {
			break
		}
		if ctx.Err() != nil || status.Code(err) == codes.Unimplemented {
			t.Fatalf("Buildbarn did not start: %v\n%s", err, bb.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	probe := action(ctx, t, conn, Spec{Shell: "true", Env: map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/tmp"},
		Platform: map[string]string{"OSFamily": "linux"}}, nil)
	client := NewClient(conn, "", nil, 10*time.Second)
	for {
		_, err := client.Execute(ctx, probe, nil)
		if err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("no Buildbarn worker registered: %v\n%s", err, bb.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestBuildbarnStatus: an engine's ExecuteResponse whose status is not OK is an error, whatever
// result comes with it (Buildbarn answers a command it could not start with an empty result,
// exit 0); and an Action whose input the CAS lacks is answered FAILED_PRECONDITION naming the
// blob, which the client uploads again before asking once more.
func TestBuildbarnStatus(t *testing.T) {
	bb := startBuildbarn(t)
	conn, err := grpc.NewClient("passthrough:///"+bb.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	waitServing(ctx, t, conn, bb)
	client := NewClient(conn, "", nil, 10*time.Second)
	cmd := &pb.Command{Arguments: []string{"/nonexistent/vx-no-such-program"},
		EnvironmentVariables: []*pb.Command_EnvironmentVariable{{Name: "PATH", Value: "/usr/bin:/bin"}},
		Platform:             &pb.Platform{Properties: []*pb.Platform_Property{{Name: "OSFamily", Value: "linux"}}}}
	empty, _ := BuildTree(nil)
	a := NewAction(cmd, empty.Root, time.Minute)
	upload(ctx, t, conn, map[Digest][]byte{a.Digest: a.Action, a.CommandDigest: a.Command})
	out, err := client.Execute(ctx, a, nil)
	if !errors.Is(err, executor.ErrRemoteUnavailable) || out.Result != nil {
		t.Fatalf("a command the engine could not start: want ErrRemoteUnavailable and no result, got %+v %v", out, err)
	}

	content := []byte("uploaded again\n")
	tree, err := BuildTree([]Input{{Path: "in.txt", Digest: DigestOf(content)}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := Command(Spec{Shell: "cat in.txt", Env: map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/tmp"},
		Platform: map[string]string{"OSFamily": "linux"}})
	if err != nil {
		t.Fatal(err)
	}
	a = NewAction(c, tree.Root, time.Minute)
	blobs := map[Digest][]byte{a.Digest: a.Action, a.CommandDigest: a.Command}
	for d, data := range tree.Directories {
		blobs[d] = data
	}
	upload(ctx, t, conn, blobs) // everything but in.txt
	var asked []Digest
	client.Reupload = func(ctx context.Context, missing []Digest) error {
		asked = append(asked, missing...)
		upload(ctx, t, conn, map[Digest][]byte{DigestOf(content): content})
		return nil
	}
	out, err = client.Execute(ctx, a, nil)
	if err != nil || out.Result.GetExitCode() != 0 || out.Result.GetStdoutDigest().GetHash() != DigestOf(content).Hash {
		t.Fatalf("missing input: want it uploaded again and the command run, got %+v %v\n%s", out, err, bb.logs.String())
	}
	if len(asked) != 1 || asked[0] != DigestOf(content) {
		t.Fatalf("missing blobs reported %v, want only in.txt's %v", asked, DigestOf(content))
	}
}

// readBlob answers a blob of the engine's CAS, or why it could not be read, for a failure message.
func readBlob(ctx context.Context, conn *grpc.ClientConn, d *pb.Digest) string {
	if d == nil {
		return "(none)"
	}
	res, err := pb.NewContentAddressableStorageClient(conn).BatchReadBlobs(ctx, &pb.BatchReadBlobsRequest{Digests: []*pb.Digest{d}})
	if err != nil || len(res.GetResponses()) != 1 {
		return fmt.Sprintf("(unread: %v)", err)
	}
	return string(res.GetResponses()[0].GetData())
}
