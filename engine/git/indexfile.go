package git

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strings"
)

// Git's index file, read by vx itself: the format of git's Documentation/gitformat-index.txt,
// versions 2, 3 and 4. A fresh clone's first run reads the index before its first key, and reading
// the file takes a millisecond where `git ls-files -s --debug` takes a process and some twenty
// times the bytes to parse. What vx does not read itself — another version, a split index (its
// entries are a shared index's, changed), a sparse one (a folder stands for its files), a file
// whose checksum does not hold — it leaves to git, whose answer it then parses as before.

// Index extensions whose presence means the entries are not the whole index as stored.
var (
	extSplit  = []byte("link")
	extSparse = []byte("sdir")
)

// The on-disk entry flags.
const (
	diskFlagExtended = 0x4000
	diskFlagNameMask = 0x0fff
	diskStageShift   = 12
)

// parseIndexFile parses the index file data of a repository of the object format format ("sha1"
// or "sha256"): the stage-0 entries under the folder prefix (git's --show-prefix: "" or ending in
// "/"), by path relative to it, with the flags git keeps in memory, as ls-files --debug prints
// them. ok is false where git must read the index instead.
func parseIndexFile(data []byte, format, prefix string) (entries map[string]IndexEntry, ok bool) {
	var sum hash.Hash
	switch format {
	case "sha1":
		sum = sha1.New()
	case "sha256":
		sum = sha256.New()
	default:
		return nil, false
	}
	idLen := sum.Size()
	if len(data) < 12+idLen || string(data[:4]) != "DIRC" {
		return nil, false
	}
	body, trailer := data[:len(data)-idLen], data[len(data)-idLen:]
	// index.skipHash writes no checksum: a trailer of zeros.
	if !bytes.Equal(trailer, make([]byte, idLen)) {
		sum.Write(body)
		if !bytes.Equal(sum.Sum(nil), trailer) {
			return nil, false
		}
	}
	version := binary.BigEndian.Uint32(body[4:8])
	if version < 2 || version > 4 {
		return nil, false
	}
	count := binary.BigEndian.Uint32(body[8:12])
	entries = make(map[string]IndexEntry, min(count, 1<<20))
	fixed := 40 + idLen + 2 // ten 32-bit fields, the id, the flags
	pos := 12
	var prev string
	for range count {
		if pos+fixed > len(body) {
			return nil, false
		}
		e := body[pos:]
		u32 := func(i int) uint32 { return binary.BigEndian.Uint32(e[4*i:]) }
		flags := uint32(binary.BigEndian.Uint16(e[40+idLen:]))
		at := fixed
		if flags&diskFlagExtended != 0 {
			if version < 3 || pos+at+2 > len(body) {
				return nil, false
			}
			flags |= uint32(binary.BigEndian.Uint16(e[at:])) << 16
			at += 2
		}
		var name string
		if version == 4 {
			strip, n := offsetVarint(e[at:])
			if n == 0 || strip > uint64(len(prev)) {
				return nil, false
			}
			at += n
			end := bytes.IndexByte(e[at:], 0)
			if end < 0 {
				return nil, false
			}
			name = prev[:len(prev)-int(strip)] + string(e[at:at+end])
			at += end + 1
		} else {
			end := bytes.IndexByte(e[at:], 0)
			if end < 0 {
				return nil, false
			}
			name = string(e[at : at+end])
			// Each entry is padded with one to eight NULs to a multiple of eight bytes.
			at = (at + end + 8) &^ 7
			if pos+at > len(body) {
				return nil, false
			}
		}
		pos += at
		prev = name
		if (flags>>diskStageShift)&3 != 0 || !strings.HasPrefix(name, prefix) {
			continue
		}
		entries[name[len(prefix):]] = IndexEntry{
			Mode:    u32(6),
			ID:      hex.EncodeToString(e[40 : 40+idLen]),
			CtimeNs: int64(u32(0))*1e9 + int64(u32(1)),
			MtimeNs: int64(u32(2))*1e9 + int64(u32(3)),
			Ino:     uint64(u32(5)),
			Size:    u32(9),
			Flags:   flags &^ diskFlagNameMask,
		}
	}
	if !wholeIndex(body[pos:]) {
		return nil, false
	}
	return entries, true
}

// wholeIndex reports whether exts, an index's extensions, leave its entries the whole index: none
// is a split index's link or a sparse index's mark, and they end where the checksum starts.
func wholeIndex(exts []byte) bool {
	pos := 0
	for pos+8 <= len(exts) {
		sig, size := exts[pos:pos+4], int(binary.BigEndian.Uint32(exts[pos+4:pos+8]))
		if bytes.Equal(sig, extSplit) || bytes.Equal(sig, extSparse) || size < 0 || pos+8+size > len(exts) {
			return false
		}
		pos += 8 + size
	}
	return pos == len(exts)
}

// offsetVarint decodes git's offset varint (varint.c), which stores each continuation one less;
// n is 0 for a malformed one.
func offsetVarint(b []byte) (v uint64, n int) {
	for i, c := range b {
		if i == 9 {
			return 0, 0
		}
		if i > 0 {
			v++
		}
		v = v<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}
