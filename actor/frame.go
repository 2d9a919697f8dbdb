package actor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// DefaultMaxLineBytes is the longest frame the server reads: 16 MiB, newline excluded.
const DefaultMaxLineBytes = 16 << 20

// idPrefixBytes is how much of an oversize line is kept to find its id in.
const idPrefixBytes = 4 << 10

// frameReader splits a byte stream into newline-delimited frames. Unlike a
// bufio.Scanner it survives a line longer than its limit: the line is skipped up
// to its newline and reported as a *frameTooLongError, and reading goes on.
type frameReader struct {
	r       *bufio.Reader
	maxLine int
	buf     []byte
	err     error // a read error held back until the frame before it was returned
}

func newFrameReader(r io.Reader, maxLine int) *frameReader {
	return newFrameReaderSize(r, maxLine, 64<<10)
}

// newFrameReaderSize is newFrameReader with a read buffer of bufSize bytes
// (tests use a tiny one to cut lines into many chunks).
func newFrameReaderSize(r io.Reader, maxLine, bufSize int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, bufSize), maxLine: maxLine}
}

// frameTooLongError reports a line longer than the limit, already consumed.
type frameTooLongError struct {
	size  int64           // the line's length, newline excluded
	limit int             // the limit it exceeded
	id    json.RawMessage // the request's id when it could be read from the line's start
}

func (e *frameTooLongError) Error() string {
	return fmt.Sprintf("line of %d bytes exceeds the %d-byte limit", e.size, e.limit)
}

// next returns the next frame without its newline, valid until the following
// call. A last line without a newline is a frame too. At the end of the stream it
// returns io.EOF (or the read error that ended it).
func (f *frameReader) next() ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	if cap(f.buf) > 1<<20 {
		f.buf = nil // do not keep a huge line's buffer for the small ones after it
	}
	f.buf = f.buf[:0]
	for {
		chunk, err := f.r.ReadSlice('\n')
		content := chunk
		complete := err == nil
		if complete {
			content = chunk[:len(chunk)-1]
		}
		if len(f.buf)+len(content) > f.maxLine {
			return nil, f.skip(content, complete, err)
		}
		f.buf = append(f.buf, content...)
		switch {
		case complete:
			return f.buf, nil
		case err == bufio.ErrBufferFull:
			continue
		case len(f.buf) > 0:
			f.err = err
			return f.buf, nil
		default:
			f.err = err
			return nil, err
		}
	}
}

// skip consumes the rest of an oversize line whose first part is f.buf plus
// content, and returns the error describing it.
func (f *frameReader) skip(content []byte, complete bool, err error) error {
	prefix := make([]byte, 0, idPrefixBytes)
	prefix = append(prefix, f.buf[:min(len(f.buf), idPrefixBytes)]...)
	prefix = append(prefix, content[:min(len(content), idPrefixBytes-len(prefix))]...)
	size := int64(len(f.buf) + len(content))
	f.buf = f.buf[:0]
	for !complete && err == bufio.ErrBufferFull {
		var chunk []byte
		chunk, err = f.r.ReadSlice('\n')
		complete = err == nil
		if complete {
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
	}
	if !complete {
		f.err = err
	}
	return &frameTooLongError{size: size, limit: f.maxLine, id: idFromPrefix(prefix)}
}

// idFromPrefix finds a request id among the top-level members at the start of a
// JSON object cut short, as clients write it ({"jsonrpc":"2.0","id":7,"method":…}),
// so an oversize request is answered with its id rather than null. It returns nil
// when the id does not appear before the cut or is not a string or number.
func idFromPrefix(prefix []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil
		}
		if key == "id" {
			if !validID(val) {
				return nil
			}
			return val
		}
	}
	return nil
}
