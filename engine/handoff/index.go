package handoff

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/vzn/vx/engine/filestate"
	"github.com/vzn/vx/engine/store"
)

// Index is what a vx mcp's memo knew of the index for the tasks of a hand-off: the cache entry of
// each key that hits and each task's recent command runs (what the schedule's estimates are made
// from), read while the state folder stamped as State. A run takes them in place of reading them
// from the index while the folder still stamps so (Current): no commit, checkpoint or eviction
// since. A key that missed has no entry; the run looks it up as any run does.
type Index struct {
	// State is the state folder's stamp when the entries and runs were read.
	State StateStamp
	// Entries are the entries of the keys that hit, by key.
	Entries map[string]store.Entry
	// Unlisted are the keys whose entry came without its output listing: those of hits whose
	// outputs were in place (Known.Intact), which the run reads again should it restore one.
	Unlisted map[string]bool
	// Runs are each task's recent command runs, newest first (none: nil), by task id.
	Runs map[string][]store.CommandRun
}

// StateStamp is what the state folders' stats say of the checkout's index, the shared store's index
// and its CAS: any commit, any checkpoint (of this checkout's run or another's sharing the store),
// any folder of blobs created or removed moves it.
type StateStamp struct {
	Index, WAL, CAS        filestate.Info
	SharedIndex, SharedWAL filestate.Info
}

// StampState answers the stamp of the checkout's state folder dir and the shared store shared
// ("" for dir itself) now.
func StampState(dir, shared string) StateStamp {
	if shared == "" {
		shared = dir
	}
	stat := func(dir, name string) filestate.Info {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return filestate.Info{}
		}
		return filestate.InfoOf(fi)
	}
	return StateStamp{Index: stat(dir, store.IndexFile), WAL: stat(dir, store.IndexFile+"-wal"), CAS: stat(shared, "cas"),
		SharedIndex: stat(shared, store.SharedIndexFile), SharedWAL: stat(shared, store.SharedIndexFile+"-wal")}
}

// infos are the stamp's parts, in their wire order.
func (s *StateStamp) infos() []*filestate.Info {
	return []*filestate.Info{&s.Index, &s.WAL, &s.CAS, &s.SharedIndex, &s.SharedWAL}
}

// Same reports whether two stamps say the same of the index, its WAL and the CAS folder: a write
// moves a file's size or mtime (and a replaced file its inode). The change time is left out:
// SQLite, run as root, gives each WAL it opens to the database's owner (fchown), so a reader's
// new connection moves it without a write.
func (s StateStamp) Same(o StateStamp) bool {
	return sameWrite(s.Index, o.Index) && sameWAL(s.WAL, o.WAL) && sameWrite(s.CAS, o.CAS) &&
		sameWrite(s.SharedIndex, o.SharedIndex) && sameWAL(s.SharedWAL, o.SharedWAL)
}

// sameWAL is sameWrite for a WAL file, where none and an empty one say the same: the index file
// alone holds every commit. A reader's open creates an empty WAL where its last connection's close
// removed it (the shared index, which no watcher holds open, does so between runs).
func sameWAL(a, b filestate.Info) bool {
	return a.Size == 0 && b.Size == 0 || sameWrite(a, b)
}

func sameWrite(a, b filestate.Info) bool {
	return a.Mode == b.Mode && a.Size == b.Size && a.MtimeNs == b.MtimeNs && a.Ino == b.Ino
}

// Current answers h while the state folders dir and shared stamp as they did when h was read, nil
// else. A run asks before it opens the index: opening it may create its WAL.
func (h *Index) Current(dir, shared string) *Index {
	if h == nil || !StampState(dir, shared).Same(h.State) {
		return nil
	}
	return h
}

// appendIndex appends h's wire form: a length, then (none for a nil h) the stamp, the entries
// (those of the keys unlisted without their output listing) and the runs, every number a varint.
func appendIndex(buf []byte, h *Index, unlisted map[string]bool) []byte {
	if h == nil {
		return binary.AppendUvarint(buf, 0)
	}
	var b []byte
	for _, info := range h.State.infos() {
		b = binary.AppendUvarint(b, uint64(info.Mode))
		b = binary.AppendVarint(b, info.Size)
		b = binary.AppendVarint(b, info.MtimeNs)
		b = binary.AppendUvarint(b, info.Ino)
	}
	keys := slices.Sorted(maps.Keys(h.Entries))
	b = binary.AppendUvarint(b, uint64(len(keys)))
	for _, k := range keys {
		b = appendEntry(b, h.Entries[k], !unlisted[k])
	}
	ids := slices.Sorted(maps.Keys(h.Runs))
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = appendString(b, id)
		b = binary.AppendUvarint(b, uint64(len(h.Runs[id])))
		for _, c := range h.Runs[id] {
			b = appendString(b, string(c.Status))
			b = binary.AppendVarint(b, int64(c.Duration))
			b = binary.AppendVarint(b, c.PeakRSSBytes)
		}
	}
	return append(binary.AppendUvarint(buf, uint64(len(b))), b...)
}

// appendEntry appends e's wire form; its listing is a count plus one then each file, or 0 when
// left out (listed false).
func appendEntry(b []byte, e store.Entry, listed bool) []byte {
	for _, s := range []string{e.Hash, e.TaskID, e.Project, e.Command, e.OutputsBlob, e.LogBlob, e.Checkout} {
		b = appendString(b, s)
	}
	for _, n := range []int64{e.Size, int64(e.Duration), int64(e.ExitCode), e.Created.UnixNano(), e.LastUsed.UnixNano()} {
		b = binary.AppendVarint(b, n)
	}
	if !listed {
		return binary.AppendUvarint(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(e.Outputs))+1)
	for _, f := range e.Outputs {
		b = appendString(b, f.Path)
		b = binary.AppendVarint(b, f.Size)
		b = binary.AppendUvarint(b, uint64(f.Mode))
		b = appendString(appendString(b, f.Hash), f.Link)
	}
	return b
}

// errIndex is a handed index that does not decode.
var errIndex = errors.New("a handed index that does not decode")

// maxIndex bounds the handed index's wire form.
const maxIndex = 256 << 20

// readIndex reads what appendIndex wrote: nil for none.
func readIndex(br *bufio.Reader) (*Index, error) {
	size, err := binary.ReadUvarint(br)
	if err != nil || size > maxIndex {
		return nil, errIndex
	}
	if size == 0 {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(br, int64(size)))
	if err != nil || uint64(len(b)) != size {
		return nil, errIndex
	}
	d := &wireReader{b: b}
	h := &Index{}
	for _, info := range h.State.infos() {
		info.Mode, info.Size, info.MtimeNs, info.Ino = fs.FileMode(d.uvarint()), d.varint(), d.varint(), d.uvarint()
	}
	n := d.count()
	h.Entries = make(map[string]store.Entry, n)
	for range n {
		e, listed := d.entry()
		h.Entries[e.Hash] = e
		if !listed {
			if h.Unlisted == nil {
				h.Unlisted = map[string]bool{}
			}
			h.Unlisted[e.Hash] = true
		}
	}
	n = d.count()
	h.Runs = make(map[string][]store.CommandRun, n)
	for range n {
		id := d.string()
		var runs []store.CommandRun
		for range d.count() {
			runs = append(runs, store.CommandRun{Status: store.Status(d.string()), Duration: time.Duration(d.varint()), PeakRSSBytes: d.varint()})
		}
		h.Runs[id] = runs
	}
	if d.bad || len(d.b) != 0 {
		return nil, errIndex
	}
	return h, nil
}

// wireReader reads varints and strings off b; past its end, or on a malformed number, it reads
// zeros and sets bad.
type wireReader struct {
	b   []byte
	bad bool
}

func (d *wireReader) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *wireReader) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.bad, d.b = true, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number of items, each at least a byte long: never more than what is left.
func (d *wireReader) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return 0
	}
	return int(n)
}

func (d *wireReader) string() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.bad, d.b = true, nil
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// entry reads an entry; listed is false for one without its output listing.
func (d *wireReader) entry() (e store.Entry, listed bool) {
	e = store.Entry{Hash: d.string(), TaskID: d.string(), Project: d.string(), Command: d.string(), OutputsBlob: d.string(), LogBlob: d.string(), Checkout: d.string()}
	e.Size, e.Duration, e.ExitCode = d.varint(), time.Duration(d.varint()), int(d.varint())
	e.Created, e.LastUsed = time.Unix(0, d.varint()), time.Unix(0, d.varint())
	n := d.count()
	if n == 0 {
		return e, false
	}
	if n > 1 {
		e.Outputs = make([]store.OutputFile, 0, n-1)
	}
	for range n - 1 {
		e.Outputs = append(e.Outputs, store.OutputFile{Path: d.string(), Size: d.varint(), Mode: uint32(d.uvarint()), Hash: d.string(), Link: d.string()})
	}
	return e, true
}
