package remoteexec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/vzn/vx/engine/executor"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// Installer runs a workspace's install action on the engine once per run: the Action Cache is
// asked first, so that the same lockfile, manager, PATH and platform install once for every run
// of every machine. Its node_modules trees are grafted into each remote task's input root by
// digest; nothing of them comes to this machine.
type Installer struct {
	// Spec is the install action; Err, when set, is why there is none the workspace can use
	// (every remote task is then refused, and runs locally).
	Spec *InstallSpec
	Err  error
	// Detect, when set, answers Spec and Err the first time a remote task asks (a run whose
	// tasks all hit reads nothing for it); a nil Spec without an error means no install.
	Detect func() (*InstallSpec, error)
	// Root is the absolute workspace root.
	Root string
	// Engine, Client, CAS, Platform, Path and Home are the task executor's.
	Engine     *remote.REAPI
	Client     *Client
	CAS        *store.CAS
	Platform   map[string]string
	Path, Home string
	mu         sync.Mutex
	done       *Installed
}

// Installed is what the install action came to: its Action's digest, whether the Action Cache
// answered it, and either the node_modules trees and the files of its input root, or, with
// Failed set, its exit code and log.
type Installed struct {
	Action   Digest
	Cached   bool
	Failed   bool
	ExitCode int
	Log      []byte
	// Inputs are the install's input root (package.json files, lockfile, config); Sources the
	// sources of its files by path.
	Inputs  []Input
	Sources map[string]FileSource
	// Grafts are the node_modules folders by path and root Directory digest.
	Grafts []Graft
	// Directories are Directory messages of the grafts the engine may lack (read from the
	// result's Tree where the engine gave no root Directory digest); uploaded with each task.
	Directories map[Digest][]byte
}

// Graft is a folder grafted into an input root: its slash-separated path and the digest of its
// Directory message.
type Graft struct {
	Path string
	Root Digest
}

// Result answers the install action's outcome (nil when there is none), running it the first
// time (later callers wait for it). An error (wrapping executor.ErrRemoteUnavailable or ErrRemoteLost) means it could not
// be run; it is asked again by the next caller.
func (in *Installer) Result(ctx context.Context) (*Installed, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.Detect != nil {
		in.Spec, in.Err = in.Detect()
		in.Detect = nil
	}
	if in.Err != nil {
		return nil, fmt.Errorf("%w: node_modules: %v", executor.ErrRemoteUnavailable, in.Err)
	}
	if in.done != nil || in.Spec == nil {
		return in.done, nil
	}
	res, err := in.run(ctx)
	if err != nil {
		return nil, err
	}
	in.done = res
	return res, nil
}

// Action answers the install's Action and the blobs the engine must hold for it, with its input
// root's files.
func (in *Installer) Action() (Action, []remote.Blob, []Input, []FileSource, error) {
	inputs, sources, err := InputsFromDisk(in.Root, in.Spec.Files)
	if err != nil {
		return Action{}, nil, nil, nil, err
	}
	tree, err := BuildTree(inputs)
	if err != nil {
		return Action{}, nil, nil, nil, err
	}
	cmd, err := Command(Spec{Shell: in.Spec.Shell(), Env: map[string]string{"PATH": in.Path, "HOME": in.Home},
		Outputs: in.Spec.Outputs, Platform: in.Platform})
	if err != nil {
		return Action{}, nil, nil, nil, err
	}
	// The engine stores each output folder's Directory messages too and names its root's: a
	// task's input root then names the folder by that digest alone.
	cmd.OutputDirectoryFormat = pb.Command_TREE_AND_DIRECTORY
	a := NewAction(cmd, tree.Root, 0)
	blobs := []remote.Blob{{Hash: a.Digest.Hash, Size: a.Digest.Size, Data: a.Action},
		{Hash: a.CommandDigest.Hash, Size: a.CommandDigest.Size, Data: a.Command}}
	for d, data := range tree.Directories {
		blobs = append(blobs, remote.Blob{Hash: d.Hash, Size: d.Size, Data: data})
	}
	for _, s := range sources {
		blobs = append(blobs, remote.Blob{Hash: s.Digest.Hash, Size: s.Digest.Size, Path: s.Path})
	}
	return a, blobs, inputs, sources, nil
}

// run uploads and executes the install action and reads its outcome.
func (in *Installer) run(ctx context.Context) (*Installed, error) {
	a, blobs, inputs, sources, err := in.Action()
	if err != nil {
		return nil, fmt.Errorf("%w: the install action (%s): %v", executor.ErrRemoteUnavailable, in.Spec.Install, err)
	}
	if err := in.Engine.Upload(ctx, blobs); err != nil {
		return nil, fmt.Errorf("%w: upload the install action's inputs: %v", executor.ErrRemoteUnavailable, err)
	}
	client := *in.Client
	client.Reupload = func(ctx context.Context, _ []Digest) error { return in.Engine.Upload(ctx, blobs) }
	out, err := client.Execute(ctx, a, nil)
	if err != nil {
		return nil, fmt.Errorf("the install action (%s): %w", in.Spec.Install, err)
	}
	res := &Installed{Action: a.Digest, Cached: out.Cached, Inputs: inputs, Sources: map[string]FileSource{}, ExitCode: -1}
	next := 0
	for _, f := range inputs {
		if f.Target == "" { // InputsFromDisk answers one source per file, in order
			res.Sources[f.Path] = sources[next]
			next++
		}
	}
	ar := out.Result
	if ar == nil || ar.GetExitCode() != 0 || out.Status.Code() == codes.DeadlineExceeded {
		return in.failed(ctx, res, ar, out.Status.Code() == codes.DeadlineExceeded)
	}
	res.ExitCode = 0
	if err := in.grafts(ctx, ar, res); err != nil {
		return nil, fmt.Errorf("%w: the node_modules of the install action: %v", executor.ErrRemoteLost, err)
	}
	return res, nil
}

// failed reads a failed install's log into res.
func (in *Installer) failed(ctx context.Context, res *Installed, ar *pb.ActionResult, timedOut bool) (*Installed, error) {
	res.Failed = true
	if ar != nil {
		res.ExitCode = int(ar.GetExitCode())
		for _, d := range []*pb.Digest{ar.GetStdoutDigest(), ar.GetStderrDigest()} {
			data, err := in.read(ctx, d)
			if err != nil {
				return nil, fmt.Errorf("%w: the log of the install action: %v", executor.ErrRemoteLost, err)
			}
			res.Log = append(res.Log, data...)
		}
	}
	if timedOut {
		res.Log = append(res.Log, "vx: the install action ran past its timeout\n"...)
	}
	return res, nil
}

// grafts reads the node_modules folders of a passed install: each output folder's root
// Directory digest, as the engine names it, or computed from its Tree.
func (in *Installer) grafts(ctx context.Context, ar *pb.ActionResult, res *Installed) error {
	res.Directories = map[Digest][]byte{}
	for _, d := range ar.GetOutputDirectories() {
		if err := checkPath(d.GetPath()); err != nil {
			return err
		}
		if r := d.GetRootDirectoryDigest(); r != nil && len(r.GetHash()) == 64 {
			res.Grafts = append(res.Grafts, Graft{Path: d.GetPath(), Root: Digest{Hash: r.GetHash(), Size: r.GetSizeBytes()}})
			continue
		}
		root, err := in.treeDirectories(ctx, d.GetTreeDigest(), res.Directories)
		if err != nil {
			return fmt.Errorf("output folder %s: %w", d.GetPath(), err)
		}
		res.Grafts = append(res.Grafts, Graft{Path: d.GetPath(), Root: root})
	}
	return nil
}

// treeDirectories reads a Tree and puts each of its Directory messages into out by digest,
// answering its root's digest: for an engine that names no root Directory digest.
func (in *Installer) treeDirectories(ctx context.Context, d *pb.Digest, out map[Digest][]byte) (Digest, error) {
	data, err := in.read(ctx, d)
	if err != nil {
		return Digest{}, err
	}
	tree := &pb.Tree{}
	if err := proto.Unmarshal(data, tree); err != nil {
		return Digest{}, fmt.Errorf("tree: %w", err)
	}
	for _, c := range tree.GetChildren() {
		b := marshal(c)
		out[DigestOf(b)] = b
	}
	b := marshal(tree.GetRoot())
	root := DigestOf(b)
	out[root] = b
	return root, nil
}

// read answers a blob of the engine's CAS through the local blob store.
func (in *Installer) read(ctx context.Context, d *pb.Digest) ([]byte, error) {
	e := Executor{Engine: in.Engine, CAS: in.CAS}
	return e.read(ctx, d)
}

// installed answers the install's outcome for task t: nil when the executor has no installer; a
// Result (the task failed with the install's log, naming it) when the install failed.
func (e *Executor) installed(ctx context.Context, t executor.Task) (*Installed, *executor.Result, error) {
	if e.Install == nil {
		return nil, nil, nil
	}
	inst, err := e.Install.Result(ctx)
	if err != nil {
		res := &executor.Result{ExitCode: -1}
		if ctx.Err() != nil {
			res.Cancelled, res.Log = true, t.Output.Log()
		}
		return nil, res, fmt.Errorf("%s: %w", t.ID, err)
	}
	if inst == nil || !inst.Failed {
		return inst, nil, nil
	}
	_, _ = fmt.Fprintf(t.Output, "vx: the install action `%s` (Action %s/%d) failed on the engine with exit code %d; its log:\n",
		e.Install.Spec.Install, inst.Action.Hash, inst.Action.Size, inst.ExitCode)
	_, _ = t.Output.Write(inst.Log)
	return nil, &executor.Result{ExitCode: 1, Log: t.Output.Log()}, nil
}

// withInstall adds the install's input root files that inputs lack (the task's own win) to a
// task's inputs: the package.json files, lockfile and config its node_modules were made from.
func (i *Installed) withInstall(inputs []Input, sources []FileSource) ([]Input, []FileSource) {
	if i == nil {
		return inputs, sources
	}
	have := make(map[string]bool, len(inputs))
	for _, in := range inputs {
		have[in.Path] = true
	}
	for _, in := range i.Inputs {
		if have[in.Path] || underGraft(in.Path, i.Grafts) {
			continue
		}
		inputs = append(inputs, in)
		if s, ok := i.Sources[in.Path]; ok {
			sources = append(sources, s)
		}
	}
	return inputs, sources
}

// underGraft reports whether p lies in (or is) a grafted folder.
func underGraft(p string, grafts []Graft) bool {
	for _, g := range grafts {
		if p == g.Path || strings.HasPrefix(p, g.Path+"/") {
			return true
		}
	}
	return false
}

// graft puts the install's node_modules folders into tree, and adds the Directory messages the
// engine may lack to blobs.
func (i *Installed) graft(tree Tree, blobs []remote.Blob) (Tree, []remote.Blob, error) {
	if i == nil {
		return tree, blobs, nil
	}
	for _, g := range i.Grafts {
		var err error
		if tree, err = GraftDir(tree, g); err != nil {
			return Tree{}, nil, err
		}
	}
	for d, data := range i.Directories {
		blobs = append(blobs, remote.Blob{Hash: d.Hash, Size: d.Size, Data: data})
	}
	return tree, blobs, nil
}

// GraftDir answers tree with the folder g at g.Path (its parents made as needed): the engine's
// CAS holds g's Directory messages, so nothing of it is read here. A path the tree already holds,
// or one under a file or link of it, is refused.
func GraftDir(tree Tree, g Graft) (Tree, error) {
	if err := checkPath(g.Path); err != nil {
		return Tree{}, err
	}
	dirs := make(map[Digest][]byte, len(tree.Directories)+8)
	for d, data := range tree.Directories {
		dirs[d] = data
	}
	root, err := graftAt(dirs, tree.Root, g.Path, g.Path, g.Root)
	if err != nil {
		return Tree{}, err
	}
	return Tree{Root: root, Directories: dirs}, nil
}

// graftAt answers the digest of the folder at (whose Directory dirs holds) with the folder
// digest target at the relative path rest, writing the folders it changes into dirs.
func graftAt(dirs map[Digest][]byte, at Digest, rest, whole string, target Digest) (Digest, error) {
	msg := &pb.Directory{}
	if data, ok := dirs[at]; ok {
		if err := proto.Unmarshal(data, msg); err != nil {
			return Digest{}, fmt.Errorf("graft %s: %w", whole, err)
		}
	} else if at != (Digest{}) {
		return Digest{}, fmt.Errorf("graft %s: folder %s is not in the input root", whole, at.Hash)
	}
	name, below, deeper := strings.Cut(rest, "/")
	for _, f := range msg.GetFiles() {
		if f.GetName() == name {
			return Digest{}, fmt.Errorf("graft %s: the input root holds a file there", whole)
		}
	}
	for _, l := range msg.GetSymlinks() {
		if l.GetName() == name {
			return Digest{}, fmt.Errorf("graft %s: the input root holds a link there", whole)
		}
	}
	idx := -1
	for n, d := range msg.GetDirectories() {
		if d.GetName() == name {
			idx = n
		}
	}
	child := target
	switch {
	case !deeper && idx >= 0:
		return Digest{}, fmt.Errorf("graft %s: the input root holds that folder already", whole)
	case deeper:
		var sub Digest
		if idx >= 0 {
			sub = Digest{Hash: msg.Directories[idx].GetDigest().GetHash(), Size: msg.Directories[idx].GetDigest().GetSizeBytes()}
		}
		var err error
		if child, err = graftAt(dirs, sub, below, whole, target); err != nil {
			return Digest{}, err
		}
	}
	node := &pb.DirectoryNode{Name: name, Digest: child.Proto()}
	if idx >= 0 {
		msg.Directories[idx] = node
	} else {
		msg.Directories = append(msg.Directories, node)
		slices.SortFunc(msg.Directories, func(a, b *pb.DirectoryNode) int { return strings.Compare(a.GetName(), b.GetName()) })
	}
	data := marshal(msg)
	d := DigestOf(data)
	dirs[d] = data
	return d, nil
}
