package filestate

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"
)

// Git's object formats: a blob's id is the SHA-1 or the SHA-256 of "blob SIZE\0" and its content.
const (
	FormatSHA1   = "sha1"
	FormatSHA256 = "sha256"
)

// newObjectHash answers the hash of an object format (SHA-1 for any other name).
func newObjectHash(format string) hash.Hash {
	if format == FormatSHA256 {
		return sha256.New()
	}
	return sha1.New()
}

// BlobID answers git's blob id of data in the object format (`git hash-object` of a file holding
// data, with no conversion).
func BlobID(format string, data []byte) string {
	h := newObjectHash(format)
	writeBlobHeader(h, int64(len(data)))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

func writeBlobHeader(w io.Writer, size int64) {
	io.WriteString(w, "blob "+strconv.FormatInt(size, 10)+"\x00")
}

// TextStats counts what git's line-ending conversion looks at in a content (convert.c's
// gather_stats): CRLF pairs, carriage returns not before a line feed, NUL bytes, and printable
// and non-printable bytes.
type TextStats struct {
	CRLF, LoneCR, NUL, Printable, NonPrintable int64
	// CR counts every carriage return.
	CR int64

	pendingCR bool
	last      byte
	seen      bool
}

// Write counts p; it never fails.
func (s *TextStats) Write(p []byte) (int, error) {
	for _, c := range p {
		if s.pendingCR {
			s.pendingCR = false
			if c == '\n' {
				s.CRLF++
				continue
			}
			s.LoneCR++
		}
		switch {
		case c == '\r':
			s.CR++
			s.pendingCR = true
		case c == '\n':
		case c == 127:
			s.NonPrintable++
		case c < 32:
			switch c {
			case '\b', '\t', '\033', '\014':
				s.Printable++
			case 0:
				s.NUL++
				s.NonPrintable++
			default:
				s.NonPrintable++
			}
		default:
			s.Printable++
		}
	}
	if len(p) > 0 {
		s.last, s.seen = p[len(p)-1], true
	}
	return len(p), nil
}

// finish ends the count: a carriage return at the very end stands alone, and a trailing EOF
// byte (^Z) is not counted as non-printable.
func (s *TextStats) finish() {
	if s.pendingCR {
		s.pendingCR = false
		s.LoneCR++
	}
	if s.seen && s.last == '\032' {
		s.NonPrintable--
	}
}

// CountText answers the text counts of data.
func CountText(data []byte) TextStats {
	var s TextStats
	s.Write(data)
	s.finish()
	return s
}

// Binary reports whether git's auto text detection takes the content for binary: a lone
// carriage return, a NUL, or more than one non-printable byte per 128 printable ones.
func (s *TextStats) Binary() bool {
	return s.LoneCR > 0 || s.NUL > 0 || s.Printable>>7 < s.NonPrintable
}

// Blob is what one read of a file tells: the blob id of its content as it is, its size, and the
// counts git's line-ending conversion decides by.
type Blob struct {
	ID    string
	Size  int64
	Stats TextStats
}

// ReadBlob reads the file at path once and answers its blob id in the object format with its
// text counts. A file whose size moves while it is read is an error.
func ReadBlob(path, format string) (Blob, error) {
	f, err := os.Open(path)
	if err != nil {
		return Blob{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Blob{}, err
	}
	h := newObjectHash(format)
	writeBlobHeader(h, fi.Size())
	var b Blob
	n, err := io.Copy(io.MultiWriter(h, &b.Stats), io.LimitReader(f, fi.Size()+1))
	if err != nil {
		return Blob{}, fmt.Errorf("read %s: %w", path, err)
	}
	if n != fi.Size() {
		return Blob{}, fmt.Errorf("read %s: it changed while read", path)
	}
	b.Stats.finish()
	b.ID, b.Size = hex.EncodeToString(h.Sum(nil)), n
	return b, nil
}

// ReadCleanBlob reads the file at path, which ReadBlob read as b, again and answers the blob id
// of its content with every carriage return before a line feed removed: git's clean conversion
// of a text file's line endings. A file that changed since b is an error.
func ReadCleanBlob(path, format string, b Blob) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := newObjectHash(format)
	writeBlobHeader(h, b.Size-b.Stats.CRLF)
	cw := &crlfStripper{w: h}
	n, err := io.Copy(cw, io.LimitReader(f, b.Size+1))
	if err == nil {
		err = cw.flush()
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	if n != b.Size || cw.written != b.Size-b.Stats.CRLF {
		return "", fmt.Errorf("read %s: it changed while read", path)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// crlfStripper writes what it is given less each carriage return that precedes a line feed.
type crlfStripper struct {
	w         io.Writer
	pendingCR bool
	written   int64
	buf       []byte
}

func (c *crlfStripper) Write(p []byte) (int, error) {
	c.buf = c.buf[:0]
	for _, b := range p {
		if c.pendingCR {
			c.pendingCR = false
			if b != '\n' {
				c.buf = append(c.buf, '\r')
			}
		}
		if b == '\r' {
			c.pendingCR = true
			continue
		}
		c.buf = append(c.buf, b)
	}
	n, err := c.w.Write(c.buf)
	c.written += int64(n)
	return len(p), err
}

// flush writes a carriage return held back at the end of the content.
func (c *crlfStripper) flush() error {
	if !c.pendingCR {
		return nil
	}
	c.pendingCR = false
	n, err := c.w.Write([]byte{'\r'})
	c.written += int64(n)
	return err
}
