package remoteexec

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/executor/remoteexec/buildbarntest"
)

// buildbarn is a real Buildbarn on loopback (buildbarntest).
type buildbarn = buildbarntest.Engine

// startBuildbarn starts a Buildbarn from $VX_TEST_BUILDBARN, or skips the test saying so.
func startBuildbarn(t *testing.T) *buildbarn { return buildbarntest.Start(t) }

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
		t.Fatalf("execute: %+v %v\nstderr: %s\n%s", out, err, readBlob(ctx, conn, out.Result.GetStderrDigest()), bb.Logs())
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
			t.Fatalf("Buildbarn did not start: %v\n%s", err, bb.Logs())
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
			t.Fatalf("no Buildbarn worker registered: %v\n%s", err, bb.Logs())
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
		t.Fatalf("missing input: want it uploaded again and the command run, got %+v %v\n%s", out, err, bb.Logs())
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
