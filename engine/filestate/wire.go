package filestate

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"unsafe"
)

// The wire form of a Snapshot, as the socket carries it: the magic and version, the root and the
// state folder, then each folder (sorted) with its entries, every number a varint:
//
//	"VXFS" 3 root stateDir ndirs { dir mode size mtime ctime ino nentries { name flags mode size mtime ctime ino [link] [hash] [digest] } }
//
// where a string is its length then its bytes, flags say visible (1), opaque (2), a link target
// follows (4), a hash follows (8: its 64 hex digits, which the decoder cuts from the answer as
// they are, where 32 bytes would cost a string each), a digest follows (16: a string).
const (
	wireMagic   = "VXFS"
	wireVersion = 3

	flagVisible = 1 << iota
	flagOpaque
	flagLink
	flagHash
	flagDigest
)

// errWire is a wire form that does not decode.
var errWire = errors.New("file state: not a snapshot of this vx")

// Encoded answers the snapshot's wire form, made once.
func (s *Snapshot) Encoded() []byte {
	s.encodeOnce.Do(func() { s.encoded = s.encode() })
	return s.encoded
}

func (s *Snapshot) encode() []byte {
	dirs := make([]string, 0, len(s.dirs))
	n := 64 + len(s.root) + len(s.stateDir)
	for dir, d := range s.dirs {
		dirs = append(dirs, dir)
		n += len(dir) + 2*binary.MaxVarintLen64 + len(d.encoded())
	}
	slices.Sort(dirs)
	buf := make([]byte, 0, n)
	buf = append(buf, wireMagic...)
	buf = append(buf, wireVersion)
	buf = appendString(buf, s.root)
	buf = appendString(buf, s.stateDir)
	buf = binary.AppendUvarint(buf, uint64(len(dirs)))
	for _, dir := range dirs {
		buf = appendString(buf, dir)
		buf = append(buf, s.dirs[dir].encoded()...)
	}
	return buf
}

// encoded answers the folder's wire form (its number of entries, then each), made once.
func (d *Dir) encoded() []byte {
	d.wireOnce.Do(func() {
		buf := make([]byte, 0, 40+len(d.Entries)*96)
		buf = appendStat(buf, &d.Info)
		buf = binary.AppendUvarint(buf, uint64(len(d.Entries)))
		for i := range d.Entries {
			buf = appendEntry(buf, &d.Entries[i])
		}
		d.wire = buf
	})
	return d.wire
}

func appendEntry(buf []byte, e *Entry) []byte {
	var flags byte
	if e.Visible {
		flags |= flagVisible
	}
	if e.Opaque {
		flags |= flagOpaque
	}
	if e.Info.Link != "" {
		flags |= flagLink
	}
	if len(e.Info.Hash) == hashLen {
		flags |= flagHash
	}
	if e.Info.Digest != "" {
		flags |= flagDigest
	}
	buf = appendString(buf, e.Name)
	buf = append(buf, flags)
	buf = appendStat(buf, &e.Info)
	if flags&flagLink != 0 {
		buf = appendString(buf, e.Info.Link)
	}
	if flags&flagHash != 0 {
		buf = append(buf, e.Info.Hash...)
	}
	if flags&flagDigest != 0 {
		buf = appendString(buf, e.Info.Digest)
	}
	return buf
}

// appendStat appends an info's stat: mode, size, stamps and inode.
func appendStat(buf []byte, i *Info) []byte {
	buf = binary.AppendUvarint(buf, uint64(i.Mode))
	buf = binary.AppendVarint(buf, i.Size)
	buf = binary.AppendVarint(buf, i.MtimeNs)
	buf = binary.AppendVarint(buf, i.CtimeNs)
	return binary.AppendUvarint(buf, i.Ino)
}

// hashLen is the length of a hex SHA-256.
const hashLen = 64

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// Decode reads a snapshot's wire form, taking data as its own: the snapshot's names and hashes are
// cut from it (a snapshot of 300 packages is a megabyte or more, copied for nothing), so data
// must not change after.
func Decode(data []byte) (*Snapshot, error) {
	r := reader{buf: data, str: unsafe.String(unsafe.SliceData(data), len(data))}
	if len(data) < len(wireMagic)+1 || r.str[:len(wireMagic)] != wireMagic || data[len(wireMagic)] != wireVersion {
		return nil, errWire
	}
	r.pos = len(wireMagic) + 1
	root, stateDir := r.string(), r.string()
	ndirs := r.count()
	dirs := make(map[string]*Dir, ndirs)
	for range ndirs {
		dir := r.string()
		var self Info
		r.stat(&self)
		entries := make([]Entry, r.count())
		for i := range entries {
			r.entry(&entries[i])
		}
		if r.err != nil {
			break
		}
		dirs[dir] = &Dir{Info: self, Entries: entries}
	}
	if r.err == nil && r.pos != len(data) {
		r.err = errWire
	}
	if r.err != nil {
		return nil, fmt.Errorf("decode file state: %w", r.err)
	}
	return NewSnapshot(root, stateDir, dirs), nil
}

// reader reads the wire form; strings are cut from one copy of it.
type reader struct {
	buf []byte
	str string
	pos int
	err error
}

func (r *reader) entry(e *Entry) {
	e.Name = r.string()
	flags := r.byte()
	e.Visible, e.Opaque = flags&flagVisible != 0, flags&flagOpaque != 0
	r.stat(&e.Info)
	if flags&flagLink != 0 {
		e.Info.Link = r.string()
	}
	if flags&flagHash != 0 {
		if r.pos+hashLen > len(r.buf) {
			r.fail()
			return
		}
		e.Info.Hash = r.str[r.pos : r.pos+hashLen]
		r.pos += hashLen
	}
	if flags&flagDigest != 0 {
		e.Info.Digest = r.string()
	}
}

// stat reads an info's stat (appendStat's).
func (r *reader) stat(i *Info) {
	i.Mode = fs.FileMode(r.uvarint())
	i.Size, i.MtimeNs, i.CtimeNs = r.varint(), r.varint(), r.varint()
	i.Ino = r.uvarint()
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = errWire
	}
	r.pos = len(r.buf)
}

func (r *reader) byte() byte {
	if r.pos >= len(r.buf) {
		r.fail()
		return 0
	}
	b := r.buf[r.pos]
	r.pos++
	return b
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.buf[r.pos:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.pos += n
	return v
}

func (r *reader) varint() int64 {
	v, n := binary.Varint(r.buf[r.pos:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.pos += n
	return v
}

// count reads a length no larger than what is left to read.
func (r *reader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.buf)-r.pos) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *reader) string() string {
	n := r.count()
	s := r.str[r.pos : r.pos+n]
	r.pos += n
	return s
}
