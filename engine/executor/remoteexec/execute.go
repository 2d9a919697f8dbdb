package remoteexec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"cloud.google.com/go/longrunning/autogen/longrunningpb"
	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/vzn/vx/engine/executor"
)

// Client is the execution half of a REAPI engine: its Action Cache (asked first), its Execution
// service and its Operations service (to cancel). The CAS holds the Action, its Command and its
// input root before Execute is asked (the caller uploads them).
type Client struct {
	Instance string
	// MD are the headers of every call (credentials among them).
	MD metadata.MD
	// Timeout bounds each unary call and the wait for an engine's first answer to Execute.
	Timeout time.Duration
	// Reupload, when set, puts blobs the engine reports missing (a FAILED_PRECONDITION naming
	// them, as the API describes) back into its CAS; Execute then asks once more.
	Reupload func(ctx context.Context, missing []Digest) error

	ac   pb.ActionCacheClient
	exec pb.ExecutionClient
	ops  longrunningpb.OperationsClient
}

// NewClient answers the client of the engine conn reaches.
func NewClient(conn grpc.ClientConnInterface, instance string, md metadata.MD, timeout time.Duration) *Client {
	return &Client{Instance: instance, MD: md, Timeout: timeout, ac: pb.NewActionCacheClient(conn),
		exec: pb.NewExecutionClient(conn), ops: longrunningpb.NewOperationsClient(conn)}
}

// Update is a streamed operation's stage, for the live line and MCP progress.
type Update struct {
	Operation string
	Stage     pb.ExecutionStage_Value
}

// Outcome is what executing an Action came to: its ActionResult (nil when it never ran to an
// end), whether it came from the Action Cache, the engine's status of the execution (a timeout is
// DEADLINE_EXCEEDED) and its operation's name.
type Outcome struct {
	Result    *pb.ActionResult
	Cached    bool
	Status    *status.Status
	Operation string
}

// Execute answers the Action's result: from the Action Cache when it holds one, else by executing
// it, following its operation's updates (and waiting on it again once when the stream drops).
// When ctx ends first, the operation is cancelled on the engine before Execute returns. An error
// wrapping executor.ErrRemoteUnavailable means nothing ran that the run may count on: the engine
// is unreachable or refused the Action (its platform, its size); running locally is then safe.
func (c *Client) Execute(ctx context.Context, a Action, updates func(Update)) (Outcome, error) {
	if res, err := c.cached(ctx, a.Digest); err != nil || res != nil {
		return Outcome{Result: res, Cached: res != nil}, err
	}
	out, err := c.execute(ctx, a, updates)
	var missing *missingBlobsError
	if c.Reupload == nil || !errors.As(err, &missing) || ctx.Err() != nil {
		return out, err
	}
	if uerr := c.Reupload(ctx, missing.digests); uerr != nil {
		return out, fmt.Errorf("%w: upload the blobs the engine lacks: %v", executor.ErrRemoteUnavailable, uerr)
	}
	return c.execute(ctx, a, updates)
}

// execute sends the Action to Execute and follows its operation to its end.
func (c *Client) execute(ctx context.Context, a Action, updates func(Update)) (Outcome, error) {
	ectx, cancel := context.WithCancel(metadata.NewOutgoingContext(ctx, c.MD))
	defer cancel()
	stream, err := c.exec.Execute(ectx, &pb.ExecuteRequest{InstanceName: c.Instance, ActionDigest: a.Digest.Proto()})
	if err != nil {
		return Outcome{}, refused("Execute", err)
	}
	out, err := c.follow(ctx, stream, "", updates)
	if err != nil && out.Operation != "" && ctx.Err() == nil && status.Code(err) == codes.Unavailable {
		// The stream dropped after the engine took the Action: ask for the same operation again.
		wait, werr := c.exec.WaitExecution(ectx, &pb.WaitExecutionRequest{Name: out.Operation})
		if werr != nil {
			return out, fmt.Errorf("%w: WaitExecution: %v", executor.ErrRemoteLost, werr)
		}
		out, err = c.follow(ctx, wait, out.Operation, updates)
	}
	if ctx.Err() != nil && out.Operation != "" {
		c.cancelOperation(out.Operation)
		return out, ctx.Err()
	}
	return out, err
}

// cached asks the Action Cache for the Action's result; nil for a miss.
func (c *Client) cached(ctx context.Context, d Digest) (*pb.ActionResult, error) {
	cctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(ctx, c.MD), c.Timeout)
	defer cancel()
	res, err := c.ac.GetActionResult(cctx, &pb.GetActionResultRequest{InstanceName: c.Instance, ActionDigest: d.Proto()})
	switch status.Code(err) {
	case codes.OK:
		return res, nil
	case codes.NotFound:
		return nil, nil
	}
	return nil, refused("GetActionResult", err)
}

// follow reads an operation stream to its end: each update to updates, the done operation's
// ExecuteResponse into the Outcome. A stream that ends before the operation is done is the
// stream's error (the operation's name kept, to wait on it again).
func (c *Client) follow(ctx context.Context, stream grpc.ServerStreamingClient[longrunningpb.Operation], name string, updates func(Update)) (Outcome, error) {
	out := Outcome{Operation: name}
	for {
		op, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, status.Error(codes.Unavailable, "the operation stream ended before the operation was done")
		}
		if err != nil {
			if out.Operation == "" {
				return out, refused("Execute", err)
			}
			return out, err
		}
		out.Operation = op.GetName()
		meta := &pb.ExecuteOperationMetadata{}
		if op.GetMetadata() != nil && op.GetMetadata().UnmarshalTo(meta) == nil && updates != nil {
			updates(Update{Operation: op.GetName(), Stage: meta.GetStage()})
		}
		if !op.GetDone() {
			continue
		}
		return c.done(op, out)
	}
}

// done reads a done operation: its error, or its ExecuteResponse's result and status.
func (c *Client) done(op *longrunningpb.Operation, out Outcome) (Outcome, error) {
	if e := op.GetError(); e != nil {
		return out, refused("Execute", status.ErrorProto(e))
	}
	resp := &pb.ExecuteResponse{}
	if op.GetResponse() == nil || op.GetResponse().UnmarshalTo(resp) != nil {
		return out, fmt.Errorf("%w: operation %s is done without an ExecuteResponse", executor.ErrRemoteLost, out.Operation)
	}
	out.Result, out.Cached, out.Status = resp.GetResult(), resp.GetCachedResult(), status.FromProto(resp.GetStatus())
	switch out.Status.Code() {
	case codes.OK:
		if out.Result == nil {
			return out, fmt.Errorf("%w: operation %s is done without a result", executor.ErrRemoteLost, out.Operation)
		}
		return out, nil
	case codes.DeadlineExceeded:
		// The command ran past the Action's timeout: its result (when any) is a timed-out run.
		return out, nil
	}
	// Any other status means the engine did not run the command to an end: whatever result
	// accompanies it (an empty one, exit 0) is no answer of the command.
	out.Result = nil
	return out, refused("Execute", out.Status.Err())
}

// missingBlobsError is an engine's FAILED_PRECONDITION naming blobs its CAS lacks.
type missingBlobsError struct {
	error
	digests []Digest
}

func (e *missingBlobsError) Unwrap() error { return e.error }

// missingBlobs answers the blobs a FAILED_PRECONDITION status names as missing
// (PreconditionFailure violations of type MISSING, subject "blobs/<hash>/<size>"); none for any
// other status.
func missingBlobs(st *status.Status) []Digest {
	if st.Code() != codes.FailedPrecondition {
		return nil
	}
	var out []Digest
	for _, d := range st.Details() {
		pf, ok := d.(*errdetails.PreconditionFailure)
		if !ok {
			continue
		}
		for _, v := range pf.GetViolations() {
			var hash string
			var size int64
			if v.GetType() != "MISSING" {
				continue
			}
			if _, err := fmt.Sscanf(strings.ReplaceAll(v.GetSubject(), "/", " "), "blobs %s %d", &hash, &size); err == nil && len(hash) == 64 {
				out = append(out, Digest{Hash: hash, Size: size})
			}
		}
	}
	return out
}

// cancelOperation asks the engine to cancel an operation the run no longer waits for, within a
// bound of its own (the run's context has ended).
func (c *Client) cancelOperation(name string) {
	ctx, cancel := context.WithTimeout(metadata.NewOutgoingContext(context.Background(), c.MD), c.Timeout)
	defer cancel()
	_, _ = c.ops.CancelOperation(ctx, &longrunningpb.CancelOperationRequest{Name: name})
}

// refused classifies an engine's error before the Action ran: unreachable, overloaded, or a
// refusal of the Action itself (a platform no worker has, a missing input) is
// executor.ErrRemoteUnavailable, as is every other code.
// A FAILED_PRECONDITION naming missing blobs is a *missingBlobsError too, to upload them again.
func refused(op string, err error) error {
	st := status.Convert(err)
	wrapped := fmt.Errorf("%w: %s: %s %s", executor.ErrRemoteUnavailable, op, st.Code(), st.Message())
	if missing := missingBlobs(st); len(missing) > 0 {
		return &missingBlobsError{error: wrapped, digests: missing}
	}
	return wrapped
}
