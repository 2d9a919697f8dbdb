package actor

import (
	"bufio"
	"fmt"
	"io"
)

// outItem is one reply or notification for the writer. One tied to a call goes out only if the call
// still allows it when the writer claims it (state.claim).
type outItem struct {
	data  []byte
	c     *call // nil for replies not tied to a registered call
	reply bool  // the call's reply (claiming it ends the call), not a notification
}

// outMsg is one line for the writer: an item, or a batch's array of items.
type outMsg struct {
	items []outItem
	batch bool
}

// send queues one line for the writer.
func (cn *conn) send(items ...outItem) {
	cn.sent.Add(1)
	cn.replies.push(outMsg{items: items})
}

// openGate opens one of Config.AfterFirstFrame's two gates (see there) and runs it when that was
// the second; a gate opened again later does nothing.
func (cn *conn) openGate() {
	if cn.afterFirstGates.Add(1) == 2 && cn.afterFirst != nil {
		cn.afterFirst()
	}
}

// writeLoop owns Out: it writes each message as one line, flushing whenever the queue runs dry. A
// write error marks the stream broken and shuts the server down; the loop then drains the queue
// without writing until it is closed.
func (cn *conn) writeLoop() {
	w := newLineWriter(cn.out)
	var msgs []outMsg
	var lines [][]byte
	broken, flushed := false, false
	for {
		var ok bool
		msgs, ok = cn.replies.popAll(msgs)
		if !ok {
			break
		}
		for i := range msgs {
			asArray := msgs[i].batch
			lines = cn.claim(msgs[i], lines[:0])
			msgs[i] = outMsg{} // let the replies be collected
			if len(lines) == 0 || broken {
				continue
			}
			if err := w.writeLine(lines, asArray); err != nil {
				broken = true
				cn.brokenStream(err)
			}
			for _, line := range lines { // written (the bufio.Writer keeps no reference)
				cn.buffers.Put(line)
			}
		}
		if !broken {
			if err := w.flush(); err != nil {
				broken = true
				cn.brokenStream(err)
			} else if !flushed {
				flushed = true
				cn.openGate()
			}
		}
	}
}

// claim appends to dst the items of m that still go out.
func (cn *conn) claim(m outMsg, dst [][]byte) [][]byte {
	cn.update(func(st *state) {
		for _, it := range m.items {
			if st.claim(it) {
				dst = append(dst, it.data)
			}
		}
	})
	return dst
}

// brokenStream records the first write error and shuts the server down: every call in flight is
// cancelled with the broken stream as its cause.
func (cn *conn) brokenStream(err error) {
	cn.update(func(st *state) {
		if st.writeErr == nil {
			st.writeErr = err
		}
	})
	cn.log.Warn().Err(err).Msg("mcp reply stream broken: shutting down")
	cn.stop(fmt.Errorf("actor: reply stream broken: %w", err))
}

// lineWriter writes messages to the reply stream, one line each.
type lineWriter struct {
	w *bufio.Writer
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: bufio.NewWriterSize(w, 64<<10)}
}

// writeLine writes one line: the item, or the items as a JSON array. A line is the writer's
// own once claimed: a single item gets its newline appended in place, so that a reply longer
// than the buffer goes out in one write, not a write and then one of its newline.
func (lw *lineWriter) writeLine(items [][]byte, asArray bool) error {
	if !asArray && len(items) == 1 {
		_, err := lw.w.Write(append(items[0], '\n'))
		return err
	}
	if asArray {
		lw.w.WriteByte('[')
	}
	for i, it := range items {
		if i > 0 {
			lw.w.WriteByte(',')
		}
		lw.w.Write(it)
	}
	if asArray {
		lw.w.WriteByte(']')
	}
	return lw.w.WriteByte('\n')
}

func (lw *lineWriter) flush() error { return lw.w.Flush() }
