// Package remoteexec builds what a task is as a Remote Execution API v2 Action: its Command (the
// task's command through `sh -c` in its project folder, exactly its declared environment with an
// explicit PATH and HOME, its declared outputs, the platform's properties) and its input root, a
// Merkle tree of Directory messages over the files its key was made from, links kept as
// SymlinkNodes. Every message is serialized deterministically, so that one task on two machines
// is one Action digest, as the engine's Action Cache needs.
package remoteexec

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	pb "github.com/bazelbuild/remote-apis/build/bazel/remote/execution/v2"
	"google.golang.org/protobuf/proto"
)

// Digest is a REAPI digest: the SHA-256 of a blob in hex, and its size.
type Digest struct {
	Hash string
	Size int64
}

// Proto is d as the API sends it.
func (d Digest) Proto() *pb.Digest { return &pb.Digest{Hash: d.Hash, SizeBytes: d.Size} }

// DigestOf is the digest of data.
func DigestOf(data []byte) Digest {
	sum := sha256.Sum256(data)
	return Digest{Hash: hex.EncodeToString(sum[:]), Size: int64(len(data))}
}

// marshal serializes a message deterministically; the messages here always serialize.
func marshal(m proto.Message) []byte {
	data, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", m, err))
	}
	return data
}

// Input is one entry of an input root: a file (its content's digest, whether it is executable)
// or, with Target set, a symbolic link. Path is slash-separated and relative to the root.
type Input struct {
	Path       string
	Digest     Digest
	Executable bool
	Target     string
}

// Tree is an input root: its digest, and every Directory message of it by digest (the root's
// among them), which the CAS must hold before an Action names the root.
type Tree struct {
	Root        Digest
	Directories map[Digest][]byte
}

// dir is a folder of the tree being built.
type dir struct {
	files    []*pb.FileNode
	links    []*pb.SymlinkNode
	children map[string]*dir
}

// BuildTree makes the Merkle tree of inputs: one Directory per folder, its files, folders and
// links each sorted by name, as the API requires. A path that is absolute, not clean, leaves the
// root, or names one entry twice (or a file and a folder alike) is refused.
func BuildTree(inputs []Input) (Tree, error) {
	root := &dir{children: map[string]*dir{}}
	seen := map[string]bool{}
	for _, in := range inputs {
		if err := checkPath(in.Path); err != nil {
			return Tree{}, err
		}
		if seen[in.Path] {
			return Tree{}, fmt.Errorf("input %s named twice", in.Path)
		}
		seen[in.Path] = true
		parent, name, err := root.parentOf(in.Path, seen)
		if err != nil {
			return Tree{}, err
		}
		if in.Target != "" {
			parent.links = append(parent.links, &pb.SymlinkNode{Name: name, Target: in.Target})
			continue
		}
		parent.files = append(parent.files, &pb.FileNode{Name: name, Digest: in.Digest.Proto(), IsExecutable: in.Executable})
	}
	t := Tree{Directories: map[Digest][]byte{}}
	t.Root = root.digest(t.Directories)
	return t, nil
}

// checkPath refuses an input path that cannot name a file inside the root.
func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("input path %q is not a clean path inside the root", p)
	}
	return nil
}

// parentOf answers the folder that holds p, made as needed, and p's last element.
func (d *dir) parentOf(p string, seen map[string]bool) (*dir, string, error) {
	parts := strings.Split(p, "/")
	for i, part := range parts[:len(parts)-1] {
		prefix := strings.Join(parts[:i+1], "/")
		if seen[prefix] {
			return nil, "", fmt.Errorf("input %s lies under %s, which is a file or a link", p, prefix)
		}
		child, ok := d.children[part]
		if !ok {
			child = &dir{children: map[string]*dir{}}
			d.children[part] = child
		}
		d = child
	}
	name := parts[len(parts)-1]
	if _, ok := d.children[name]; ok {
		return nil, "", fmt.Errorf("input %s is a folder of other inputs", p)
	}
	return d, name, nil
}

// digest serializes d and its folders into out and answers d's digest.
func (d *dir) digest(out map[Digest][]byte) Digest {
	msg := &pb.Directory{}
	for _, name := range slices.Sorted(maps.Keys(d.children)) {
		msg.Directories = append(msg.Directories, &pb.DirectoryNode{Name: name, Digest: d.children[name].digest(out).Proto()})
	}
	slices.SortFunc(d.files, func(a, b *pb.FileNode) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(d.links, func(a, b *pb.SymlinkNode) int { return strings.Compare(a.Name, b.Name) })
	msg.Files, msg.Symlinks = d.files, d.links
	data := marshal(msg)
	dg := DigestOf(data)
	out[dg] = data
	return dg
}
