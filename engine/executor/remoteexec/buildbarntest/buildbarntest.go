// Package buildbarntest starts a real Buildbarn on loopback for tests: bb_storage (CAS and
// Action Cache in memory, Execution through the scheduler), bb_scheduler, and one bb_worker with
// its bb_runner, from the folder VX_TEST_BUILDBARN names; without it the test is skipped.
package buildbarntest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protowire"
)

// EnvBuildbarn names the folder holding Buildbarn's four programs (bb_storage, bb_scheduler,
// bb_worker, bb_runner, or the same with dashes), built from its public repositories; the tests
// that need a real engine are skipped without it.
const EnvBuildbarn = "VX_TEST_BUILDBARN"

// Engine is a real Buildbarn on loopback: bb_storage serving the CAS and the Action Cache in
// memory and Execution through the scheduler, bb_scheduler, and one bb_worker with its bb_runner.
type Engine struct {
	// Addr is the storage's gRPC address: the one endpoint a client talks to.
	Addr string
	// StateAddr is the scheduler's BuildQueueState gRPC address (its operation list).
	StateAddr string
	logs      *lockedLog
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
func buildbarnProgram(t testing.TB, dir, name string) string {
	t.Helper()
	for _, n := range []string{name, strings.ReplaceAll(name, "_", "-")} {
		if fi, err := os.Stat(filepath.Join(dir, n)); err == nil && fi.Mode().IsRegular() {
			return filepath.Join(dir, n)
		}
	}
	t.Fatalf("%s=%s holds no %s", EnvBuildbarn, dir, name)
	return ""
}

func freeAddr(t testing.TB) string {
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

// Options are how a test's Buildbarn is deployed; the zero value is one storage that clients
// and the worker share, every client allowed to write the Action Cache.
type Options struct {
	// WorkersOnlyAC puts a frontend (a second bb_storage, as Buildbarn's own deployments have
	// it) between the clients and the storage that refuses clients' writes to the Action Cache
	// (its put authorizer denies, so its capabilities say update_enabled false); the worker
	// writes its results to the storage behind it. Addr is then the frontend's.
	WorkersOnlyAC bool
}

// buildbarnConfigs writes the four programs' Jsonnet configurations into dir and answers their
// paths by program, with the storage's client address and the scheduler's BuildQueueState one.
// With opts.WorkersOnlyAC a fifth, bb_frontend, is the client address.
func buildbarnConfigs(t testing.TB, dir string, opts Options) (map[string]string, string, string) {
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
	clientAddr := storage
	if opts.WorkersOnlyAC {
		clientAddr = freeAddr(t)
		configs["bb_frontend"] = frontendConfig(clientAddr, schedClients, storage)
	}
	paths := map[string]string{}
	for name, text := range configs {
		p := filepath.Join(dir, name+".jsonnet")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths, clientAddr, schedState
}

// frontendConfig is the configuration of a frontend on addr in front of the storage: the CAS
// and Execution pass through, the Action Cache is read through and refuses clients' writes
// (so its capabilities say update_enabled false).
func frontendConfig(addr, scheduler, storage string) string {
	grpcClient := `{ grpc: { client: { address: '` + storage + `' } } }`
	return `{
  grpcServers: [{ listenAddresses: ['` + addr + `'], authenticationPolicy: { allow: {} } }],
  schedulers: { '': { endpoint: { address: '` + scheduler + `' } } },
  maximumMessageSizeBytes: 4194304,
  contentAddressableStorage: { backend: ` + grpcClient + `,
    getAuthorizer: { allow: {} }, putAuthorizer: { allow: {} }, findMissingAuthorizer: { allow: {} } },
  actionCache: { backend: ` + grpcClient + `,
    getAuthorizer: { allow: {} }, putAuthorizer: { deny: {} } },
  executeAuthorizer: { allow: {} },
}`
}

// traversableDir answers a new folder for the engine's configuration, build and cache folders
// that every user can traverse, the folders above it included: actions run as nobody when the
// test runs as root, and t.TempDir()'s folders (0700, root's) would refuse nobody its way to
// the build folder. It is removed when the test ends.
func traversableDir(t testing.TB) string {
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

// Start starts the four programs from $VX_TEST_BUILDBARN, or skips the test saying so.
func Start(t testing.TB) *Engine {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start of a Buildbarn deployed as opts says.
func StartWith(t testing.TB, opts Options) *Engine {
	t.Helper()
	dir := os.Getenv(EnvBuildbarn)
	if dir == "" {
		t.Skip(EnvBuildbarn + " is not set: it names the folder holding bb_storage, bb_scheduler, bb_worker and " +
			"bb_runner built from Buildbarn's repositories; the execution tests against a real engine are skipped")
	}
	configs, addr, state := buildbarnConfigs(t, traversableDir(t), opts)
	bb := &Engine{Addr: addr, StateAddr: state, logs: &lockedLog{}}
	names := []string{"bb_storage", "bb_scheduler", "bb_runner", "bb_worker"}
	if opts.WorkersOnlyAC {
		names = append(names, "bb_frontend")
	}
	for _, name := range names {
		program := name
		if name == "bb_frontend" {
			program = "bb_storage" // a frontend is a bb_storage with other backends
		}
		cmd := exec.Command(buildbarnProgram(t, dir, program), configs[name])
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

// Logs answers what the four programs printed, for a failing test.
func (bb *Engine) Logs() string { return bb.logs.String() }

// Operation is one operation the scheduler holds, as its BuildQueueState service lists it.
type Operation struct {
	Name string
	// Stage is "queued", "executing" or "completed".
	Stage string
	// Abandoned says that no client waits for it any more: the scheduler removes it (and stops
	// its execution) once its timeout passes.
	Abandoned bool
}

// rawCodec sends and receives messages as the bytes they are: the BuildQueueState messages are
// encoded here by hand (Buildbarn's Go packages are not served by the module proxy).
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*[]byte), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*[]byte) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// Operations answers the operations the scheduler holds (ListOperations of its BuildQueueState
// service, on StateAddr).
func (bb *Engine) Operations(ctx context.Context) ([]Operation, error) {
	conn, err := grpc.NewClient("passthrough:///"+bb.StateAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	req := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1000) // page_size
	var resp []byte
	if err := conn.Invoke(ctx, "/buildbarn.buildqueuestate.BuildQueueState/ListOperations", &req, &resp,
		grpc.ForceCodec(rawCodec{})); err != nil {
		return nil, err
	}
	var ops []Operation
	for len(resp) > 0 {
		num, typ, n := protowire.ConsumeTag(resp)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		resp = resp[n:]
		if num == 1 && typ == protowire.BytesType {
			msg, m := protowire.ConsumeBytes(resp)
			if m < 0 {
				return nil, protowire.ParseError(m)
			}
			ops = append(ops, operationState(msg))
			resp = resp[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, resp)
		if m < 0 {
			return nil, protowire.ParseError(m)
		}
		resp = resp[m:]
	}
	return ops, nil
}

// operationState reads an OperationState: its name (1), timeout (7) and stage (8, 9, 10).
func operationState(b []byte) Operation {
	var op Operation
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return op
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return op
		}
		switch num {
		case 1:
			s, _ := protowire.ConsumeString(b)
			op.Name = s
		case 7:
			op.Abandoned = true
		case 8:
			op.Stage = "queued"
		case 9:
			op.Stage = "executing"
		case 10:
			op.Stage = "completed"
		}
		b = b[m:]
	}
	return op
}
