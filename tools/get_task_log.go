package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/internal/jsonquote"
)

type getTaskLogArgs struct {
	TaskID string `json:"taskId" arg:"required,nonempty,pattern=^[^#]+#.+$,doc=project#task."`
	RunID  string `json:"runId" arg:"nonempty,doc=Run id or unique prefix; default the latest with the task."`
	Cursor string `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// getTaskLog answers what a task printed in a run: history.Log's document, `vx last --log TASKID
// [--run ID] --format json`.
func (d *Deps) getTaskLog() tool.Tool {
	return tool.New(tool.Tool{
		Name:         "getTaskLog",
		Title:        "What a task printed",
		Description:  "What did task X print? vx last --log's answer: runId, taskId, status, source (failure, cache, or null: none kept), output (plain text, secrets masked; a long one cut in the middle, its nextCursor pages the whole).",
		OutputSchema: logPageSchema(),
		Annotations:  readOnly,
	}, func(ctx context.Context, call *tool.Call, args getTaskLogArgs) (json.RawMessage, error) {
		if args.Cursor != "" {
			return d.nextLogPage(ctx, call, args.question(), args.TaskID, args.Cursor)
		}
		budget := d.budget(ctx)
		log, err := taskQuery(ctx, d, args.TaskID, "the log of", func(st *store.Store) (*history.LogEnds, error) {
			// A page holds less than the budget: ends of that much more than a line hold any cut.
			return history.ReadLogEnds(ctx, st, args.TaskID, args.RunID, d.secretsMasker(), budget+4<<10)
		})
		if err != nil {
			return nil, err
		}
		if ws, err := d.load(ctx); err == nil {
			log.Uncached(ws)
		}
		return d.logPage(call, args.question(), log, budget)
	})
}

// logPageSchema is getTaskLog's output schema: a logPage with the page fields. The handler
// writes the page's JSON itself (its cursor is the engine's log position), so the schema is
// derived from the type here rather than from the handler's answer. It is built with the tools
// (the first tools/list or tools/call), not when the package starts: vx mcp answers initialize
// before.
func logPageSchema() json.RawMessage {
	return tool.New(tool.Tool{Name: "getTaskLog", Paged: true},
		func(context.Context, *tool.Call, struct{}) (*logPage, error) { return nil, nil }).OutputSchema
}

// logPage is getTaskLog's answer: the log as history.Log answers it, or one page of the whole
// output.
type logPage struct {
	RunID  string       `json:"runId"`
	TaskID string       `json:"taskId"`
	Status store.Status `json:"status"`
	Source *string      `json:"source"`
	// NoLog says, when Source is null, why there is no log (history.Log's noLog).
	NoLog string `json:"noLog,omitempty"`
	logtext.Text
	// Offset is, on a page of the whole output (asked with a cursor), the byte offset in the whole
	// where its output starts.
	Offset *int `json:"offset,omitempty"`
	// Store names this checkout's history, which the log was read from (absent on a later page).
	Store history.Store `json:"store,omitempty"`
}

// logPage answers log within the budget. A log that fits is answered whole. A longer one is
// answered cut in the middle to the budget (head and tail, 1:7), with a nextCursor that pages the
// whole output from its first byte: the pages' outputs, joined in order, are the whole output. A
// long log read by its ends only (log.Ends) is cut from them as the whole would be.
func (d *Deps) logPage(call *tool.Call, question string, log *history.LogEnds, budget int) (json.RawMessage, error) {
	whole := log.Whole()
	page := &logPage{RunID: log.RunID, TaskID: log.TaskID, Status: log.Status, Source: log.Source, NoLog: log.NoLog,
		Text: logtext.Text{Output: whole, OutputBytes: len(whole)}, Store: log.Store}
	pos := history.StartLog(log)
	var cut func(limit int) (logtext.Text, bool)
	if log.Ends != nil {
		page.OutputBytes = log.Ends.Len
		cut = func(limit int) (logtext.Text, bool) { return logtext.CutEnds(log.Ends, limit) }
	} else if log.Blob == "" || len(whole) <= utf8.UTFMax*budget && utf8.RuneCountInString(whole) <= budget {
		// A JSON string takes at least a character per rune: a longer output cannot fit, and is not
		// encoded whole only to learn that (docs/performance.md, "Answers and records").
		if js, err := json.Marshal(page); err != nil || len(js) <= budget || log.Blob == "" {
			return js, err
		}
	}
	page.Output = ""
	base, err := json.Marshal(page)
	if err != nil {
		return nil, err
	}
	ok := true
	if cut == nil {
		page.Text = cutOutput(whole, budget-len(base)-window.Reserve)
	} else if page.Text, ok = cutOutputBy(cut, budget-len(base)-window.Reserve); !ok {
		return nil, fmt.Errorf("the log of %s: its ends do not hold a cut to %d bytes", log.TaskID, budget)
	}
	return withLogCursor(page, call, question, page.Output, false, &pos, page.OmittedBytes)
}

// nextLogPage answers the page of the whole output that cursor begins: the engine reads the
// stored log from the cursor's offset on (history.ReadStoredLogPage), so a page costs what its
// own bytes cost, never a scan of the whole. The index is asked once per log (session.LogPages).
func (d *Deps) nextLogPage(ctx context.Context, call *tool.Call, question, taskID, cursor string) (json.RawMessage, error) {
	pos, err := decodeLogCursor(question, cursor)
	if err != nil {
		return nil, err
	}
	if err := checkTaskID("taskId", taskID); err != nil {
		return nil, err
	}
	key := session.LogKey{TaskID: taskID, RunID: pos.RunID, Blob: pos.Blob}
	log, ok := d.Session.Logs().Get(key)
	if !ok {
		log, err = taskQuery(ctx, d, taskID, "the log of", func(st *store.Store) (session.LogPage, error) {
			status, source, err := history.CheckLog(ctx, st, taskID, *pos)
			return session.LogPage{Status: status, Source: source, CAS: st.CAS()}, err
		})
		if errors.Is(err, history.ErrStaleLog) {
			return nil, logCursorStale
		}
		if err != nil {
			return nil, err
		}
		d.Session.Logs().Put(key, log)
	}
	budget := d.budget(ctx)
	page := &logPage{RunID: pos.RunID, TaskID: taskID, Status: log.Status, Source: &log.Source}
	page.OutputBytes = pos.Whole
	page.Offset = new(pos.Out)
	base, err := json.Marshal(page)
	if err != nil {
		return nil, err
	}
	// The page fields after the page's own: its nextCursor is about as long as this one (a few
	// digits more at most), and total and omitted.
	fields := len(`,"nextCursor":"","total":,"omitted":}`) + len(cursor) + 3*20
	room := budget - len(base) - fields - window.Reserve
	scratch, text := call.Buffer(min(64<<10, room+4<<10)), call.Buffer(room)
	defer func() {
		if call.Buffers != nil {
			call.Buffers.Put(scratch)
			call.Buffers.Put(text)
		}
	}()
	m := d.secretsMasker()
	for {
		p, err := history.ReadStoredLogPage(log.CAS, *pos, m, room, scratch, text)
		if errors.Is(err, history.ErrStaleLog) {
			d.Session.Logs().Forget(key)
			return nil, logCursorStale
		}
		if err != nil {
			return nil, fmt.Errorf("read the log of %s: %w", taskID, err)
		}
		page.OmittedBytes = pos.Whole - len(p.Output)
		js, err := withLogCursor(page, call, question, p.Output, p.Verbatim, p.Next, page.OmittedBytes)
		// JSON escapes a few characters more than the engine counts: shrink until it fits.
		if err != nil || len(js) <= budget || room < 64 {
			return js, err
		}
		room -= len(js) - budget + 16
	}
}

// logCursorStale refuses a cursor whose log is gone.
var logCursorStale = &tool.Refusal{Msg: "argument \"cursor\" is stale: the answer changed since it was given; call again without cursor"}

// logCursor is a getTaskLog cursor, in the form of the window's cursors (so that another tool
// given it says it belongs to another question): the question's digest and where the next page
// begins.
type logCursor struct {
	V   int             `json:"v"`
	Q   string          `json:"q"`
	F   string          `json:"f"`
	O   []int           `json:"o"`
	Pos *history.LogPos `json:"log"`
}

// withLogCursor answers page, its output being output (verbatim: known to need no escape), with
// the page fields: a cursor to pos (none when nil), the whole's bytes as total and those not on
// this page as omitted.
func withLogCursor[S ~string | ~[]byte](page *logPage, call *tool.Call, question string, output S, verbatim bool, pos *history.LogPos, omitted int) (json.RawMessage, error) {
	// The page's fields but its output are small: marshal them without it, then write the
	// output (up to the answer budget) in its place, quoted once, into one buffer with room for
	// it all.
	page.Output = ""
	small, err := json.Marshal(page)
	if err != nil {
		return nil, err
	}
	const empty = `"output":""`
	at := bytes.Index(small, []byte(empty)) + len(empty) - 2 // the other strings' quotes are escaped
	js := call.Buffer(len(small) + len(output) + len(output)/8 + 256)
	js = append(js, small[:at]...)
	if verbatim {
		js = append(append(append(js, '"'), output...), '"')
	} else {
		js = jsonquote.Append(js, output)
	}
	// The page fields go after the page's own, in place of its closing brace.
	js = append(js, small[at+2:len(small)-1]...)
	if pos != nil {
		js = append(js, `,"nextCursor":"`...)
		js = append(js, logCursorText(question, pos)...)
		js = append(js, '"')
	}
	js = fmt.Appendf(js, `,"total":%d,"omitted":%d}`, page.OutputBytes, omitted)
	return json.RawMessage(js), nil
}

// logCursorText is the cursor to pos for question: base64url of its logCursor.
func logCursorText(question string, pos *history.LogPos) string {
	c, _ := json.Marshal(logCursor{V: 1, Q: question, F: "log", O: []int{pos.Raw}, Pos: pos})
	return base64.RawURLEncoding.EncodeToString(c)
}

// decodeLogCursor reads a cursor withLogCursor made for question (logQuestion).
func decodeLogCursor(question, cursor string) (*history.LogPos, error) {
	var c logCursor
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || json.Unmarshal(raw, &c) != nil || c.V != 1 || c.Q == "" || c.F == "" {
		return nil, &tool.Refusal{Msg: "argument \"cursor\" is not a cursor this server gave: pass the nextCursor of an earlier answer unchanged"}
	}
	if c.Q != question {
		return nil, &tool.Refusal{Msg: "argument \"cursor\" belongs to another question: call again with the arguments it came from"}
	}
	if c.F != "log" || c.Pos == nil {
		return nil, logCursorStale
	}
	return c.Pos, nil
}

// question is the digest of the call's question as package window makes it: the tool and its
// arguments but the cursor, keys sorted. The arguments are the decoded ones (Decode refuses any
// other key, and an empty runId), so a page need not decode the call's JSON again for it.
func (args getTaskLogArgs) question() string {
	canon := map[string]string{"taskId": args.TaskID}
	if args.RunID != "" {
		canon["runId"] = args.RunID
	}
	js, _ := json.Marshal(canon)
	sum := sha256.Sum256(append([]byte("getTaskLog\x00"), js...))
	return fmt.Sprintf("%x", sum[:8])
}
