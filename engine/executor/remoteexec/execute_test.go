package remoteexec

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/vzn/vx/engine/executor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// faultEngine is an in-process engine made from remote-apis' generated stubs: a test double for
// the execution client's handling of an engine's answers and faults (a refused platform, a
// dropped stream, a run cancelled), never the proof that execution works on a real engine.
type faultEngine struct {
	pb.UnimplementedActionCacheServer
	pb.UnimplementedExecutionServer
	longrunningpb.UnimplementedOperationsServer

	// mode is "run", "refuse", "drop" or "hang".
	mode string
	t    *testing.T

	mu        sync.Mutex
	cached    map[string]*pb.ActionResult
	executed  int
	cancelled []string
}

func (e *faultEngine) GetActionResult(_ context.Context, req *pb.GetActionResultRequest) (*pb.ActionResult, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if res, ok := e.cached[req.GetActionDigest().GetHash()]; ok {
		return res, nil
	}
	return nil, status.Error(codes.NotFound, "not cached")
}

func op(t *testing.T, stage pb.ExecutionStage_Value, res *pb.ExecuteResponse) *longrunningpb.Operation {
	meta, err := anypb.New(&pb.ExecuteOperationMetadata{Stage: stage})
	if err != nil {
		t.Fatal(err)
	}
	o := &longrunningpb.Operation{Name: "operations/42", Metadata: meta}
	if res != nil {
		r, _ := anypb.New(res)
		o.Done, o.Result = true, &longrunningpb.Operation_Response{Response: r}
	}
	return o
}

func (e *faultEngine) Execute(req *pb.ExecuteRequest, stream pb.Execution_ExecuteServer) error {
	e.mu.Lock()
	e.executed++
	e.mu.Unlock()
	if e.mode == "refuse" {
		return status.Error(codes.FailedPrecondition, "no worker matches the platform")
	}
	for _, st := range []pb.ExecutionStage_Value{pb.ExecutionStage_QUEUED, pb.ExecutionStage_EXECUTING} {
		if err := stream.Send(op(e.t, st, nil)); err != nil {
			return err
		}
		if e.mode == "drop" {
			return status.Error(codes.Unavailable, "stream dropped")
		}
	}
	if e.mode == "hang" {
		<-stream.Context().Done()
		return stream.Context().Err()
	}
	return stream.Send(op(e.t, pb.ExecutionStage_COMPLETED, &pb.ExecuteResponse{Result: &pb.ActionResult{ExitCode: 3}}))
}

func (e *faultEngine) WaitExecution(req *pb.WaitExecutionRequest, stream pb.Execution_WaitExecutionServer) error {
	if req.GetName() != "operations/42" {
		return status.Error(codes.NotFound, "no such operation")
	}
	return stream.Send(op(e.t, pb.ExecutionStage_COMPLETED, &pb.ExecuteResponse{Result: &pb.ActionResult{ExitCode: 0}}))
}

func (e *faultEngine) CancelOperation(_ context.Context, req *longrunningpb.CancelOperationRequest) (*emptypb.Empty, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cancelled = append(e.cancelled, req.GetName())
	return &emptypb.Empty{}, nil
}

// startEngine serves e on a loopback port and answers a client of it.
func startEngine(t *testing.T, e *faultEngine) *Client {
	t.Helper()
	e.t = t
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterActionCacheServer(srv, e)
	pb.RegisterExecutionServer(srv, e)
	longrunningpb.RegisterOperationsServer(srv, e)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	conn, err := grpc.NewClient("passthrough:///"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		<-done
	})
	return NewClient(conn, "main", nil, 2*time.Second)
}

func testAction() Action {
	cmd, _ := Command(Spec{Shell: "true", Env: map[string]string{"PATH": "/bin", "HOME": "/h"}})
	tree, _ := BuildTree(nil)
	return NewAction(cmd, tree.Root, 0)
}

func TestExecuteAsksTheActionCacheFirst(t *testing.T) {
	a := testAction()
	e := &faultEngine{mode: "run", cached: map[string]*pb.ActionResult{a.Digest.Hash: {ExitCode: 0}}}
	out, err := startEngine(t, e).Execute(context.Background(), a, nil)
	if err != nil || !out.Cached || out.Result == nil || e.executed != 0 {
		t.Fatalf("want the cached result and no Execute, got %+v %v (executed %d)", out, err, e.executed)
	}
}

func TestExecuteFollowsTheOperation(t *testing.T) {
	e := &faultEngine{mode: "run"}
	var stages []pb.ExecutionStage_Value
	out, err := startEngine(t, e).Execute(context.Background(), testAction(), func(u Update) { stages = append(stages, u.Stage) })
	if err != nil || out.Result.GetExitCode() != 3 || out.Operation != "operations/42" {
		t.Fatalf("want exit 3 from operations/42, got %+v %v", out, err)
	}
	if len(stages) != 3 || stages[0] != pb.ExecutionStage_QUEUED || stages[2] != pb.ExecutionStage_COMPLETED {
		t.Fatalf("stages %v", stages)
	}
}

// TestExecuteWaitsAgainAfterADrop: a stream that drops after the engine named the operation is
// followed again through WaitExecution.
func TestExecuteWaitsAgainAfterADrop(t *testing.T) {
	out, err := startEngine(t, &faultEngine{mode: "drop"}).Execute(context.Background(), testAction(), nil)
	if err != nil || out.Result == nil || out.Result.GetExitCode() != 0 {
		t.Fatalf("want the waited result, got %+v %v", out, err)
	}
}

// TestExecuteRefusedPlatform: an engine that refuses the Action is ErrRemoteUnavailable, which
// makes the run fall back to local execution.
func TestExecuteRefusedPlatform(t *testing.T) {
	_, err := startEngine(t, &faultEngine{mode: "refuse"}).Execute(context.Background(), testAction(), nil)
	if !errors.Is(err, executor.ErrRemoteUnavailable) {
		t.Fatalf("want ErrRemoteUnavailable, got %v", err)
	}
}

// TestExecuteEngineDown: an engine nobody listens for is ErrRemoteUnavailable.
func TestExecuteEngineDown(t *testing.T) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = NewClient(conn, "", nil, time.Second).Execute(context.Background(), testAction(), nil)
	if !errors.Is(err, executor.ErrRemoteUnavailable) {
		t.Fatalf("want ErrRemoteUnavailable, got %v", err)
	}
}

// TestExecuteCancelCancelsTheOperation: a run cancelled while its Action executes cancels the
// operation on the engine before Execute returns.
func TestExecuteCancelCancelsTheOperation(t *testing.T) {
	e := &faultEngine{mode: "hang"}
	c := startEngine(t, e)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := c.Execute(ctx, testAction(), func(u Update) {
		if u.Stage == pb.ExecutionStage_EXECUTING {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.cancelled) != 1 || e.cancelled[0] != "operations/42" {
		t.Fatalf("cancelled %v, want operations/42", e.cancelled)
	}
}
