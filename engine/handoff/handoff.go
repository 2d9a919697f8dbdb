// Package handoff is the protocol between vx mcp and the `vx run` child of a runTasks call: the
// order that tells an awaiting child what to run (Order), the hand-off that gives it what the
// server already knows (Handoff: the watcher's file state, each task's key, the index entries of
// those keys, the hits whose outputs are in place), the index as the server read it (Index), and
// the stamp that says the child's keys would be the server's (Stamp). The server writes it
// (tools), vx's command reads it (cmd/vx), and the runner receives what is known of it (Known).
package handoff

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/vzn/vx/engine/filestate"
)

// CallMarkerPrefix begins the name of the variable the MCP server marks each runTasks child's
// environment with (so that it finds what a call left running): the one difference between the
// server's environment and its child's, which a hand-off's stamp leaves out.
const CallMarkerPrefix = "VX_MCP_RUN_CALL_"

// AwaitRunArg is the hidden verb of a `vx run` child that vx mcp starts before it knows what it
// will run (`vx AwaitRunArg FD`): it loads its workspace and waits for an Order on file
// descriptor FD.
const AwaitRunArg = "__await-run"

// An Order tells an awaiting child what to run: vx's command line (a `run` and its flags and
// tasks, as a terminal would pass them), the variables to add to its environment (the call's
// marker, CallMarkerPrefix), and the key a hand-off to it must carry (Handoff.Key): a secret the
// server makes for this child alone, which reaches it only down the order's pipe.
type Order struct {
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Key  string   `json:"key,omitempty"`
}

// Known is what a run is handed that it need not find out itself: the key of each task, what the
// server knew of the index for those keys, and the hits whose outputs it found in place. A run
// takes the keys only while it has written nothing (no task ran, no hit restored a file), and a
// task that runs makes its key from its files all the same: should that differ, the run stops
// taking keys. A nil Known is a run that knows nothing ahead, as any CLI vx run.
type Known struct {
	// Keys are the keys by task id.
	Keys map[string]string
	// Index is what the server's memo knew of the index for those keys (nil: nothing).
	Index *Index
	// Intact are the tasks whose handed key's local entry has its outputs in place, by task id.
	// Index holds their entries without the output listing.
	Intact map[string]IntactHit
}

// A Handoff is what vx mcp hands the `vx run` child of a runTasks call: the file state its watcher
// knew and what it knew of the call's tasks (Known), which it planned from that state (through its
// memo, which makes again only what moved). The child takes that file state as its own, and, when
// the stamp of its own workspace, selection and environment is the one the keys were made with,
// what is known as its own instead of hashing the tasks' files again; the same files, config and
// environment give the same keys.
//
// Where every task is a hit whose outputs are in place (Intact), the server leaves the file state
// out (Files nil: the child would read and decode all of it to find what Intact says; see
// docs/performance.md, "The server's shortcuts: memo, hand-off, child started ahead"), and the
// child asks the watcher for it only should it need it after all.
type Handoff struct {
	// Key is the secret of the child's order (Order.Key): the child takes a hand-off only when it
	// carries its order's key.
	Key string
	// Root and StateDir are the workspace and the state folder the hand-off is of.
	Root, StateDir string
	// Files is the file state the keys were made from; nil when left out (see above).
	Files *filestate.Snapshot
	// Stamp is Stamp of the workspace, tasks and environment the keys were made with.
	Stamp string
	Known
}

// IntactHit is a hit whose outputs were found in place: its entry's outputs blob
// (store.Entry.OutputsBlob), how many files its listing holds, and the digest of its outputs as
// they were found (OutputsSeen), which the run checks against the disk (StaleIntact).
type IntactHit struct {
	Blob  string
	Files int
	Seen  string
}

// magic begins a hand-off's wire form, which is, every number a varint and a string its length
// then its bytes:
//
//	"VXHO" 4 key stamp nkeys { taskID key } index nintact { taskID outputsBlob files seen }
//	    root stateDir 0 | 1 snapshotLength snapshot
//
// where index is Index's (appendIndex), the entries of the intact hits' keys without their
// listing.
const magic = "VXHO\x04"

// errHandoff is a hand-off that does not decode.
var errHandoff = errors.New("not a hand-off of this vx")

// Write writes h's wire form to w; a hand-off with Files and no Root is of Files' root and state
// folder.
func Write(w io.Writer, h *Handoff) error {
	buf := make([]byte, 0, h.headSize())
	buf = append(buf, magic...)
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

// maxHandoff bounds what Read reads of a snapshot.
const maxHandoff = 1 << 30

// Read reads a hand-off from r, to its end.
func Read(r io.Reader) (*Handoff, error) {
	h, err := read(&streamReader{br: bufio.NewReaderSize(r, 64<<10)})
	if err != nil {
		return nil, fmt.Errorf("read the hand-off: %w", err)
	}
	return h, nil
}

func read(d *streamReader) (*Handoff, error) {
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(d.br, head); err != nil || string(head) != magic {
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
	if d.err != nil {
		return nil, d.err
	}
	return readFiles(d.br, h)
}

// readFiles reads the rest of h's wire form: its file state, or none.
func readFiles(br *bufio.Reader, h *Handoff) (*Handoff, error) {
	hasFiles, err := br.ReadByte()
	switch {
	case err != nil || hasFiles > 1:
		return nil, errHandoff
	case hasFiles == 0:
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			return nil, errHandoff
		}
		return h, nil
	}
	size, err := binary.ReadUvarint(br)
	if err != nil || size > maxHandoff {
		return nil, errHandoff
	}
	// Read to the end, growing as it comes past 64 MiB: a length that lies allocates no more up
	// front.
	var snapBuf bytes.Buffer
	snapBuf.Grow(int(min(size, 64<<20)))
	_, err = snapBuf.ReadFrom(io.LimitReader(br, maxHandoff+1))
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
