package tools

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/store"
)

type getTaskLogArgs struct {
	TaskID string `json:"taskId" arg:"required,nonempty,pattern=^[^#]+#.+$,doc=project#task."`
	RunID  string `json:"runId" arg:"nonempty,doc=Run id or unique prefix; default the latest with the task."`
	Cursor string `json:"cursor" arg:"nonempty,doc=An answer's nextCursor."`
}

// getTaskLog answers what a task printed in a run: history.Log's document, `vx last --log TASKID
// [--run ID] --format json`.
func (d *Deps) getTaskLog() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "getTaskLog",
		Title:       "What a task printed",
		Description: "What did task X print? vx last --log's answer: runId, taskId, status, source (failure, cache, or null: none kept), output (plain text, secrets masked; a long one cut in the middle, its nextCursor pages the whole).",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args getTaskLogArgs) (*logPage, error) {
		log, err := taskQuery(ctx, d, args.TaskID, "the log of", func(st *store.Store) (*history.TaskLog, error) {
			return history.Log(ctx, st, args.TaskID, args.RunID, d.secretsMasker())
		})
		if err != nil {
			return nil, err
		}
		return d.logPage(ctx, call, log, args.Cursor)
	})
}

// logChunkBytes is the most bytes of output one element of a log's pages holds.
const logChunkBytes = 2 << 10

// logPage is getTaskLog's answer: the log as history.Log answers it, or one page of the whole
// output.
type logPage struct {
	RunID  string  `json:"runId"`
	TaskID string  `json:"taskId"`
	Status string  `json:"status"`
	Source *string `json:"source"`
	logtext.Text
	// Offset is, on a page of the whole output (asked with a cursor), the byte offset in the whole
	// where its output starts.
	Offset *int `json:"offset,omitempty"`

	paging bool
	chunks []logChunk
}

// logChunk is a run of whole lines of the output (or a piece of a longer line) and its offset.
type logChunk struct {
	Off  int    `json:"o"`
	Text string `json:"t"`
}

// MarshalJSON writes a page of the whole output as one output string from the chunks the window
// kept.
func (p *logPage) MarshalJSON() ([]byte, error) {
	type plain logPage
	out := *p
	if p.paging {
		var b strings.Builder
		for _, c := range p.chunks {
			b.WriteString(c.Text)
		}
		out.Output = b.String()
		out.OmittedBytes = out.OutputBytes - len(out.Output)
		off := out.OutputBytes
		if len(p.chunks) > 0 {
			off = p.chunks[0].Off
		}
		out.Offset = &off
	}
	return json.Marshal((*plain)(&out))
}

// logPage answers log within the budget. A log that fits is answered whole. A longer one is
// answered, without a cursor, cut in the middle to the budget (head and tail, 1:7), with a
// nextCursor that pages the whole output from its first byte: the pages' outputs, joined in order,
// are the whole output.
func (d *Deps) logPage(ctx context.Context, call *tool.Call, log *history.TaskLog, cursor string) (*logPage, error) {
	whole := log.Whole()
	page := &logPage{RunID: log.RunID, TaskID: log.TaskID, Status: log.Status, Source: log.Source,
		Text: logtext.Text{Output: whole, OutputBytes: len(whole)}}
	budget := d.budget(ctx)
	if cursor == "" {
		if js, err := json.Marshal(page); err == nil && len(js) <= budget {
			return page, nil // whole, as it is
		}
	}
	page.chunks = chunkLines(whole, logChunkBytes)
	list := window.Of("output", &page.chunks)
	if cursor == "" {
		page.Output = ""
		base, err := json.Marshal(page)
		if err != nil {
			return nil, err
		}
		page.Text = cutOutput(whole, budget-len(base)-window.Reserve)
		list = list.Head(0)
	} else {
		page.paging = true
	}
	call.Window(ctx, cursor, list)
	return page, nil
}

// chunkLines splits s into runs of whole lines of at most n bytes; a longer line is split at a
// UTF-8 boundary.
func chunkLines(s string, n int) []logChunk {
	var out []logChunk
	for off := 0; off < len(s); {
		end := min(off+n, len(s))
		if end < len(s) {
			if nl := strings.LastIndexByte(s[off:end], '\n'); nl >= 0 {
				end = off + nl + 1
			} else {
				for end > off+1 && !utf8.RuneStart(s[end]) {
					end--
				}
			}
		}
		out = append(out, logChunk{Off: off, Text: s[off:end]})
		off = end
	}
	return out
}
