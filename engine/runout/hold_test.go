package runout

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
)

// writes counts the writes made to it.
type writes struct {
	bytes.Buffer
	calls int
}

func (w *writes) Write(p []byte) (int, error) {
	w.calls++
	return w.Buffer.Write(p)
}

func (w *writes) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Held lines are written together, in their order, at Flush and no sooner; after it, a line is
// written as it comes. Finish writes what is held. A terminal's display is never held.
func TestHeldLinesWrittenAtFlush(t *testing.T) {
	var w writes
	d := NewDisplay(&w, false, mask.New(), 4, LogOptions{}, nil)
	d.Hold()
	for _, id := range []string{"a#build", "b#build", "c#build"} {
		d.Finished(store.Execution{TaskID: id, Status: store.StatusMiss})
	}
	if w.calls != 0 {
		t.Fatalf("%d writes while held: %q", w.calls, w.String())
	}
	d.Flush()
	if w.calls != 1 || strings.Count(w.String(), "\n") != 3 || !strings.HasPrefix(w.String(), "a#build") ||
		strings.Index(w.String(), "b#build") > strings.Index(w.String(), "c#build") {
		t.Fatalf("after Flush: %d writes of %q, want one of the three lines in order", w.calls, w.String())
	}
	d.Finished(store.Execution{TaskID: "d#build", Status: store.StatusMiss})
	if w.calls != 2 {
		t.Fatalf("a line after Flush was not written at once (%d writes)", w.calls)
	}

	d = NewDisplay(&w, false, mask.New(), 1, LogOptions{}, nil)
	d.Hold()
	d.Finished(store.Execution{TaskID: "e#build", Status: store.StatusMiss})
	d.Finish()
	if !strings.Contains(w.String(), "e#build") {
		t.Fatalf("Finish left a held line unwritten: %q", w.String())
	}

	var term writes
	d = NewDisplay(&term, true, mask.New(), 2, LogOptions{}, nil)
	d.Hold()
	d.Finished(store.Execution{TaskID: "f#build", Status: store.StatusMiss})
	if !strings.Contains(term.String(), "f#build") {
		t.Fatalf("a terminal's line was held: %q", term.String())
	}
}
