package remoteexec

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"strings"
	"time"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// Executor runs a task on a REAPI engine: its Action made from the task (Command, input root of
// the files its key was made from), the blobs the engine lacks uploaded, the Action Cache asked,
// then Execute. The command's stdout and stderr come back as its log; its outputs come back into
// the local blob store by digest (Result.RemoteOutputs), for the cache to restore them through
// its checked restore. It implements executor.Executor.
type Executor struct {
	// Engine is the engine's connection: its CAS (uploads, downloads).
	Engine *remote.REAPI
	// Client is the execution exchange with the same engine.
	Client *Client
	// CAS is the local blob store the outputs and the log are downloaded into.
	CAS *store.CAS
	// Platform are the properties a worker must match.
	Platform map[string]string
	// Path and Home are the PATH and HOME every command gets (both in the key).
	Path, Home string
	// Updates, when set, receives the operation's stages of a task by its id.
	Updates func(taskID string, u Update)
	// Install, when set, is the workspace's install action: its node_modules folders are grafted
	// into every task's input root, and a failed install fails the task with its log.
	Install *Installer
}

// Remotable reports why a task cannot run remotely ("" when it can): it declares no outputs or an
// output outside its project folder, or the files its key was made from are not known (nil).
func Remotable(t executor.Task) string {
	if len(t.Outputs) == 0 {
		return "it declares no outputs"
	}
	if t.InputFiles == nil {
		return "the files of its key are not known here"
	}
	if _, err := outputPaths(t.Outputs); err != nil {
		return err.Error()
	}
	return ""
}

// outputPaths answers the REAPI output paths of declared output globs: each glob's folder part
// before its first pattern character (a folder output), or the path itself when it has none.
func outputPaths(globs []string) ([]string, error) {
	var out []string
	for _, g := range globs {
		if strings.HasPrefix(g, "!") {
			continue // an exclusion narrows what the cache keeps, not what the worker collects
		}
		if strings.HasPrefix(g, "//") || strings.HasPrefix(g, "/") || strings.HasPrefix(path.Clean(g), "..") {
			return nil, fmt.Errorf("output %s lies outside its project folder", g)
		}
		base := g
		if i := strings.IndexAny(g, "*?[{"); i >= 0 {
			base = path.Dir(g[:i] + "x")
		}
		base = path.Clean(base)
		if base == "." {
			return nil, fmt.Errorf("output %s is the whole project folder", g)
		}
		out = append(out, base)
	}
	return out, nil
}

// Run executes t on the engine. An error wrapping executor.ErrRemoteUnavailable means nothing
// ran that the run counts on; the Chooser then runs the task locally.
func (e *Executor) Run(ctx context.Context, t executor.Task) (executor.Result, error) {
	inst, failed, err := e.installed(ctx, t)
	if failed != nil {
		return *failed, err
	}
	a, files, projectRel, err := e.action(t, inst)
	if err != nil {
		return executor.Result{ExitCode: -1}, fmt.Errorf("%w: %s: %v", executor.ErrRemoteUnavailable, t.ID, err)
	}
	if err := e.Engine.Upload(ctx, files); err != nil {
		return executor.Result{ExitCode: -1}, fmt.Errorf("%w: upload the inputs of %s: %v", executor.ErrRemoteUnavailable, t.ID, err)
	}
	client := *e.Client
	client.Reupload = func(ctx context.Context, missing []Digest) error { return e.Engine.Upload(ctx, files) }
	if t.Started != nil {
		t.Started()
	}
	start := time.Now()
	out, err := client.Execute(ctx, a, func(u Update) {
		if e.Updates != nil {
			e.Updates(t.ID, u)
		}
	})
	res := executor.Result{ExitCode: -1, Usage: executor.Usage{Wall: time.Since(start)}}
	if err != nil {
		res.Cancelled = ctx.Err() != nil
		res.Log = t.Output.Log()
		return res, err
	}
	return e.collect(ctx, t, out, projectRel, res)
}

// action builds t's Action and answers the blobs the engine must hold for it (the Action, its
// Command, the input root's folders and files) and the project folder relative to the root.
func (e *Executor) action(t executor.Task, inst *Installed) (Action, []remote.Blob, string, error) {
	rel, err := filepath.Rel(t.Root, t.Dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		return Action{}, nil, "", fmt.Errorf("project folder %s is outside the workspace", t.Dir)
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	outputs, err := outputPaths(t.Outputs)
	if err != nil {
		return Action{}, nil, "", err
	}
	env := maps.Clone(t.DeclaredEnv)
	if env == nil {
		env = map[string]string{}
	}
	env["PATH"], env["HOME"] = e.Path, e.Home
	shell := t.Command
	if t.Written != "" {
		shell = t.Written
	}
	cmd, err := Command(Spec{Shell: shell, Dir: rel, Env: env, Outputs: outputs, Platform: e.Platform})
	if err != nil {
		return Action{}, nil, "", err
	}
	inputs, sources, err := InputsFromDisk(t.Root, t.InputFiles)
	if err != nil {
		return Action{}, nil, "", err
	}
	inputs, grafted := e.graft(inputs, t.Grafted)
	inputs, sources = inst.withInstall(inputs, sources)
	tree, err := BuildTree(inputs)
	if err != nil {
		return Action{}, nil, "", err
	}
	var blobs []remote.Blob
	if tree, blobs, err = inst.graft(tree, blobs); err != nil {
		return Action{}, nil, "", err
	}
	a := NewAction(cmd, tree.Root, t.Timeout)
	blobs = append(blobs, remote.Blob{Hash: a.Digest.Hash, Size: a.Digest.Size, Data: a.Action},
		remote.Blob{Hash: a.CommandDigest.Hash, Size: a.CommandDigest.Size, Data: a.Command})
	for d, data := range tree.Directories {
		blobs = append(blobs, remote.Blob{Hash: d.Hash, Size: d.Size, Data: data})
	}
	for _, s := range sources {
		blobs = append(blobs, remote.Blob{Hash: s.Digest.Hash, Size: s.Digest.Size, Path: s.Path})
	}
	blobs = append(blobs, grafted...)
	return a, blobs, rel, nil
}

// collect reads a finished execution: its log (stdout then stderr) to t.Output, its outputs
// into the local blob store, its exit code.
func (e *Executor) collect(ctx context.Context, t executor.Task, out Outcome, projectRel string, res executor.Result) (executor.Result, error) {
	ar := out.Result
	res.TimedOut = out.Status.Code() == codes.DeadlineExceeded
	res.Cancelled = res.TimedOut
	if ar == nil {
		res.Log = t.Output.Log()
		return res, nil
	}
	res.ExitCode = int(ar.GetExitCode())
	for _, d := range []*pb.Digest{ar.GetStdoutDigest(), ar.GetStderrDigest()} {
		data, err := e.read(ctx, d)
		if err != nil {
			res.Log = t.Output.Log()
			return res, fmt.Errorf("%w: the log of %s: %v", executor.ErrRemoteLost, t.ID, err)
		}
		_, _ = t.Output.Write(data)
	}
	res.Log = t.Output.Log()
	if !res.Passed() {
		return res, nil
	}
	outputs, err := e.outputs(ctx, ar, projectRel, t.KeepOutputsRemote)
	if err != nil {
		return res, fmt.Errorf("%w: the outputs of %s: %v", executor.ErrRemoteLost, t.ID, err)
	}
	res.RemoteOutputs = outputs
	if t.CheckInputs != nil {
		// The input root was read from the workspace after the key was made: a file changed in
		// between makes outputs the key does not describe.
		res.Inputs.Checked = true
		res.Inputs.Changed, res.Inputs.Err = t.CheckInputs(ctx)
	}
	return res, nil
}

// read answers a blob of the engine's CAS through the local blob store (its digest checked).
func (e *Executor) read(ctx context.Context, d *pb.Digest) ([]byte, error) {
	if d == nil || d.GetSizeBytes() == 0 {
		return nil, nil
	}
	if err := e.Engine.Download(ctx, e.CAS, []remote.Blob{{Hash: d.GetHash(), Size: d.GetSizeBytes()}}); err != nil {
		return nil, err
	}
	return e.CAS.GetBounded(d.GetHash(), d.GetSizeBytes())
}

// outputs brings every output file of ar into the local blob store (none when keep is set: they
// stay in the engine's CAS) and answers them, paths relative to the root: output files, the
// files and links of output folders (their Tree messages read), output links.
func (e *Executor) outputs(ctx context.Context, ar *pb.ActionResult, projectRel string, keep bool) ([]executor.RemoteOutput, error) {
	var out []executor.RemoteOutput
	for _, f := range ar.GetOutputFiles() {
		out = append(out, executor.RemoteOutput{Path: f.GetPath(), Hash: f.GetDigest().GetHash(),
			Size: f.GetDigest().GetSizeBytes(), Executable: f.GetIsExecutable()})
	}
	for _, l := range ar.GetOutputSymlinks() {
		out = append(out, executor.RemoteOutput{Path: l.GetPath(), Link: l.GetTarget()})
	}
	for _, l := range ar.GetOutputFileSymlinks() {
		out = append(out, executor.RemoteOutput{Path: l.GetPath(), Link: l.GetTarget()})
	}
	for _, d := range ar.GetOutputDirectories() {
		files, err := e.treeFiles(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("output folder %s: %w", d.GetPath(), err)
		}
		out = append(out, files...)
	}
	blobs := make([]remote.Blob, 0, len(out))
	for i, o := range out {
		if err := checkPath(o.Path); err != nil {
			return nil, err
		}
		out[i].Path = path.Join(projectRel, o.Path)
		if o.Link == "" {
			blobs = append(blobs, remote.Blob{Hash: o.Hash, Size: o.Size})
		}
	}
	if keep {
		return out, nil
	}
	if err := e.Engine.Download(ctx, e.CAS, blobs); err != nil {
		return nil, err
	}
	return out, nil
}

// treeFiles reads an output folder's Tree and answers its files and links, paths relative to
// the working folder.
func (e *Executor) treeFiles(ctx context.Context, d *pb.OutputDirectory) ([]executor.RemoteOutput, error) {
	data, err := e.read(ctx, d.GetTreeDigest())
	if err != nil {
		return nil, err
	}
	tree := &pb.Tree{}
	if err := proto.Unmarshal(data, tree); err != nil {
		return nil, fmt.Errorf("tree: %w", err)
	}
	children := map[string]*pb.Directory{}
	for _, c := range tree.GetChildren() {
		children[DigestOf(marshal(c)).Hash] = c
	}
	var out []executor.RemoteOutput
	var walk func(dir *pb.Directory, at string, depth int) error
	walk = func(dir *pb.Directory, at string, depth int) error {
		if depth > 256 {
			return errors.New("tree is too deep")
		}
		for _, f := range dir.GetFiles() {
			out = append(out, executor.RemoteOutput{Path: path.Join(at, f.GetName()), Hash: f.GetDigest().GetHash(),
				Size: f.GetDigest().GetSizeBytes(), Executable: f.GetIsExecutable()})
		}
		for _, l := range dir.GetSymlinks() {
			out = append(out, executor.RemoteOutput{Path: path.Join(at, l.GetName()), Link: l.GetTarget()})
		}
		for _, sub := range dir.GetDirectories() {
			child, ok := children[sub.GetDigest().GetHash()]
			if !ok {
				return fmt.Errorf("tree lacks folder %s", path.Join(at, sub.GetName()))
			}
			if err := walk(child, path.Join(at, sub.GetName()), depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return out, walk(tree.GetRoot(), d.GetPath(), 0)
}
