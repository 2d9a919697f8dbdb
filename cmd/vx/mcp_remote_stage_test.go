package main

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/anypb"
)

// stageEngine is an in-process REAPI engine made from remote-apis' generated stubs that streams
// each Execute's stages (queued, executing) and answers an empty passing result: a test double
// for what a client shows of an operation as it goes, never the proof that execution works.
type stageEngine struct {
	pb.UnimplementedCapabilitiesServer
	pb.UnimplementedContentAddressableStorageServer
	pb.UnimplementedActionCacheServer
	pb.UnimplementedExecutionServer

	mu       sync.Mutex
	executed int
}

func (e *stageEngine) GetCapabilities(context.Context, *pb.GetCapabilitiesRequest) (*pb.ServerCapabilities, error) {
	return &pb.ServerCapabilities{CacheCapabilities: &pb.CacheCapabilities{DigestFunctions: []pb.DigestFunction_Value{pb.DigestFunction_SHA256}},
		ExecutionCapabilities: &pb.ExecutionCapabilities{DigestFunction: pb.DigestFunction_SHA256, ExecEnabled: true}}, nil
}

// FindMissingBlobs says the engine holds every blob: nothing is uploaded.
func (e *stageEngine) FindMissingBlobs(context.Context, *pb.FindMissingBlobsRequest) (*pb.FindMissingBlobsResponse, error) {
	return &pb.FindMissingBlobsResponse{}, nil
}

func (e *stageEngine) GetActionResult(context.Context, *pb.GetActionResultRequest) (*pb.ActionResult, error) {
	return nil, status.Error(codes.NotFound, "not cached")
}

func (e *stageEngine) Execute(_ *pb.ExecuteRequest, stream pb.Execution_ExecuteServer) error {
	e.mu.Lock()
	e.executed++
	e.mu.Unlock()
	for _, st := range []pb.ExecutionStage_Value{pb.ExecutionStage_QUEUED, pb.ExecutionStage_EXECUTING, pb.ExecutionStage_COMPLETED} {
		meta, err := anypb.New(&pb.ExecuteOperationMetadata{Stage: st})
		if err != nil {
			return err
		}
		op := &longrunningpb.Operation{Name: "operations/stage", Metadata: meta}
		if st == pb.ExecutionStage_COMPLETED {
			res, err := anypb.New(&pb.ExecuteResponse{Result: &pb.ActionResult{ExitCode: 0}})
			if err != nil {
				return err
			}
			op.Done, op.Result = true, &longrunningpb.Operation_Response{Response: res}
		}
		if err := stream.Send(op); err != nil {
			return err
		}
	}
	return nil
}

// startStageEngine serves a stageEngine on a loopback port and answers it and its address.
func startStageEngine(t *testing.T) (*stageEngine, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e := &stageEngine{}
	srv := grpc.NewServer()
	pb.RegisterCapabilitiesServer(srv, e)
	pb.RegisterContentAddressableStorageServer(srv, e)
	pb.RegisterActionCacheServer(srv, e)
	pb.RegisterExecutionServer(srv, e)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return e, l.Addr().String()
}

// TestMCPRunTasksRemoteStages: a runTasks call whose tasks run on a remote engine sends progress
// naming each task and its stage there (queued, executing), between the tasks' own progress,
// which still only grows; the answer says the tasks ran remotely.
func TestMCPRunTasksRemoteStages(t *testing.T) {
	t.Parallel()
	engine, addr := startStageEngine(t)
	dir := writeWorkspace(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
import { mcp } from '@vzn/vx-mcp'
export default defineWorkspace({
  projects: ['packages/*'],
  plugins: [mcp()],
  remote: { execute: true, executor: 'grpc://` + addr + `' },
  tasks: {
    build: { command: 'mkdir -p dist && echo built > dist/out.txt', dependsOn: ['^build'], outputs: ['dist/**'] },
  },
})
`,
		"packages/lib/package.json": `{"name": "lib"}`,
		"packages/lib/src.txt":      "lib\n",
		"packages/app/package.json": `{"name": "app", "dependencies": {"lib": "*"}}`,
		"packages/app/src.txt":      "app\n",
	})
	s := startRunSession(t, dir)
	ans := decodeRunAnswer(t, mustCallRunTool(t, s.cs, "runTasks", map[string]any{"tasks": []string{"build"}}, "remote-1"))
	if ans.Summary == nil || !ans.Summary.OK {
		t.Fatalf("runTasks(build) = %+v", ans)
	}
	var stages []string
	deadline := time.Now().Add(5 * time.Second)
	for {
		var mine []string
		last, grows := -1.0, true
		for _, p := range s.progress.list() {
			if p.ProgressToken != "remote-1" {
				continue
			}
			grows = grows && p.Progress > last
			last = p.Progress
			mine = append(mine, p.Message)
		}
		stages = stages[:0]
		for _, m := range mine {
			if strings.Contains(m, "(remote: ") {
				stages = append(stages, m)
			}
		}
		if !grows {
			t.Fatalf("progress does not grow: %q", mine)
		}
		if last == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress %q, want the run to reach 2/2", mine)
		}
		time.Sleep(10 * time.Millisecond)
	}
	want := []string{"lib#build (remote: queued)", "lib#build (remote: executing)", "app#build (remote: queued)", "app#build (remote: executing)"}
	if strings.Join(stages, "; ") != strings.Join(want, "; ") {
		t.Fatalf("remote stages in progress: %q, want %q", stages, want)
	}
	engine.mu.Lock()
	defer engine.mu.Unlock()
	if engine.executed != 2 {
		t.Fatalf("the engine executed %d actions, want 2", engine.executed)
	}
}
