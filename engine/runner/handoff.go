package runner

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/lock"
	"github.com/vzn/vx/engine/store"
)

// CallMarkerPrefix begins the name of the variable the MCP server marks each runTasks child's
// environment with (so that it finds what a call left running): the one difference between the
// server's environment and its child's, which a hand-off's stamp leaves out.
const CallMarkerPrefix = "VX_MCP_RUN_CALL_"

// AwaitRunArg is the hidden verb of a `vx run` child that vx mcp starts before it knows what it
// will run (`vx AwaitRunArg FD`): it loads its workspace and waits for a RunOrder on file
// descriptor FD.
const AwaitRunArg = "__await-run"

// A RunOrder tells an awaiting child what to run: vx's command line (a `run` and its flags and
// tasks, as a terminal would pass them), the variables to add to its environment (the call's
// marker, CallMarkerPrefix), and the key a hand-off to it must carry (Handoff.Key): a secret the
// server makes for this child alone, which reaches it only down the order's pipe.
type RunOrder struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Key  string   `json:"key,omitempty"`
}

// A Handoff is what vx mcp hands the `vx run` child of a runTasks call: the file state its
// watcher knew and the key of each task the call selects, which it planned from that state (its
// memo makes that a few milliseconds). The child takes that file state as its own, and, when the
// stamp of its own workspace, selection and environment is the one the keys were made with, each
// key as its own instead of hashing the task's files again; the same files, config and
// environment give the same keys. The child takes a handed key only while its run has written
// nothing (no task ran, no hit restored a file), and a task that runs makes its key from its files
// all the same (its manifest is recorded): should that differ, the child stops taking keys.
//
// Intact says which hits need no restore: their outputs were in place in that file state
// (cache.Intact). Where every task is such a hit, the server leaves the file state out (Files
// nil: at 1,000 packages it is 4 MB that the child would read and decode to find what Intact
// says), and the child asks the watcher for it only should it need it after all.
type Handoff struct {
	// Key is the secret of the child's order (RunOrder.Key): the child takes a hand-off only
	// when it carries its order's key.
	Key string
	// Root and StateDir are the workspace and the state folder the hand-off is of.
	Root, StateDir string
	// Files is the file state the keys were made from; nil when left out (see above).
	Files *filestate.Snapshot
	// Stamp is HandoffStamp of the workspace, tasks and environment the keys were made with.
	Stamp string
	// Keys are the keys by task id.
	Keys map[string]string
	// Index is what the server's memo knew of the index for those keys (nil: nothing).
	Index *HandedIndex
	// Intact are the tasks whose handed key's local entry has its outputs in place, by task id.
	// Index holds their entries without the output listing.
	Intact map[string]IntactHit
}

// IntactHit is a hit whose outputs were found in place: its entry's outputs blob
// (store.Entry.OutputsBlob), how many files its listing holds, and the digest of its outputs as
// they were found (outputsSeen), which the run checks against the disk (StaleIntact).
type IntactHit struct {
	Blob  string
	Files int
	Seen  string
}

// handoffMagic begins a hand-off's wire form, which is, every number a varint and a string its
// length then its bytes:
//
//	"VXHO" 4 key stamp nkeys { taskID key } index nintact { taskID outputsBlob files seen }
//	    root stateDir 0 | 1 snapshotLength snapshot
//
// where index is HandedIndex's (appendIndex), the entries of the intact hits' keys without their
// listing.
const handoffMagic = "VXHO\x04"

// errHandoff is a hand-off that does not decode.
var errHandoff = errors.New("not a hand-off of this vx")

// WriteHandoff writes h's wire form to w; a hand-off with Files and no Root is of Files' root
// and state folder.
func WriteHandoff(w io.Writer, h *Handoff) error {
	buf := make([]byte, 0, h.headSize())
	buf = append(buf, handoffMagic...)
	buf = appendString(appendString(buf, h.Key), h.Stamp)
	buf = binary.AppendUvarint(buf, uint64(len(h.Keys)))
	for _, id := range slices.Sorted(maps.Keys(h.Keys)) {
		buf = appendString(appendString(buf, id), h.Keys[id])
	}
	unlisted := make(map[string]bool, len(h.Intact))
	for id := range h.Intact {
		unlisted[h.Keys[id]] = true
	}
	buf = appendIndex(buf, h.Index, unlisted)
	buf = binary.AppendUvarint(buf, uint64(len(h.Intact)))
	for _, id := range slices.Sorted(maps.Keys(h.Intact)) {
		buf = appendString(appendString(buf, id), h.Intact[id].Blob)
		buf = binary.AppendUvarint(buf, uint64(h.Intact[id].Files))
		buf = appendString(buf, h.Intact[id].Seen)
	}
	root, stateDir := h.Root, h.StateDir
	if h.Files != nil && root == "" {
		root, stateDir = h.Files.Root(), h.Files.StateDir()
	}
	buf = appendString(appendString(buf, root), stateDir)
	if h.Files == nil {
		buf = append(buf, 0)
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("write the hand-off: %w", err)
		}
		return nil
	}
	snap := h.Files.Encoded()
	buf = binary.AppendUvarint(append(buf, 1), uint64(len(snap)))
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("write the hand-off: %w", err)
	}
	if _, err := w.Write(snap); err != nil {
		return fmt.Errorf("write the hand-off: %w", err)
	}
	return nil
}

// SizeHint answers about how many bytes h's wire form takes, for its writer to size a pipe.
func (h *Handoff) SizeHint() int {
	n := h.headSize()
	if h.Files != nil {
		n += len(h.Files.Encoded())
	}
	return n
}

// headSize answers about how many bytes h's wire form takes before its file state.
func (h *Handoff) headSize() int {
	n := 64 + len(h.Key) + len(h.Stamp) + len(h.Keys)*160 + len(h.Intact)*160
	if h.Index != nil {
		n += len(h.Index.Entries) * 256
		for _, e := range h.Index.Entries {
			if _, intact := h.Intact[e.TaskID]; !intact {
				n += len(e.Outputs) * 128
			}
		}
	}
	return n
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// maxHandoff bounds what ReadHandoff reads of a snapshot.
const maxHandoff = 1 << 30

// ReadHandoff reads a hand-off from r, to its end.
func ReadHandoff(r io.Reader) (*Handoff, error) {
	h, err := readHandoff(&streamReader{br: bufio.NewReaderSize(r, 64<<10)})
	if err != nil {
		return nil, fmt.Errorf("read the hand-off: %w", err)
	}
	return h, nil
}

func readHandoff(d *streamReader) (*Handoff, error) {
	magic := make([]byte, len(handoffMagic))
	if _, err := io.ReadFull(d.br, magic); err != nil || string(magic) != handoffMagic {
		return nil, errHandoff
	}
	h := &Handoff{Key: d.string()}
	h.Stamp = d.string()
	n := d.count()
	h.Keys = make(map[string]string, n)
	for range n {
		id := d.string()
		h.Keys[id] = d.string()
	}
	if d.err != nil {
		return nil, d.err
	}
	var err error
	if h.Index, err = readIndex(d.br); err != nil {
		return nil, err
	}
	n = d.count()
	h.Intact = make(map[string]IntactHit, n)
	for range n {
		id, blob := d.string(), d.string()
		files := int(d.count())
		h.Intact[id] = IntactHit{Blob: blob, Files: files, Seen: d.string()}
	}
	h.Root, h.StateDir = d.string(), d.string()
	hasFiles, err := d.br.ReadByte()
	switch {
	case d.err != nil:
		return nil, d.err
	case err != nil || hasFiles > 1:
		return nil, errHandoff
	case hasFiles == 0:
		if _, err := d.br.ReadByte(); !errors.Is(err, io.EOF) {
			return nil, errHandoff
		}
		return h, nil
	}
	size, err := binary.ReadUvarint(d.br)
	if err != nil || size > maxHandoff {
		return nil, errHandoff
	}
	// Read to the end, growing as it comes past 64 MiB: a length that lies allocates no more up
	// front.
	var snapBuf bytes.Buffer
	snapBuf.Grow(int(min(size, 64<<20)))
	_, err = snapBuf.ReadFrom(io.LimitReader(d.br, maxHandoff+1))
	snap := snapBuf.Bytes()
	if err != nil || uint64(len(snap)) != size {
		return nil, errHandoff
	}
	if h.Files, err = filestate.Decode(snap); err != nil {
		return nil, err
	}
	if h.Files.Root() != h.Root || h.Files.StateDir() != h.StateDir {
		return nil, errHandoff
	}
	return h, nil
}

// streamReader reads varints and strings off a stream; after the first that does not read (or
// is too long), each reads a zero, and err says errHandoff.
type streamReader struct {
	br  *bufio.Reader
	err error
}

// count reads a number of items, at most 1<<24.
func (d *streamReader) count() uint64 {
	if d.err != nil {
		return 0
	}
	n, err := binary.ReadUvarint(d.br)
	if err != nil || n > 1<<24 {
		d.err = errHandoff
		return 0
	}
	return n
}

// string reads a string of at most 1 MiB.
func (d *streamReader) string() string {
	if d.err != nil {
		return ""
	}
	n, err := binary.ReadUvarint(d.br)
	if err != nil || n > 1<<20 {
		d.err = errHandoff
		return ""
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(d.br, b); err != nil {
		d.err = errHandoff
		return ""
	}
	return string(b)
}

// HandoffStamp answers the digest of what a task's key is made of besides its files and its
// dependencies' keys, for the tasks ids of ws: each task's resolved config as vx.lock records it,
// the projects whose files it takes, its folder, the workspace's global inputs and env, the
// cache's version, and the whole environment (its marker variable left out). Two processes
// with the same stamp and the same files make the same keys.
func HandoffStamp(ws *graph.Workspace, ids []string, environ []string) string {
	type taskStamp struct {
		ID              string           `json:"id"`
		Config          lock.Fingerprint `json:"config"`
		Dir             string           `json:"dir"`
		Through         []string         `json:"through"`
		DependencyFiles []string         `json:"dependencyFiles"`
		DependencyGlobs []string         `json:"dependencyGlobs"`
		EnvMode         string           `json:"envMode"`
		PassThroughEnv  []string         `json:"passThroughEnv"`
	}
	h := sha256.New()
	enc := json.NewEncoder(h)
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		if !strings.HasPrefix(kv, CallMarkerPrefix) {
			env = append(env, kv)
		}
	}
	slices.Sort(env)
	_ = enc.Encode([]any{hasher.CacheVersion, ws.Root, ws.CacheDir, ws.GlobalInputs, ws.Env, ws.EnvMode, ws.PassThroughEnv, env})
	sorted := slices.Sorted(slices.Values(ids))
	for _, id := range sorted {
		t, ok := ws.Task(id)
		if !ok {
			_ = enc.Encode(id)
			continue
		}
		ts := taskStamp{ID: id, Config: lock.FingerprintOf(t), Through: t.Through, DependencyFiles: t.DependencyFiles,
			EnvMode: t.EnvMode, PassThroughEnv: t.PassThroughEnv}
		ts.DependencyGlobs, _ = t.DependencyInputs()
		if p, ok := ws.Project(t.Project); ok {
			ts.Dir = p.Dir
		}
		_ = enc.Encode(ts)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// handedKeys are the keys a run was handed (Options.Handoff) while it may take them: until
// the run writes a file, or a key made from the files differs from a handed one; and, as long,
// the hits whose outputs the server found in place (Options.HandedIntact).
type handedKeys struct {
	keys   map[string]string
	intact map[string]IntactHit
	// off is set once the run wrote a file or a handed key proved wrong.
	off atomic.Bool
	// wrongOnce says the first wrong key once.
	wrongOnce sync.Once
}

func newHandedKeys(keys map[string]string, intact map[string]IntactHit) *handedKeys {
	if len(keys) == 0 {
		return nil
	}
	return &handedKeys{keys: keys, intact: intact}
}

// isIntact reports whether the outputs of task id's local entry e were in place in the handed
// file state, while the run may take what it was handed: e is the entry of the task's handed key
// and of the outputs blob the server found in place. It answers how many files the entry's listing
// holds. Such a hit restores nothing.
func (k *handedKeys) isIntact(id string, e store.Entry) (files int, ok bool) {
	if k == nil || k.off.Load() {
		return 0, false
	}
	hit, ok := k.intact[id]
	if !ok || hit.Blob != e.OutputsBlob || k.keys[id] != e.Hash {
		return 0, false
	}
	return hit.Files, true
}

// key answers the handed key of task id while the run may take it and every dependency's key
// (depKeys, as the run made them) is the handed one.
func (k *handedKeys) key(id string, depKeys map[string]string) (string, bool) {
	if k == nil || k.off.Load() {
		return "", false
	}
	key, ok := k.keys[id]
	if !ok {
		return "", false
	}
	for d, dk := range depKeys {
		if k.keys[d] != dk {
			return "", false
		}
	}
	return key, true
}

// wrote stops the taking of keys: the run wrote a file, which may be an input of a later task.
func (k *handedKeys) wrote() {
	if k != nil {
		k.off.Store(true)
	}
}

// wrong stops the taking of keys after the handed key of a task differed from its files'; it
// reports whether this was the first.
func (k *handedKeys) wrong() (first bool) {
	if k == nil {
		return false
	}
	k.off.Store(true)
	k.wrongOnce.Do(func() { first = true })
	return first
}

// shortKey is the first 12 digits of a key, as vx shows it.
func shortKey(k string) string { return k[:min(len(k), 12)] }

// handedKeyList answers the handed keys of the cached tasks of a run of nodes that may take
// them (no --force, no --sandbox-agent), for their entries to be read before the run.
func handedKeyList(opts Options, nodes []*node) []string {
	if len(opts.Handoff) == 0 || opts.Force || opts.Sandbox.Agent {
		return nil
	}
	keys := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if k, ok := opts.Handoff[n.task.ID]; ok && n.task.Cache {
			keys = append(keys, k)
		}
	}
	return keys
}

// intactFunc answers isIntact as the cache asks it, nil when nothing was handed as intact.
func (k *handedKeys) intactFunc() func(id string, e store.Entry) (int, bool) {
	if k == nil || len(k.intact) == 0 {
		return nil
	}
	return k.isIntact
}
