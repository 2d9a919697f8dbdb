package actor

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/vzn/vx/actor/tool"
)

// MCP tasks, in both dialects: 2025-11-25's (a client that declared capabilities.tasks asks with
// params.task; tasks/get, tasks/result, tasks/list, tasks/cancel; notifications/tasks/status) and
// the io.modelcontextprotocol/tasks extension of the stateless revision (a client that declares
// it on the request is answered resultType "task"; tasks/get answers the result inline;
// tasks/update, tasks/cancel). A task runs the tool under a context of its own, child of the
// server's: it outlives the request that started it, not the server. Its id is the id of the work
// the tool started (runTasks: the run id), else a random one.

// taskDialect is how a tools/call asks to run as a task.
type taskDialect uint8

const (
	noTask  taskDialect = iota
	taskV1              // 2025-11-25: params.task
	taskExt             // the tasks extension: declared in the request's client capabilities
)

// Task statuses.
const (
	taskWorking   = "working"
	taskCompleted = "completed"
	taskFailed    = "failed"
	taskCancelled = "cancelled"
)

// taskPollMs is the polling interval the server suggests.
const taskPollMs = 1000

// errTaskCancelled answers tasks/result for a cancelled task: the request it stands for was
// cancelled, and a cancelled request has no result.
var errTaskCancelled = &Error{Code: -32800, Message: "task cancelled: the run was stopped and has no result"}

// taskTable holds a connection's tasks, newest last, and owns the goroutines that run them.
type taskTable struct {
	mu     sync.Mutex
	byID   map[string]*task
	order  []*task
	ended  error // the cause the table was ended with; no task starts after it
	cancel context.CancelCauseFunc
	ctx    context.Context
	wg     sync.WaitGroup
}

func newTaskTable() *taskTable {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &taskTable{byID: map[string]*task{}, ctx: ctx, cancel: cancel}
}

// task is one tool call run as a task. Fields below the line are guarded by the table's mu.
type task struct {
	created time.Time
	ttl     *int64 // the ttl the client asked (2025-11-25), kept as asked: a task lasts the server
	cancel  context.CancelCauseFunc
	done    chan struct{} // closed once the tool returned and its result is recorded

	id         string
	status     string
	message    string
	updated    time.Time
	result     *callToolResult // the answer, once the tool returned one
	rpcErr     *Error          // the JSON-RPC error it ended on instead
	registered bool
	started    string // the id the tool gave its work, the task's id to be
	// notify, when set, tells the client of the task's end (notifications/tasks/status).
	notify func(taskSnapshot)
}

// taskDialect says whether c runs t as a task: the tool must allow it, and the client have declared
// the dialect it asks in.
func (m *session) taskDialect(c *call, t tool.Tool, p *callParams) taskDialect {
	switch {
	case t.TaskSupport == "" || !m.taskTools:
		return noTask
	case isStateless(c.revision) && c.caps.taskExt:
		return taskExt
	case !isStateless(c.revision) && c.caps.tasks && p.Task != nil:
		return taskV1
	}
	return noTask
}

// callAsTask runs t as a task and answers the task as created: once the tool named the work it
// started (its id is the task's), or once it returned. A confirmation the client is still to give
// is answered as input_required, no task made. The call's cancellation before that cancels the
// task.
func (m *session) callAsTask(c *call, t tool.Tool, args json.RawMessage, p *callParams, d taskDialect) (any, error) {
	tb := m.tasks
	ctx, cancel := context.WithCancelCause(tb.ctx)
	tk := &task{created: time.Now().UTC(), cancel: cancel, done: make(chan struct{}), status: taskWorking}
	tk.updated = tk.created
	if p.Task != nil {
		tk.ttl = p.Task.TTL
	}
	if d == taskV1 {
		cn := c.conn
		tk.notify = func(s taskSnapshot) {
			if params, err := json.Marshal(s.v1()); err == nil {
				cn.send(outItem{data: appendNotification(nil, "notifications/tasks/status", params)})
			}
		}
	}
	ids := make(chan string, 1)
	var once sync.Once
	tc := &tool.Call{Args: args, Progressing: c.progressToken != nil, ProtocolVersion: c.revision, Buffers: &c.conn.buffers,
		Confirm: m.confirmFunc(c, t.Name, args, p),
		Started: func(id string) {
			once.Do(func() {
				tb.mu.Lock()
				tk.started = id
				tb.mu.Unlock()
				ids <- id
			})
		}}
	tc.Progress = m.taskProgress(c, tk)
	var res any
	var err error
	if !tb.start(func() {
		js, callErr := t.Call(ctx, tc)
		res, err = m.toolResult(c, t.Name, js, callErr)
		tb.finish(m, tk, res, err)
	}) {
		cancel(nil)
		return nil, fmt.Errorf("%w: the server is shutting down", ErrInternal)
	}
	var id string
	select {
	case id = <-ids:
	case <-tk.done:
		select {
		case id = <-ids:
		default:
		}
		if ask, ok := res.(inputRequiredResult); ok && err == nil {
			return ask, nil // nothing started: the client confirms and calls again
		}
	case <-c.ctx.Done():
		cancel(context.Cause(c.ctx))
		return nil, context.Cause(c.ctx)
	}
	if id == "" {
		id = rand.Text()
	}
	snap, err := tb.register(tk, id)
	if err != nil {
		cancel(err)
		return nil, err
	}
	return m.createResult(snap, c.revision, d), nil
}

// start runs f in a goroutine the table owns, unless the table has ended.
func (tb *taskTable) start(f func()) bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if tb.ended != nil {
		return false
	}
	tb.wg.Go(f)
	return true
}

// register gives tk its id and lists it; it answers tk as it is then.
func (tb *taskTable) register(tk *task, id string) (taskSnapshot, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if _, dup := tb.byID[id]; dup {
		return taskSnapshot{}, fmt.Errorf("%w: task id %q is taken", ErrInternal, id)
	}
	tk.id, tk.registered = id, true
	tb.byID[id] = tk
	tb.order = append(tb.order, tk)
	return tk.snapshot(), nil
}

// finish records what the tool answered and ends tk: completed, failed, or cancelled as it was.
// The status goes to the client that asked in 2025-11-25's dialect.
func (tb *taskTable) finish(m *session, tk *task, res any, err error) {
	tb.mu.Lock()
	if r, ok := res.(callToolResult); ok && err == nil {
		r.Text = append([]byte(nil), r.Text...) // the buffer goes back to the pool with the reply
		tk.result = &r
	} else if err != nil {
		tk.rpcErr = wireError(err, m.mask)
	} else {
		tk.rpcErr = wireError(fmt.Errorf("%w: the call answered no result", ErrInternal), m.mask)
	}
	if tk.status != taskCancelled {
		tk.status, tk.updated = taskCompleted, time.Now().UTC()
		if tk.rpcErr != nil || tk.result.IsError {
			tk.status = taskFailed
			tk.message = failureMessage(tk)
		}
	}
	close(tk.done)
	snap, notify := tk.snapshot(), tk.registered && tk.notify != nil
	tb.mu.Unlock()
	if notify {
		tk.notify(snap)
	}
}

// failureMessage is the statusMessage of a failed task: its error's text, first line.
func failureMessage(tk *task) string {
	msg := ""
	if tk.rpcErr != nil {
		msg = tk.rpcErr.Message
	} else if tk.result != nil {
		msg = string(tk.result.Text)
	}
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}

// endTasks cancels every task with cause and waits for their goroutines.
func (m *session) endTasks(cause error) {
	tb := m.tasks
	tb.mu.Lock()
	if tb.ended == nil {
		tb.ended = cause
	}
	tb.mu.Unlock()
	tb.cancel(cause)
	tb.wg.Wait()
}

// cancelTasks cancels every task with cause.
func (m *session) cancelTasks(cause error) { m.tasks.cancel(cause) }

// taskProgress is a task's Call.Progress: notifications/progress for the call's token, increasing,
// until the task ends — past the reply that created it — each tied to the task once it has its id.
func (m *session) taskProgress(c *call, tk *task) func(done, total float64, message string) {
	if c.progressToken == nil {
		return func(float64, float64, string) {}
	}
	var mu sync.Mutex
	last, sent := 0.0, false
	return func(done, total float64, message string) {
		if math.IsNaN(done) || math.IsInf(done, 0) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if sent && done <= last {
			return
		}
		select {
		case <-tk.done:
			return
		default:
		}
		last, sent = done, true
		p := taskProgressParams{progressParams: progressParams{ProgressToken: c.progressToken, Progress: done}}
		if total > 0 && !math.IsInf(total, 0) {
			p.Total = &total
		}
		if hasProgressMessage(c.revision) {
			p.Message = m.mask(message)
		}
		m.tasks.mu.Lock()
		if tk.started != "" {
			p.Meta = &statelessMeta{RelatedTask: &relatedTask{TaskID: tk.started}}
		}
		m.tasks.mu.Unlock()
		if params, err := json.Marshal(p); err == nil {
			c.conn.send(outItem{data: appendNotification(nil, "notifications/progress", params)})
		}
	}
}

type taskProgressParams struct {
	progressParams
	Meta *statelessMeta `json:"_meta,omitempty"`
}

// taskSnapshot is a task as one answer shows it.
type taskSnapshot struct {
	id, status, message string
	created, updated    time.Time
	ttl                 *int64
	result              *callToolResult
	rpcErr              *Error
}

func (tk *task) snapshot() taskSnapshot {
	return taskSnapshot{id: tk.id, status: tk.status, message: tk.message, created: tk.created, updated: tk.updated,
		ttl: tk.ttl, result: tk.result, rpcErr: tk.rpcErr}
}

// taskV1Wire is a task in 2025-11-25's shape.
type taskV1Wire struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           *int64 `json:"ttl"`
	PollInterval  int    `json:"pollInterval"`
}

// taskExtWire is a task in the extension's shape, with its result or error once it has one.
type taskExtWire struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          *int64          `json:"ttlMs"`
	PollIntervalMs int             `json:"pollIntervalMs"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *errorWire      `json:"error,omitempty"`
}

type errorWire struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func (s taskSnapshot) v1() taskV1Wire {
	return taskV1Wire{TaskID: s.id, Status: s.status, StatusMessage: s.message, CreatedAt: stamp(s.created),
		LastUpdatedAt: stamp(s.updated), TTL: s.ttl, PollInterval: taskPollMs}
}

// ext answers s in the extension's shape, as resultType says (the extension's own: a tool call
// that ended in an isError result is completed, not failed).
func (s taskSnapshot) ext(resultType string) taskExtWire {
	w := taskExtWire{ResultType: resultType, TaskID: s.id, Status: s.status, StatusMessage: s.message,
		CreatedAt: stamp(s.created), LastUpdatedAt: stamp(s.updated), PollIntervalMs: taskPollMs}
	if s.status == taskFailed && s.rpcErr == nil {
		w.Status, w.StatusMessage = taskCompleted, ""
	}
	switch {
	case s.status == taskCancelled:
	case s.rpcErr != nil:
		w.Error = &errorWire{Code: s.rpcErr.Code, Message: s.rpcErr.Message, Data: s.rpcErr.Data}
	case s.result != nil:
		r := *s.result
		r.stateless = stateless{ResultType: "complete"} // the result as the stateless revision answers it
		w.Result = r.appendJSON(nil)
	}
	return w
}

// createResult is the answer of a tools/call run as a task: the task as created.
func (m *session) createResult(s taskSnapshot, rev string, d taskDialect) any {
	if d == taskExt {
		w := s.ext("task")
		w.Result, w.Error = nil, nil // the result is tasks/get's to give
		return w
	}
	return struct {
		Task taskV1Wire `json:"task"`
		stateless
	}{s.v1(), m.statelessFor(rev)}
}

// taskRequest answers tasks/get, tasks/list, tasks/cancel and tasks/update on the reader, shaped
// as rev speaks them.
func (m *session) taskRequest(msg message, rev string) (any, error) {
	var p struct {
		TaskID json.RawMessage `json:"taskId"`
		Cursor json.RawMessage `json:"cursor"`
	}
	if msg.params != nil && (firstByte(msg.params) != '{' || json.Unmarshal(msg.params, &p) != nil) {
		return nil, fmt.Errorf("%w: %s params must be an object", ErrInvalidParams, msg.method)
	}
	ext := isStateless(rev)
	if msg.method == "tasks/list" {
		if ext {
			return nil, fmt.Errorf("%w: %q (the tasks extension has no tasks/list)", ErrMethodNotFound, msg.method)
		}
		if p.Cursor != nil {
			return nil, fmt.Errorf("%w: invalid cursor: tasks/list answers every task on one page", ErrInvalidParams)
		}
		return m.listTasks(rev), nil
	}
	var id string
	if firstByte(p.TaskID) != '"' || json.Unmarshal(p.TaskID, &id) != nil {
		return nil, fmt.Errorf("%w: %s needs taskId, a string", ErrInvalidParams, msg.method)
	}
	tb := m.tasks
	tb.mu.Lock()
	tk, ok := tb.byID[id]
	tb.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: no task %q (a task lasts as long as the server that started it)", ErrInvalidParams, id)
	}
	switch msg.method {
	case "tasks/get":
		return m.taskAnswer(tk, rev), nil
	case "tasks/update":
		if !ext {
			return nil, fmt.Errorf("%w: %q", ErrMethodNotFound, msg.method)
		}
		return emptyResult{m.statelessFor(rev)}, nil // a run asks nothing while it runs
	}
	snap, err := tb.cancelTask(tk)
	if err != nil && !ext {
		return nil, err
	}
	if ext {
		return emptyResult{m.statelessFor(rev)}, nil
	}
	return struct {
		taskV1Wire
		stateless
	}{snap.v1(), m.statelessFor(rev)}, nil
}

// taskAnswer is tasks/get's answer for tk under rev.
func (m *session) taskAnswer(tk *task, rev string) any {
	m.tasks.mu.Lock()
	snap := tk.snapshot()
	m.tasks.mu.Unlock()
	if isStateless(rev) {
		w := snap.ext("complete")
		return w
	}
	return snap.v1()
}

// cancelTask cancels tk as notifications/cancelled cancels a request: its run's processes are
// stopped. It answers the task, cancelled; a task already ended is refused (-32602).
func (tb *taskTable) cancelTask(tk *task) (taskSnapshot, error) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch tk.status {
	case taskCompleted, taskFailed, taskCancelled:
		return tk.snapshot(), fmt.Errorf("%w: task %q has ended (%s): nothing to cancel", ErrInvalidParams, tk.id, tk.status)
	}
	tk.status, tk.message, tk.updated = taskCancelled, "cancelled by the client (tasks/cancel)", time.Now().UTC()
	tk.cancel(errTaskCancelledByClient)
	return tk.snapshot(), nil
}

var errTaskCancelledByClient = errors.New("actor: task cancelled by the client (tasks/cancel)")

// listTasks answers tasks/list: every task, newest first.
func (m *session) listTasks(rev string) any {
	tb := m.tasks
	tb.mu.Lock()
	out := make([]taskV1Wire, 0, len(tb.order))
	for i := len(tb.order) - 1; i >= 0; i-- {
		out = append(out, tb.order[i].snapshot().v1())
	}
	tb.mu.Unlock()
	return struct {
		Tasks []taskV1Wire `json:"tasks"`
		stateless
	}{out, m.statelessFor(rev)}
}

// taskResult answers tasks/result on a worker: once the task has ended, what its tools/call would
// have answered, tied to the task.
func (m *session) taskResult(c *call) (any, error) {
	var p struct {
		TaskID string `json:"taskId"`
	}
	if c.params == nil || json.Unmarshal(c.params, &p) != nil || p.TaskID == "" {
		return nil, fmt.Errorf("%w: tasks/result needs taskId, a string", ErrInvalidParams)
	}
	tb := m.tasks
	tb.mu.Lock()
	tk, ok := tb.byID[p.TaskID]
	tb.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: no task %q (a task lasts as long as the server that started it)", ErrInvalidParams, p.TaskID)
	}
	select {
	case <-tk.done:
	case <-c.ctx.Done():
		return nil, context.Cause(c.ctx)
	}
	tb.mu.Lock()
	snap := tk.snapshot()
	tb.mu.Unlock()
	switch {
	case snap.status == taskCancelled:
		return nil, errTaskCancelled
	case snap.rpcErr != nil:
		return nil, snap.rpcErr
	}
	r := *snap.result
	r.Text = append([]byte(nil), r.Text...)
	if r.Meta == nil {
		r.Meta = &statelessMeta{}
	} else {
		meta := *r.Meta
		r.Meta = &meta
	}
	r.Meta.RelatedTask = &relatedTask{TaskID: snap.id}
	return r, nil
}
