package actor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// machine drives a state by its transitions alone, with the writer played by write.
type machine struct {
	t      *testing.T
	st     state
	out    *queue[outMsg]
	events []string // "id:phase", in order
	base   context.Context
	stop   context.CancelCauseFunc
}

func newMachine(t *testing.T) *machine {
	m := &machine{t: t, out: newQueue[outMsg]()}
	m.st = newState(m.out, func(e callEvent) { m.events = append(m.events, e.id+":"+e.phase.String()) })
	m.base, m.stop = context.WithCancelCause(context.Background())
	t.Cleanup(func() { m.stop(nil) })
	return m
}

// call registers a call with id (a JSON value), in batch b if not nil.
func (m *machine) call(id string, b *batch) *call {
	m.t.Helper()
	c := &call{id: []byte(id), key: idKey([]byte(id)), batch: b}
	c.ctx, c.cancel = context.WithCancelCause(m.base)
	if !m.st.register(c) {
		m.t.Fatalf("register %s refused", id)
	}
	return c
}

// running registers a call and starts it.
func (m *machine) running(id string, b *batch) *call {
	m.t.Helper()
	c := m.call(id, b)
	if !m.st.start(c) {
		m.t.Fatalf("start %s refused", id)
	}
	return c
}

// write takes every line queued, as the writer does, and returns those that go out.
func (m *machine) write() []string {
	var lines []string
	m.out.mu.Lock()
	msgs := slices.Clone(m.out.items[m.out.head:])
	m.out.items, m.out.head = nil, 0
	m.out.mu.Unlock()
	for _, msg := range msgs {
		var items []string
		for _, it := range msg.items {
			if m.st.claim(it) {
				items = append(items, string(it.data))
			}
		}
		switch {
		case len(items) == 0:
		case msg.batch:
			lines = append(lines, "["+strings.Join(items, ",")+"]")
		default:
			lines = append(lines, items[0])
		}
	}
	return lines
}

// history returns the phases call id went through.
func (m *machine) history(id string) []string {
	var h []string
	for _, e := range m.events {
		if rest, ok := strings.CutPrefix(e, id+":"); ok {
			h = append(h, rest)
		}
	}
	return h
}

func (m *machine) inFlight(id string) bool {
	_, ok := m.st.calls[idKey([]byte(id))]
	return ok
}

func wantLines(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("written %q, want %q", got, want)
	}
}

func wantHistory(t *testing.T, m *machine, id string, want ...string) {
	t.Helper()
	if got := m.history(id); !slices.Equal(got, want) {
		t.Fatalf("call %s went %v, want %v", id, got, want)
	}
}

// An id is taken from register until the call is retired: a second call with it, however written, is
// refused while the first is in flight, and accepted once the first is over.
func TestRegisterTakesTheID(t *testing.T) {
	m := newMachine(t)
	c := m.running("7", nil)
	dup := &call{id: []byte("7.0"), key: idKey([]byte("7.0"))}
	if m.st.register(dup) || m.st.calls[c.key] != c {
		t.Fatal("a second call with id 7.0 was registered while 7 is in flight")
	}
	m.st.finish(c, []byte("r7"))
	if !m.inFlight("7") {
		t.Fatal("an answered call gave up its id before the writer claimed the reply")
	}
	wantLines(t, m.write(), "r7")
	if m.inFlight("7") {
		t.Fatal("a claimed call still holds its id")
	}
	m.running("7", nil)
	b := &batch{}
	m.call("1", b)
	m.call("2", b)
	if b.pending != 2 {
		t.Fatalf("batch pending %d, want 2", b.pending)
	}
}

// A call cancelled while queued never runs.
func TestStart(t *testing.T) {
	m := newMachine(t)
	c := m.call("1", nil)
	if !m.st.start(c) || c.phase != running || m.st.start(c) {
		t.Fatal("start: queued → running, once")
	}
	c = m.call("2", nil)
	m.st.cancel(c, errCancelledByClient)
	if m.st.start(c) {
		t.Fatal("a call cancelled while queued started")
	}
	c = m.call("3", nil)
	m.stop(errors.New("signal"))
	if m.st.start(c) {
		t.Fatal("a call started after the server's context ended")
	}
}

// Cancelling a queued or running call ends its context with the cause given; an answered call whose
// reply is not written yet is withdrawn; anything else is past cancelling.
func TestCancel(t *testing.T) {
	for _, tc := range []struct {
		from      phase
		ok        bool
		to        phase
		ctxCancel bool
	}{
		{queued, true, cancelled, true},
		{running, true, cancelled, true},
		{answered, true, withdrawn, false},
		{cancelled, false, cancelled, true},
		{withdrawn, false, withdrawn, false},
	} {
		t.Run(tc.from.String(), func(t *testing.T) {
			m := newMachine(t)
			c := m.call("1", nil)
			switch tc.from {
			case running:
				m.st.start(c)
			case answered, withdrawn:
				m.st.start(c)
				m.st.finish(c, []byte("r1"))
				if tc.from == withdrawn {
					m.st.cancel(c, errCancelledByClient)
				}
			case cancelled:
				m.st.cancel(c, errCancelledByClient)
			}
			cause := errors.New("the cause")
			if ok := m.st.cancelID(c.key, cause); ok != tc.ok || c.phase != tc.to {
				t.Fatalf("cancel from %v: %v → %v, want %v → %v", tc.from, ok, c.phase, tc.ok, tc.to)
			}
			if (c.ctx.Err() != nil) != tc.ctxCancel {
				t.Fatalf("context ended: %v, want %v", c.ctx.Err() != nil, tc.ctxCancel)
			}
			if tc.from != cancelled && tc.ctxCancel && context.Cause(c.ctx) != cause {
				t.Fatalf("cause %v, want %v", context.Cause(c.ctx), cause)
			}
		})
	}
	m := newMachine(t)
	if m.st.cancelID(idKey([]byte("9")), errCancelledByClient) {
		t.Fatal("cancelled an id nothing holds")
	}
}

// A finished call is answered only if it ran to the end uncancelled; a cancelled one is retired with
// no reply and frees its id at once.
func TestFinish(t *testing.T) {
	m := newMachine(t)
	if c := m.running("1", nil); !m.st.finish(c, []byte("r1")) || c.phase != answered {
		t.Fatal("a running call was not answered")
	}
	c := m.running("2", nil)
	m.st.cancel(c, errCancelledByClient)
	if m.st.finish(c, []byte("r2")) || m.inFlight("2") {
		t.Fatal("a call cancelled while running was answered, or kept its id")
	}
	c = m.call("3", nil)
	m.st.cancel(c, errCancelledByClient)
	m.st.start(c)
	if m.st.finish(c, nil) || m.inFlight("3") {
		t.Fatal("a call cancelled while queued was answered, or kept its id")
	}
	wantLines(t, m.write(), "r1")
	wantHistory(t, m, "1", "queued", "running", "answered", "done")
	wantHistory(t, m, "2", "queued", "running", "cancelled", "done")
	wantHistory(t, m, "3", "queued", "cancelled", "done")

	// A running call whose context ended with the server is not answered either.
	c = m.running("4", nil)
	m.stop(errors.New("signal"))
	if m.st.finish(c, []byte("r4")) || m.inFlight("4") {
		t.Fatal("a call stopped with the server was answered")
	}
	wantHistory(t, m, "4", "queued", "running", "cancelled", "done")
	c = m.call("5", nil)
	if m.st.start(c) || m.st.finish(c, nil) {
		t.Fatal("a call queued when the server stopped ran")
	}
	wantHistory(t, m, "5", "queued", "cancelled", "done")
	wantLines(t, m.write())
}

// The writer drops the reply and the progress of a call cancelled before it came, whether it was
// still running or had answered; claiming a reply, written or dropped, retires its call.
func TestClaim(t *testing.T) {
	m := newMachine(t)
	c1 := m.running("1", nil)
	m.st.notify(c1, 1, []byte("p1"))
	m.st.finish(c1, []byte("r1"))
	c2 := m.running("2", nil)
	m.st.notify(c2, 1, []byte("p2"))
	m.st.finish(c2, []byte("r2"))
	m.st.cancel(c2, errCancelledByClient) // after the reply was made, before it is written
	c3 := m.running("3", nil)
	m.st.notify(c3, 1, []byte("p3"))
	m.st.cancel(c3, errCancelledByClient) // with its progress still queued
	m.send(outItem{data: []byte("e")})
	wantLines(t, m.write(), "p1", "r1", "e") // p2: its call was cancelled before the writer came
	for _, id := range []string{"1", "2"} {
		if m.inFlight(id) {
			t.Fatalf("call %s holds its id after its reply was claimed", id)
		}
	}
	wantHistory(t, m, "2", "queued", "running", "answered", "withdrawn", "done")
	if !m.inFlight("3") {
		t.Fatal("a cancelled call gave up its id before its handler returned")
	}
}

func (m *machine) send(it outItem) { m.out.push(outMsg{items: []outItem{it}}) }

// Progress goes out only while the call runs, and only increasing.
func TestNotify(t *testing.T) {
	m := newMachine(t)
	c := m.call("1", nil)
	if m.st.notify(c, 1, []byte("queued")) {
		t.Fatal("progress of a call not started")
	}
	m.st.start(c)
	for _, p := range []struct {
		done float64
		ok   bool
	}{{1, true}, {1, false}, {0.5, false}, {2, true}, {3, true}} {
		if got := m.st.notify(c, p.done, []byte{'0' + byte(p.done)}); got != p.ok {
			t.Fatalf("progress %v: sent %v, want %v", p.done, got, p.ok)
		}
	}
	m.st.finish(c, []byte("r"))
	if m.st.notify(c, 9, []byte("late")) {
		t.Fatal("progress after the handler returned")
	}
	c2 := m.running("2", nil)
	m.st.cancel(c2, errCancelledByClient)
	if m.st.notify(c2, 1, []byte("cancelled")) {
		t.Fatal("progress after a cancel")
	}
	wantLines(t, m.write(), "1", "2", "3", "r")
}

// At stdin's end a running tool that is not read-only is cancelled at once, and none starts after;
// read-only work goes on.
func TestStdinClosed(t *testing.T) {
	m := newMachine(t)
	writer := m.running("w", nil)
	if !m.st.enterTool(writer, false) {
		t.Fatal("enterTool refused before EOF")
	}
	reader := m.running("r", nil)
	m.st.enterTool(reader, true)
	listing := m.running("l", nil) // tools/list: no tool
	later := m.call("later", nil)
	eof := errors.New("stdin closed")
	m.st.stdinClosed(eof)
	if writer.phase != cancelled || context.Cause(writer.ctx) != eof {
		t.Fatalf("a running tool that writes: %v, cause %v", writer.phase, context.Cause(writer.ctx))
	}
	if reader.phase != running || listing.phase != running || later.phase != queued {
		t.Fatalf("read-only work stopped: %v %v %v", reader.phase, listing.phase, later.phase)
	}
	m.st.start(later)
	if m.st.enterTool(later, false) || later.phase != cancelled || context.Cause(later.ctx) != eof {
		t.Fatal("a tool that writes started after EOF")
	}
	if next := m.running("next", nil); !m.st.enterTool(next, true) {
		t.Fatal("a read-only tool refused after EOF")
	}
	if m.st.enterTool(writer, true) {
		t.Fatal("enterTool on a cancelled call")
	}
}

// At shutdown every call not answered is cancelled; the replies already made still go out.
func TestCancelAll(t *testing.T) {
	m := newMachine(t)
	a := m.running("a", nil)
	m.st.finish(a, []byte("ra"))
	q := m.call("q", nil)
	r := m.running("r", nil)
	m.st.cancelAll(errors.New("shutdown"))
	if a.phase != answered || q.phase != cancelled || r.phase != cancelled {
		t.Fatalf("after cancelAll: %v %v %v", a.phase, q.phase, r.phase)
	}
	wantLines(t, m.write(), "ra")
}

// A batch's line goes out once, when every element was read and every call finished; it holds only
// the replies still wanted, and without any there is no line at all.
func TestBatchLine(t *testing.T) {
	m := newMachine(t)
	b := &batch{}
	c1 := m.running("1", b)
	m.st.add(b, outItem{data: []byte("ping")})
	m.st.finish(c1, []byte("r1")) // before the batch is sealed
	c2 := m.running("2", b)
	m.st.seal(b)
	wantLines(t, m.write())
	m.st.finish(c2, []byte("r2"))
	m.st.flush(b) // again: nothing more
	wantLines(t, m.write(), "[ping,r1,r2]")

	// Every call cancelled, one after it answered: no line.
	b = &batch{}
	c4 := m.running("4", b)
	c5 := m.running("5", b)
	m.st.seal(b)
	m.st.cancel(c4, errCancelledByClient)
	m.st.finish(c4, nil)
	m.st.finish(c5, []byte("r5"))
	m.st.cancel(c5, errCancelledByClient)
	wantLines(t, m.write())
	if m.inFlight("5") {
		t.Fatal("a withdrawn batch reply kept its id")
	}

	// Only notifications: no line.
	b = &batch{}
	m.st.seal(b)
	wantLines(t, m.write())
}
