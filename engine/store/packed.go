package store

import "encoding/binary"

// packedVersion is the layout that packs the stat cache by folder and the cache entries' output
// listings (migration 5); a reader of an older index reads neither.
const packedVersion = 5

// appendText appends a length-first text.
func appendText(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// packedReader reads the packed rows of the index (the stat cache's folders, the output listings):
// varints and length-first texts from buf at pos. str is buf as a string, which the texts are cut
// from; ok turns false at the first fault and stays so.
type packedReader struct {
	buf []byte
	str string
	pos int
	ok  bool
}

func (d *packedReader) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *packedReader) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or binary.Varint).
func readVarint[T uint64 | int64](d *packedReader, read func([]byte) (T, int)) T {
	if !d.ok {
		return 0
	}
	v, n := read(d.buf[d.pos:])
	if n <= 0 {
		d.ok = false
		return 0
	}
	d.pos += n
	return v
}

func (d *packedReader) text() string {
	n := d.uvarint()
	if !d.ok || n > uint64(len(d.buf)-d.pos) {
		d.ok = false
		return ""
	}
	s := d.str[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return s
}
