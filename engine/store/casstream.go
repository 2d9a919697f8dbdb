package store

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrBlobMismatch is a streamed blob whose content is not the one it was announced as: another
// size, or another SHA-256. Nothing is stored.
var ErrBlobMismatch = errors.New("blob does not match its digest")

// PutStream stores the blob named hash from r, which must deliver exactly size bytes whose SHA-256
// is hash; anything else (more, fewer, other bytes) is ErrBlobMismatch and stores nothing. The blob
// is written to a temporary file as it arrives, never held in memory, and renamed into place only
// once it is checked, so that a blob another machine served is never trusted unread.
func (c *CAS) PutStream(hash string, size int64, r io.Reader) error {
	if len(hash) != 64 || size < 0 {
		return fmt.Errorf("%w: bad digest %q/%d", ErrBlobMismatch, hash, size)
	}
	if _, err := hex.DecodeString(hash); err != nil {
		return fmt.Errorf("%w: bad digest %q", ErrBlobMismatch, hash)
	}
	return c.write(c.Path(hash), func(w io.Writer) error {
		sum := sha256.New()
		n, err := io.Copy(io.MultiWriter(w, sum), io.LimitReader(r, size+1))
		if err != nil {
			return fmt.Errorf("store blob %s: %w", hash[:12], err)
		}
		if n != size || hex.EncodeToString(sum.Sum(nil)) != hash {
			return fmt.Errorf("%w: %s: got %d bytes of another content", ErrBlobMismatch, hash[:12], n)
		}
		return nil
	})
}

// Open opens the blob named hash for streaming, from a regular file only; its content is not
// checked (the reader of a local blob that must be trusted uses GetBounded).
func (c *CAS) Open(hash string) (*os.File, int64, error) {
	if hash == "" {
		return nil, 0, ErrMissing
	}
	f, err := openNoFollow(c.Path(hash))
	if err != nil {
		return nil, 0, ErrMissing
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, ErrMissing
	}
	return f, fi.Size(), nil
}
