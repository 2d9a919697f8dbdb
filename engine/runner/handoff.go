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
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/hasher"
	"github.com/vzn/vx/engine/lock"
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
// tasks, as a terminal would pass them) and the variables to add to its environment (the call's
// marker, CallMarkerPrefix).
type RunOrder struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
}

// A Handoff is what vx mcp hands the `vx run` child of a runTasks call: the file state its
// watcher knew and the key of each task the call selects, which it planned from that state (its
// memo makes that a few milliseconds). The child takes that file state as its own, and, when the
// stamp of its own workspace, selection and environment is the one the keys were made with, each
// key as its own instead of hashing the task's files again; the same files, config and
// environment give the same keys. The child takes a handed key only while its run has written
// nothing (no task ran, no hit restored a file), and a task that runs makes its key from its files
// all the same (its manifest is recorded): should that differ, the child stops taking keys.
type Handoff struct {
	// Files is the file state the keys were made from.
	Files *filestate.Snapshot
	// Stamp is HandoffStamp of the workspace, tasks and environment the keys were made with.
	Stamp string
	// Keys are the keys by task id.
	Keys map[string]string
	// Index is what the server's memo knew of the index for those keys (nil: nothing).
	Index *HandedIndex
}

// handoffMagic begins a hand-off's wire form, which is, every number a varint and a string its
// length then its bytes:
//
//	"VXHO" 2 stamp nkeys { taskID key } index snapshotLength snapshot
//
// where index is HandedIndex's (appendIndex).
const handoffMagic = "VXHO\x02"

// errHandoff is a hand-off that does not decode.
var errHandoff = errors.New("not a hand-off of this vx")

// WriteHandoff writes h's wire form to w.
func WriteHandoff(w io.Writer, h *Handoff) error {
	ids := make([]string, 0, len(h.Keys))
	for id := range h.Keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	buf := make([]byte, 0, 64+len(ids)*96)
	buf = append(buf, handoffMagic...)
	buf = appendString(buf, h.Stamp)
	buf = binary.AppendUvarint(buf, uint64(len(ids)))
	for _, id := range ids {
		buf = appendString(appendString(buf, id), h.Keys[id])
	}
	buf = appendIndex(buf, h.Index)
	snap := h.Files.Encoded()
	buf = binary.AppendUvarint(buf, uint64(len(snap)))
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("write the hand-off: %w", err)
	}
	if _, err := w.Write(snap); err != nil {
		return fmt.Errorf("write the hand-off: %w", err)
	}
	return nil
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// maxHandoff bounds what ReadHandoff reads of a snapshot.
const maxHandoff = 1 << 30

// ReadHandoff reads a hand-off from r, to its end.
func ReadHandoff(r io.Reader) (*Handoff, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic := make([]byte, len(handoffMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != handoffMagic {
		return nil, fmt.Errorf("read the hand-off: %w", errHandoff)
	}
	str := func() (string, error) {
		n, err := binary.ReadUvarint(br)
		if err != nil || n > 1<<20 {
			return "", errHandoff
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return "", errHandoff
		}
		return string(b), nil
	}
	h := &Handoff{}
	var err error
	if h.Stamp, err = str(); err != nil {
		return nil, fmt.Errorf("read the hand-off: %w", err)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > 1<<24 {
		return nil, fmt.Errorf("read the hand-off: %w", errHandoff)
	}
	h.Keys = make(map[string]string, n)
	for range n {
		id, err := str()
		if err != nil {
			return nil, fmt.Errorf("read the hand-off: %w", err)
		}
		if h.Keys[id], err = str(); err != nil {
			return nil, fmt.Errorf("read the hand-off: %w", err)
		}
	}
	if h.Index, err = readIndex(br); err != nil {
		return nil, fmt.Errorf("read the hand-off: %w", err)
	}
	size, err := binary.ReadUvarint(br)
	if err != nil || size > maxHandoff {
		return nil, fmt.Errorf("read the hand-off: %w", errHandoff)
	}
	// Read to the end, growing as it comes past 64 MiB: a length that lies allocates no more up
	// front.
	var snapBuf bytes.Buffer
	snapBuf.Grow(int(min(size, 64<<20)))
	_, err = snapBuf.ReadFrom(io.LimitReader(br, maxHandoff+1))
	snap := snapBuf.Bytes()
	if err != nil || uint64(len(snap)) != size {
		return nil, fmt.Errorf("read the hand-off: %w", errHandoff)
	}
	if h.Files, err = filestate.Decode(snap); err != nil {
		return nil, fmt.Errorf("read the hand-off: %w", err)
	}
	return h, nil
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
// the run writes a file, or a key made from the files differs from a handed one.
type handedKeys struct {
	keys map[string]string
	// off is set once the run wrote a file or a handed key proved wrong.
	off atomic.Bool
	// wrongOnce says the first wrong key once.
	wrongOnce sync.Once
}

func newHandedKeys(keys map[string]string) *handedKeys {
	if len(keys) == 0 {
		return nil
	}
	return &handedKeys{keys: keys}
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
