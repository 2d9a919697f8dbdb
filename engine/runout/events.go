package runout

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/vzn/vx/engine/store"
)

// The events stream: `vx run --events-fd N` writes one JSON line per event to file descriptor N,
// and the runTasks tool, which starts that vx run, reads it: its progress as tasks finish, and the
// message vx run ends on where its summary does not say it. Event is the one definition of a line
// for the writer and the reader.

// The types of Event.
const (
	// EventStart opens a run: RunID, and Total, the number of tasks.
	EventStart = "start"
	// EventTask is a finished task: TaskID, Status, Done of Total, DurationMs, Hash, ExitCode when
	// it has one, BlockedBy when it is blocked.
	EventTask = "task"
	// EventEnd closes a run: RunID, OK and ExitCode, as the summary says, and Commands, how many
	// task commands it started (none: no process of it can be left).
	EventEnd = "end"
	// EventWait is a task that waits for another process executing its cache key: TaskID, Hash
	// (the key), PID and Checkout of that process (each left out when not known), Message the
	// line the live display shows.
	EventWait = "wait"
	// EventError is the message vx run ends on when it refuses the run, or fails before or outside
	// its summary (the run could not be recorded, the summary not written): Message, secrets
	// masked. A run whose tasks failed has none: its summary says so.
	EventError = "error"
	// EventStage is a task running on a remote engine that reached a stage there: TaskID, and
	// Message the stage as the live display shows it ("queued", "executing").
	EventStage = "stage"
)

// Event is one line of the events stream. A line carries the fields of its Type and leaves the
// others out. The fields are declared in the order of their keys, the order the stream has always
// had on the wire.
type Event struct {
	BlockedBy  string       `json:"blockedBy,omitempty"`
	Checkout   string       `json:"checkout,omitempty"`
	Commands   *int64       `json:"commands,omitempty"`
	Done       int          `json:"done,omitempty"`
	DurationMs *int64       `json:"durationMs,omitempty"`
	ExitCode   *int         `json:"exitCode,omitempty"`
	Hash       *string      `json:"hash,omitempty"`
	Message    string       `json:"message,omitempty"`
	OK         *bool        `json:"ok,omitempty"`
	PID        int          `json:"pid,omitempty"`
	RunID      string       `json:"runId,omitempty"`
	Status     store.Status `json:"status,omitempty"`
	TaskID     string       `json:"taskId,omitempty"`
	Total      int          `json:"total,omitempty"`
	Type       string       `json:"type"`
}

// ErrorEvent is the EventError of msg, the message vx run ends on (secrets already masked).
func ErrorEvent(msg string) Event {
	return Event{Type: EventError, Message: msg}
}

// StartEvent is the EventStart of run runID of total tasks.
func StartEvent(runID string, total int) Event {
	return Event{Type: EventStart, RunID: runID, Total: total}
}

// TaskEvent is the EventTask of execution e, the done-th of total to finish.
func TaskEvent(e store.Execution, done, total int) Event {
	durationMs := e.Duration.Milliseconds()
	hash := e.Hash
	return Event{Type: EventTask, TaskID: e.TaskID, Status: e.Reported(), Done: done, Total: total,
		DurationMs: &durationMs, Hash: &hash, BlockedBy: e.BlockedBy, ExitCode: e.ExitCode}
}

// WaitEvent is the EventWait of task taskID, which waits for process pid in checkout (0 and ""
// when not known) executing its key; msg is what the display says of it.
func WaitEvent(taskID, key string, pid int, checkout, msg string) Event {
	return Event{Type: EventWait, TaskID: taskID, Hash: &key, PID: pid, Checkout: checkout, Message: msg}
}

// StageEvent is the EventStage of task taskID, which reached stage on the remote engine.
func StageEvent(taskID, stage string) Event {
	return Event{Type: EventStage, TaskID: taskID, Message: stage}
}

// EndEvent is the EventEnd of run runID: its outcome and exit code, and how many task commands
// it started.
func EndEvent(runID string, ok bool, exitCode int, commands int64) Event {
	return Event{Type: EventEnd, RunID: runID, OK: &ok, ExitCode: &exitCode, Commands: &commands}
}

// WriteEvent writes ev to w as one JSON line. A failed write is ignored: the reader left, and the
// run goes on without it.
func WriteEvent(w io.Writer, ev Event) {
	data, err := json.Marshal(ev)
	if err != nil {
		return
	}
	_, _ = w.Write(append(data, '\n'))
}

// maxEventLine bounds one line of the stream as ReadEvents reads it.
const maxEventLine = 1 << 20

// ReadEvents calls fn with each event read from r, in order, until r ends. A line that is not an
// event is skipped; r is read to its end whatever it holds, so that the writer never blocks on
// the pipe.
func ReadEvents(r io.Reader, fn func(Event)) { readEvents(r, true, fn) }

// ReadEventsButTasks is ReadEvents for a reader of everything but the EventTask lines (a runTasks
// call whose client asked for no progress), which it skips without decoding them: a line a task
// of a full hit of 1,000.
func ReadEventsButTasks(r io.Reader, fn func(Event)) { readEvents(r, false, fn) }

// taskLineEnd ends every EventTask line WriteEvent writes (type is Event's last key).
var taskLineEnd = []byte(`"type":"` + EventTask + `"}`)

func readEvents(r io.Reader, tasks bool, fn func(Event)) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxEventLine)
	for sc.Scan() {
		if !tasks && bytes.HasSuffix(sc.Bytes(), taskLineEnd) {
			continue
		}
		var ev Event
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		fn(ev)
	}
	if sc.Err() != nil {
		_, _ = io.Copy(io.Discard, r)
	}
}
