package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"unicode/utf8"

	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/internal/jsonquote"
)

// LogPos is where a page of a task's log begins, so that a reader of the whole log page by page
// reads each stored byte about once: a page reads the stored log from Raw on, never what came
// before (the whole is read to compute Log's answer once). The zero value after Start is the
// first page of the whole.
type LogPos struct {
	// RunID and Blob pin the log the pages are of.
	RunID string `json:"run"`
	Blob  string `json:"blob"`
	// Raw is the offset in the stored log where the page's text begins; Out is that text's offset
	// in the whole plain output, and Whole the whole's length.
	Raw   int `json:"raw"`
	Out   int `json:"out"`
	Whole int `json:"whole"`
	// LineEnd, when past Raw, is where Raw's line ends in the stored log, and the line holds no
	// carriage return that rewrites it from Raw on: the page needs not read the line to its end
	// again to know that what it answers stays (a progress bar keeps only its last state).
	LineEnd int `json:"line"`
}

// LogPage is one page of a task's whole plain output, in order: the pages' outputs, joined, are
// Log's whole output (Whole).
type LogPage struct {
	// Status and Source are the execution's, as Log answers them.
	Status store.Status
	Source string
	// Output is the page's text; Offset where it begins in the whole output. It is in the text
	// buffer the reader passed, when it passed one, until the reader uses that again.
	Output []byte
	// Verbatim says that every byte of Output stands for itself in a JSON string (printable
	// ASCII but quote and backslash, see jsonquote.Verbatim): its JSON is Output quoted, no scan.
	Verbatim bool
	Offset   int
	// Next is where the next page begins; nil on the last page.
	Next *LogPos
}

// StartLog is the position of the first page of log, ReadLogEnds' answer.
func StartLog(log *LogEnds) LogPos {
	pos := LogPos{RunID: log.RunID, Blob: log.Blob, Whole: len(log.Whole())}
	if log.Ends != nil {
		pos.Whole = log.Ends.Len
	}
	return pos
}

// ErrStaleLog is a position whose log is gone or is no longer the task's log in that run.
var ErrStaleLog = errors.New("the log changed since this position was given")

// ReadLogPage answers the page of taskID's log at pos, whose output takes at most maxChars
// characters once encoded as a JSON string (at least one character is answered). It costs what
// the page's bytes cost: it reads the stored log from pos.Raw, plus once per line the rest of that
// line (to learn whether a carriage return rewrites it). The text is what Log answers of those
// bytes: plain (logtext.Plain), masked with m after; a page never ends inside a secret.
// scratch and text, when not nil, are room the page reads the stored log into and writes its text
// into (a server keeps them from page to page); the page's Output may be in text.
func ReadLogPage(ctx context.Context, st *store.Store, taskID string, pos LogPos, m *mask.Masker, maxChars int, scratch, text []byte) (*LogPage, error) {
	status, source, err := CheckLog(ctx, st, taskID, pos)
	if err != nil {
		return nil, err
	}
	page, err := ReadStoredLogPage(st.CAS(), pos, m, maxChars, scratch, text)
	if page != nil {
		page.Status, page.Source = status, source
	}
	return page, err
}

// CheckLog answers the status and the log's source of taskID's execution in pos.RunID, and
// ErrStaleLog unless pos.Blob is still its log.
func CheckLog(ctx context.Context, st *store.Store, taskID string, pos LogPos) (store.Status, string, error) {
	status, blob, source, ok, err := st.ExecutionLog(ctx, pos.RunID, taskID)
	if err != nil {
		return "", "", err
	}
	if !ok || source == "" || blob != pos.Blob {
		return "", "", ErrStaleLog
	}
	return status, source, nil
}

// ReadStoredLogPage is ReadLogPage of a log the index was asked already, read from cas alone:
// for a reader that knows pos.Blob is the task's log in pos.RunID (a recorded execution's log
// never changes). The page's Status and Source are left empty.
func ReadStoredLogPage(cas *store.CAS, pos LogPos, m *mask.Masker, maxChars int, scratch, text []byte) (*LogPage, error) {
	f, size, err := cas.Open(pos.Blob)
	if errors.Is(err, store.ErrMissing) {
		return nil, ErrStaleLog
	}
	if err != nil {
		return nil, fmt.Errorf("log %s: %w", pos.Blob, err)
	}
	defer f.Close()
	if pos.Raw < 0 || int64(pos.Raw) > size || pos.Out < 0 || pos.Out > pos.Whole {
		return nil, vxerr.Usagef("log position out of range")
	}
	// A page takes at most a byte per character: reading a little more than that at a time reads
	// each stored byte about once.
	r := &rawLog{f: f, size: int(size), base: pos.Raw, chunk: min(64<<10, max(maxChars, 8)+4<<10), buf: scratch[:0]}
	return r.page(pos, m, max(maxChars, 8), text[:0])
}

// rawLog reads a stored log forward from an offset, keeping in memory only what a page still
// needs (a long line is scanned through, not kept).
type rawLog struct {
	f    *os.File
	size int
	base int    // the offset of buf[0] in the log
	buf  []byte // the log's bytes from base on, as far as read
	// chunk is how many bytes a read asks for; 0 means 64 KiB.
	chunk int
}

// at answers the byte at offset i, false past the end.
func (r *rawLog) at(i int) (byte, bool) {
	if i < r.base {
		// Read again what was dropped (a line scanned to its end, then answered from its start).
		r.base, r.buf = i, r.buf[:0]
	}
	for i-r.base >= len(r.buf) {
		if r.base+len(r.buf) >= r.size {
			return 0, false
		}
		have := len(r.buf)
		chunk := r.chunk
		if chunk <= 0 {
			chunk = 64 << 10
		}
		want := min(chunk, r.size-r.base-have)
		r.buf = slices.Grow(r.buf, want)[:have+want]
		n, err := r.f.ReadAt(r.buf[have:], int64(r.base+have))
		r.buf = r.buf[:have+n]
		if n == 0 && err != nil && err != io.EOF {
			return 0, false
		}
	}
	return r.buf[i-r.base], true
}

// drop forgets the bytes before offset i, once they are many: a line scanned through is not kept.
func (r *rawLog) drop(i int) {
	if n := i - r.base; n >= 1<<20 && n <= len(r.buf) {
		r.buf = append(r.buf[:0], r.buf[n:]...)
		r.base = i
	}
}

// plainState is logtext.Plain's reader as a machine fed one byte at a time, so that a log is read
// in pieces: where in an escape sequence it is, and whether a carriage return waits for the byte
// that says whether it ends a line (CRLF) or rewrites it.
type plainState uint8

const (
	plainText    plainState = iota
	plainEsc                // after ESC
	plainCSI                // in ESC [ … final byte
	plainString             // in OSC, DCS, APC, PM or SOS, up to BEL or ESC \
	plainStrEsc             // an ESC inside one of those
	plainCharset            // ESC ( and the like: one more byte
	plainCR                 // a carriage return, not yet known bare or CRLF
)

// step feeds c to the machine: out is what it adds to the line (-1: nothing), newline and bareCR
// say that c ended a line or that a bare carriage return before c rewrites it (c is then
// processed as well).
func (s *plainState) step(c byte) (out int, newline, bareCR bool) {
	switch *s {
	case plainEsc:
		switch c {
		case '[':
			*s = plainCSI
		case ']', 'P', '_', '^', 'X':
			*s = plainString
		case '(', ')', '*', '+', '#', '%':
			*s = plainCharset
		default:
			*s = plainText
		}
		return -1, false, false
	case plainCSI:
		if c >= 0x40 && c <= 0x7e {
			*s = plainText
		}
		return -1, false, false
	case plainString:
		switch c {
		case 0x07:
			*s = plainText
		case 0x1b:
			*s = plainStrEsc
		}
		return -1, false, false
	case plainStrEsc:
		switch c {
		case '\\', 0x07:
			*s = plainText
		case 0x1b:
		default:
			*s = plainString
		}
		return -1, false, false
	case plainCharset:
		*s = plainText
		return -1, false, false
	case plainCR:
		*s = plainText
		if c == '\n' {
			return '\n', true, false
		}
		out, newline, _ = s.step(c)
		return out, newline, true
	}
	switch {
	case c == 0x1b:
		*s = plainEsc
	case c == '\r':
		*s = plainCR
	case c == '\n':
		return '\n', true, false
	case c == '\t':
		return int(c), false, false
	case c < 0x20 || c == 0x7f:
	default:
		return int(c), false, false
	}
	return -1, false, false
}

// scanLine reads the line from offset i (in plain text, no carriage return pending) to its end:
// end is the offset just past its newline (or the log's end), rewrite the offset just past the
// last bare carriage return in it (i when none), from which on the line's text stays.
func (r *rawLog) scanLine(i int) (end, rewrite int) {
	var s plainState
	rewrite = i
	for ; ; i++ {
		if s == plainText {
			i = r.skipText(i) // text bytes change nothing of the line's state
		}
		c, ok := r.at(i)
		if !ok {
			return i, rewrite
		}
		_, newline, bare := s.step(c)
		if bare {
			rewrite = i // the bare CR was at i-1: the line's text starts again with c
		}
		if newline {
			return i + 1, rewrite
		}
		r.drop(i)
	}
}

// skipText answers the first offset from i on that holds a control byte (or the log's end):
// every byte before it is text that logtext.Plain keeps as it is (or DEL, which it drops).
func (r *rawLog) skipText(i int) int {
	for {
		if _, ok := r.at(i); !ok {
			return i
		}
		buf := r.buf[i-r.base:]
		if k := jsonquote.Control(buf); k < len(buf) {
			return i + k
		}
		i += len(buf)
		r.drop(i)
	}
}

// page answers the page at pos.
func (r *rawLog) page(pos LogPos, m *mask.Masker, maxChars int, text []byte) (*LogPage, error) {
	i := pos.Raw
	lineEnd := pos.LineEnd
	if lineEnd <= i {
		lineEnd, i = r.scanLine(i)
	}
	more := false
	// The page's text, grown once.
	text = slices.Grow(text, maxChars)
	chars := 0
	var s plainState
	next := LogPos{RunID: pos.RunID, Blob: pos.Blob, Whole: pos.Whole}
	// A page ends between bytes where the machine is in plain text, at a rune's first byte,
	// once the budget is spent; then it goes on to the end of any secret it cuts.
	stopAt := -1     // when past -1, the page ends once text holds this many bytes
	escaped := false // a byte of text needs more than itself in JSON
	for {
		c, ok := r.at(i)
		if !ok {
			break
		}
		if s == plainText && stopAt < 0 && c >= 0x20 {
			// A run of text bytes, copied as they are while the budget lasts.
			buf := r.buf[i-r.base:]
			k := 0
			for k < len(buf) && chars < maxChars-8 {
				// Most text is bytes that stand for themselves, counted eight at a time.
				if n := jsonquote.Verbatim(buf[k:min(len(buf), k+maxChars-8-chars)]); n > 0 {
					k, chars = k+n, chars+n
					continue
				}
				b := buf[k]
				if b < 0x20 {
					break
				}
				chars += int(jsonWidth[b])
				escaped = escaped || b != 0x7f // DEL is dropped from the text
				k++
			}
			if k > 0 {
				text = appendText(text, buf[:k])
				i += k
				continue
			}
		}
		if s == plainText && utf8.RuneStart(c) {
			if stopAt < 0 && chars >= maxChars {
				stopAt = r.secretEnd(text, i, lineEnd, m)
			}
			if stopAt >= 0 && len(text) >= stopAt {
				next.Raw, next.LineEnd, more = i, lineEnd, true
				break
			}
		}
		out, newline, _ := s.step(c)
		if out >= 0 {
			text = append(text, byte(out))
			chars += jsonChars(byte(out))
			escaped = escaped || !jsonquote.VerbatimByte(byte(out))
		}
		i++
		if newline && i < r.size {
			// The next line: where its text starts to stay.
			lineEnd, i = r.scanLine(i)
		}
	}
	page := &LogPage{Output: m.Bytes(text), Offset: pos.Out}
	page.Verbatim = !escaped && (m.Empty() || jsonquote.Verbatim(page.Output) == len(page.Output)) // a mask may write any character
	if more {
		next.Out = pos.Out + len(page.Output)
		page.Next = &next
	}
	return page, nil
}

// secretEnd answers how long text must grow, from the stored log at offset i (in plain text) on,
// so that no secret of m is cut at its end: len(text) when none would be.
func (r *rawLog) secretEnd(text []byte, i, lineEnd int, m *mask.Masker) int {
	longest := m.Longest()
	if longest == 0 {
		return len(text)
	}
	// What follows, as plain text, as far as a secret could reach.
	var ahead []byte
	var s plainState
	for j := i; len(ahead) < longest && j < lineEnd; j++ {
		c, ok := r.at(j)
		if !ok {
			break
		}
		if out, _, _ := s.step(c); out >= 0 {
			ahead = append(ahead, byte(out))
		}
	}
	// The page may end k bytes on when masking the two sides apart masks as the whole does: no
	// secret crosses the end.
	from := max(0, len(text)-longest+1)
	window := string(text[from:]) + string(ahead)
	cut := len(text) - from
	whole := m.String(window)
	for k := 0; k <= len(ahead); k++ {
		if m.String(window[:cut+k])+m.String(window[cut+k:]) == whole {
			return len(text) + k
		}
	}
	return len(text) + len(ahead)
}

// appendText appends to text a run of text bytes (none below 0x20) as logtext.Plain keeps them,
// DEL dropped, and answers the text.
func appendText(text, run []byte) []byte {
	for {
		k := bytes.IndexByte(run, 0x7f)
		if k < 0 {
			return append(text, run...)
		}
		text = append(text, run[:k]...)
		run = run[k+1:]
	}
}

// jsonWidth is jsonChars of every byte, DEL's 0 (Plain drops it), for the page's inner loop.
var jsonWidth = func() (w [256]uint8) {
	for c := range w {
		w[c] = uint8(jsonChars(byte(c)))
	}
	w[0x7f] = 0
	return w
}()

// jsonChars is how many characters a byte of plain text takes in a JSON string, as
// jsonquote.Append writes the page (quote, backslash and control characters escaped; a byte of a
// multi-byte rune counts one, and a rune takes at least one).
func jsonChars(c byte) int {
	switch {
	case c == '"' || c == '\\' || c == '\n' || c == '\t' || c == '\r' || c == '\b' || c == '\f':
		return 2
	case c < 0x20:
		return 6
	}
	return 1
}
