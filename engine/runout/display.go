package runout

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
)

// Display writes task output, each line prefixed with its task id and masked, and progress: on a
// terminal a status line (tasks done / total, running tasks) redrawn under the output, otherwise
// one plain line per finished task.
type Display struct {
	w        io.Writer
	terminal bool
	masker   *mask.Masker
	total    int
	// logs says which output is shown, when, and in colour; persistent holds the ids of the
	// persistent tasks, whose output is never held (they do not end while they serve).
	logs       LogOptions
	persistent map[string]bool

	mu      sync.Mutex
	held    map[string][]byte // the output of tasks still running, when logs holds it
	done    int
	running []string
	waiters []string // tasks waiting for another process that runs them
	shown   bool     // the status line is on screen
	// hits and saved count the hits an agent's output leaves for one line at the end.
	hits  int
	saved time.Duration
	// stages holds the engine's stage of each task running remotely ("queued", "executing").
	stages map[string]string
	// holding says that lines are gathered in pending until Flush, not written one by one: the
	// scheduler holds them while it handles a burst of finished tasks (Hold), never while it
	// waits.
	holding bool
	pending []byte
}

// NewDisplay answers the display of a run of total tasks on w (a terminal when terminal is set),
// masking with m, showing task output as logs says; persistent holds the ids of the persistent
// tasks.
func NewDisplay(w io.Writer, terminal bool, m *mask.Masker, total int, logs LogOptions, persistent map[string]bool) *Display {
	return &Display{w: w, terminal: terminal, masker: m, total: total, logs: logs, persistent: persistent, held: map[string][]byte{}}
}

// holdLimit is how much held text Display keeps before writing it anyway.
const holdLimit = 64 << 10

// Hold gathers the lines written from now on until Flush, which writes them in one call: a
// scheduler finishing hundreds of cache hits in a burst writes one block, not a line each. It
// flushes before it waits for anything, so that no line stays behind while nothing happens. A
// terminal's display is not held: its status line is redrawn as lines come.
func (d *Display) Hold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.holding = !d.terminal
}

// Flush writes the lines held since Hold and stops holding.
func (d *Display) Flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flushLocked()
	d.holding = false
}

// flushLocked writes the lines held. Callers hold d.mu.
func (d *Display) flushLocked() {
	if len(d.pending) > 0 {
		d.w.Write(d.pending)
		d.pending = d.pending[:0]
	}
}

// write prints text (whole lines) above the status line. Callers hold d.mu.
func (d *Display) write(text string) {
	if d.holding {
		d.pending = append(d.pending, text...)
		if len(d.pending) >= holdLimit {
			d.flushLocked()
		}
		return
	}
	if d.terminal && d.shown {
		io.WriteString(d.w, "\r\x1b[K")
		d.shown = false
	}
	io.WriteString(d.w, text)
	d.status()
}

func (d *Display) status() {
	if !d.terminal || d.done >= d.total {
		return
	}
	line := fmt.Sprintf("[%d/%d]", d.done, d.total)
	if len(d.running) > 0 {
		names := d.running
		more := ""
		if len(names) > 4 {
			names, more = names[:4], fmt.Sprintf(" +%d", len(d.running)-4)
		}
		names = logtext.EscapeAll(names)
		for i, id := range names {
			if stage := d.stages[id]; stage != "" {
				names[i] = id + " (remote: " + stage + ")"
			}
		}
		line += " running " + strings.Join(names, ", ") + more
	}
	if len(d.waiters) > 0 {
		line += "; waiting " + strings.Join(d.waiters, ", ")
	}
	fmt.Fprintf(d.w, "\r\x1b[K%s", line)
	d.shown = true
}

// Started shows the task as running.
func (d *Display) Started(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.running = append(d.running, id)
	sort.Strings(d.running)
	if d.terminal {
		d.write("")
	}
}

// RemoteStage shows a running task's stage on the engine that executes it ("queued",
// "executing") on the status line.
func (d *Display) RemoteStage(id, stage string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stages == nil {
		d.stages = map[string]string{}
	}
	d.stages[id] = stage
	if d.terminal {
		d.write("")
	}
}

// Waiting shows a started task as waiting for holder, another process that runs it.
func (d *Display) Waiting(id, holder string) {
	d.WaitingFor(id, holder+", which runs this task")
}

// WaitingFor shows a started task as waiting, what saying for what ("pid 12 in /src/wt2, which
// runs its key 3f2a9c0d4e5b").
func (d *Display) WaitingFor(id, what string) {
	d.mu.Lock()
	d.running = remove(d.running, id)
	d.waiters = append(d.waiters, id)
	d.mu.Unlock()
	d.Notice(id, "vx: waiting for "+what)
}

// Resumed shows a task that waited as running again.
func (d *Display) Resumed(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.waiters = remove(d.waiters, id)
	d.running = append(d.running, id)
	sort.Strings(d.running)
	if d.terminal {
		d.write("")
	}
}

func remove(ids []string, id string) []string {
	if i := slices.Index(ids, id); i >= 0 {
		return slices.Delete(ids, i, i+1)
	}
	return ids
}

// Done answers how many tasks have finished.
func (d *Display) Done() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.done
}

// Finished shows a task's status line (and its held output, when logs shows it) and counts it
// done.
func (d *Display) Finished(e store.Execution) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done++
	for i, id := range d.running {
		if id == e.TaskID {
			d.running = append(d.running[:i], d.running[i+1:]...)
			break
		}
	}
	d.waiters = remove(d.waiters, e.TaskID)
	delete(d.stages, e.TaskID)
	held, wasHeld := d.held[e.TaskID]
	delete(d.held, e.TaskID)
	if d.logs.Agent {
		d.agentFinished(e, held)
		return
	}
	if wasHeld && d.logs.showsHeld(e.Status) {
		d.write(d.fold(e, string(held)))
	}
	d.write(d.statusLine(e))
}

// statusLine is a finished task's line: its id and how it ended.
func (d *Display) statusLine(e store.Execution) string {
	var what string
	switch e.Status {
	case store.StatusBlocked:
		what = "blocked by " + logtext.Escape(e.BlockedBy)
	case store.StatusSkipped:
		what = "skipped"
	case store.StatusHit:
		what = fmt.Sprintf("hit (%s, saved %s)", round(e.Duration), round(e.Saved))
		switch {
		case e.OutputsRemote:
			what = fmt.Sprintf("hit, outputs kept remote (%s, saved %s)", round(e.Duration), round(e.Saved))
		case e.RestoredFiles != nil && *e.RestoredFiles == 0:
			what = fmt.Sprintf("hit, restored 0 files (%s, saved %s)", round(e.Duration), round(e.Saved))
		}
	case store.StatusFailed:
		if e.ExitCode != nil {
			what = fmt.Sprintf("failed with exit code %d (%s)", *e.ExitCode, round(e.Duration))
		} else {
			what = fmt.Sprintf("failed (%s)", round(e.Duration))
		}
	default:
		what = fmt.Sprintf("%s (%s)", e.Reported(), round(e.Duration))
		if e.OutputsRemote {
			what = fmt.Sprintf("%s, outputs kept remote (%s)", e.Reported(), round(e.Duration))
		}
	}
	if d.logs.Show == LogsHashOnly && e.Hash != "" {
		what += " " + e.Hash
	}
	return fmt.Sprintf("%s: %s\n", d.logs.paint(prefixColor(e.TaskID), logtext.Escape(e.TaskID)), d.logs.paint(statusColor(e.Status), what))
}

func round(t time.Duration) time.Duration {
	switch {
	case t > time.Second:
		return t.Round(10 * time.Millisecond)
	case t > time.Millisecond:
		return t.Round(time.Millisecond)
	default:
		return t.Round(time.Microsecond)
	}
}

// Replay prints what a task printed (whole lines) with the task's prefix, masked: as it comes,
// or held until the task ends, or not at all, as d.logs says.
func (d *Display) Replay(id string, log []byte) {
	if len(log) == 0 || d.logs.drops() {
		return
	}
	text := d.prefixed(id, log)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.logs.holds(d.persistent[id]) {
		d.held[id] = append(d.held[id], text...)
		return
	}
	d.write(text)
}

// Hit prints a hit's cached log (masked when it was stored) with the task's prefix, after the
// hit's own line, where d.logs replays hits.
func (d *Display) Hit(id string, log []byte) {
	if len(log) == 0 || !d.logs.replaysHits() {
		return
	}
	text := d.prefixed(id, log)
	if d.logs.GitHub {
		text = groupStart(id) + text + groupEnd
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.write(text)
}

// prefixed is log's lines, masked, each after the task's prefix.
func (d *Display) prefixed(id string, log []byte) string {
	prefix := d.prefix(id)
	var b strings.Builder
	for _, line := range strings.SplitAfter(string(log), "\n") {
		if line == "" {
			continue
		}
		b.WriteString(prefix + d.masker.String(strings.TrimSuffix(line, "\n")) + "\n")
	}
	return b.String()
}

// prefix is the task's prefix of every line it prints: its id, escaped, then coloured.
func (d *Display) prefix(id string) string {
	return d.logs.paint(prefixColor(id), logtext.Escape(id)) + " | "
}

// Notice prints vx's own message about a task, masked, with the task's prefix.
func (d *Display) Notice(id, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.write(d.prefix(id) + logtext.Escape(d.masker.String(msg)) + "\n")
}

// Finish clears the status line; an agent's output ends with the line of its hits.
func (d *Display) Finish() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.flushLocked()
	d.holding = false
	if d.logs.Agent && d.hits > 0 {
		d.write(fmt.Sprintf("vx: %d %s restored from the cache (saved %s)\n", d.hits, plural(d.hits, "task", "tasks"), round(d.saved)))
		d.hits = 0
	}
	if d.terminal && d.shown {
		io.WriteString(d.w, "\r\x1b[K")
		d.shown = false
	}
}

// TaskOutput receives a running task's stdout and stderr: it keeps the log (its first and last
// MaxLogBytes/2 when longer) and prints each complete line.
type TaskOutput struct {
	d  *Display
	id string

	mu      sync.Mutex
	head    []byte
	tail    []byte
	dropped int64
	partial []byte
}

// TaskWriter answers the writer of a running task's stdout and stderr.
func (d *Display) TaskWriter(id string) *TaskOutput { return &TaskOutput{d: d, id: id} }

// maxLineBytes caps a line printed whole: output without newlines is printed in pieces of about
// this size, so that printing stays linear in time and bounded in memory.
const maxLineBytes = 64 << 10

// MaxLogBytes bounds the log kept in memory and in the cache for one task; beyond it the middle
// of the output is dropped with a marker.
const MaxLogBytes = 32 << 20

// lineCarry is what a split line keeps back unprinted: at least as long as any secret, so that a
// secret never straddles a split before it was masked.
const lineCarry = 4 << 10

// Write implements io.Writer.
func (o *TaskOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.keep(p)
	// Only the new bytes are searched: the partial line before them holds no newline.
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		o.partial = append(o.partial, p[:i+1]...)
		o.d.Replay(o.id, o.partial)
		o.partial = append(o.partial[:0], p[i+1:]...)
	} else {
		o.partial = append(o.partial, p...)
	}
	if len(o.partial) > maxLineBytes {
		masked := o.d.masker.Bytes(o.partial)
		cut := len(masked) - lineCarry
		o.d.Replay(o.id, append(masked[:cut:cut], '\n'))
		o.partial = append(o.partial[:0], masked[cut:]...)
	}
	return len(p), nil
}

func (o *TaskOutput) keep(p []byte) {
	const half = MaxLogBytes / 2
	if room := half - len(o.head); room > 0 {
		n := min(room, len(p))
		o.head = append(o.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	o.tail = append(o.tail, p...)
	// The tail is trimmed to its last half only once it holds twice that: each byte is moved
	// at most once, where trimming on every write copied the whole tail every time.
	if over := len(o.tail) - half; over > half {
		o.dropped += int64(over)
		o.tail = append(o.tail[:0], o.tail[over:]...)
	}
}

// Flush prints a last line without a newline.
func (o *TaskOutput) Flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.partial) > 0 {
		o.d.Replay(o.id, append(o.partial, '\n'))
		o.partial = nil
	}
}

// Log answers what the task printed (unmasked: the caller masks it whole).
func (o *TaskOutput) Log() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	tail := o.tail
	dropped := o.dropped
	if over := len(tail) - MaxLogBytes/2; over > 0 {
		tail, dropped = tail[over:], dropped+int64(over)
	}
	out := append([]byte(nil), o.head...)
	if dropped > 0 {
		out = append(out, fmt.Sprintf("\n[vx: %d bytes cut]\n", dropped)...)
	}
	return append(out, tail...)
}
