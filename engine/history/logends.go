package history

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
)

// LogEnds is a task's log as Log answers it, for a reader that answers a long log cut (a page of
// getTaskLog): the stored log's name, and, when the log is long and already plain text with no
// secret to mask, its ends instead of the whole.
type LogEnds struct {
	*TaskLog
	// Blob is the stored log's name ("" when none is kept).
	Blob string
	// Ends, when not nil, holds the log's first and last keep bytes, its length and its line
	// breaks; the TaskLog's Whole and Text are then empty. Nil: the TaskLog is Log's whole answer.
	Ends *logtext.Ends
}

// ReadLogEnds answers what Log answers of taskID's log in runID, reading a long log only by its
// ends: a log of more than 4×keep bytes that Plain leaves as it is, with m masking nothing, is read
// once in chunks (its hash checked as CAS.Get checks it) and only its first and last keep bytes
// (at least what Log's cut keeps) are kept. Any other log is read whole, as Log reads it.
func readLogEndsOf(ctx context.Context, st *store.Store, taskID, runID string, m *mask.Masker, keep int) (*LogEnds, error) {
	e, err := logExecution(ctx, st, taskID, runID)
	if err != nil {
		return nil, err
	}
	blob := e.LogBlob
	if e.LogSource == "" {
		blob = ""
	}
	// The ends hold Log's own cut too, which keeps 64 KiB.
	keep = max(keep, logtext.HeadBytes+logtext.TailBytes+4<<10)
	if blob != "" && m.Empty() {
		ends, err := readEnds(st.CAS(), blob, keep)
		switch {
		case errors.Is(err, store.ErrMissing):
			return &LogEnds{TaskLog: &TaskLog{RunID: e.RunID, TaskID: e.TaskID, Status: e.Reported(), NoLog: prunedNoLog}}, nil
		case err != nil:
			return nil, fmt.Errorf("log of %s: %w", e.TaskID, err)
		case ends != nil:
			src := e.LogSource
			log := &TaskLog{RunID: e.RunID, TaskID: e.TaskID, Status: e.Reported(), Source: &src}
			log.Text, _ = logtext.CutEnds(ends, logtext.HeadBytes+logtext.TailBytes)
			return &LogEnds{TaskLog: log, Blob: blob, Ends: ends}, nil
		}
	}
	log, err := readLog(st, e, m)
	if err != nil {
		return nil, err
	}
	if log.Source == nil {
		blob = ""
	}
	return &LogEnds{TaskLog: log, Blob: blob}, nil
}

// endsChunk is how much of a long log readEnds reads at a time.
const endsChunk = 256 << 10

// readEnds reads the stored log hash by its ends (see ReadLogEnds): nil, nil when it is not such a
// log (short, or not plain text), ErrMissing when it is gone or its bytes are not its hash's.
func readEnds(cas *store.CAS, hash string, keep int) (*logtext.Ends, error) {
	f, size, err := cas.Open(hash)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size <= int64(4*keep) || keep <= 0 {
		return nil, nil
	}
	sum := sha256.New()
	buf := make([]byte, endsChunk)
	head := make([]byte, 0, keep)
	tail := make([]byte, 0, keep+endsChunk)
	read, newlines := int64(0), 0
	for {
		n, err := io.ReadFull(f, buf)
		chunk := buf[:n]
		if !logtext.IsPlain(chunk) {
			return nil, nil
		}
		sum.Write(chunk)
		read += int64(n)
		newlines += bytes.Count(chunk, []byte{'\n'})
		if len(head) < keep {
			head = append(head, chunk[:min(len(chunk), keep-len(head))]...)
		}
		tail = append(tail, chunk...)
		if len(tail) > keep {
			tail = tail[:copy(tail, tail[len(tail)-keep:])]
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read blob %s: %w", hash, err)
		}
	}
	if read != size || hex.EncodeToString(sum.Sum(nil)) != hash {
		return nil, store.ErrMissing
	}
	return &logtext.Ends{Head: string(head), Tail: string(tail), Len: int(read), Newlines: newlines}, nil
}

// ReadLogEnds is readLogEndsOf with the answer's store named (checkout).
func ReadLogEnds(ctx context.Context, st *store.Store, taskID, runID string, m *mask.Masker, keep int) (*LogEnds, error) {
	out, err := readLogEndsOf(ctx, st, taskID, runID, m, keep)
	if out != nil {
		out.TaskLog.Store = checkoutStore(st)
	}
	return out, err
}
