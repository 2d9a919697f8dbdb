package tools

import (
	"context"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/configlock"
)

type checkLockArgs struct {
	Cursor string `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// LockAnswer is checkLock's answer, as the original's: vx lock --check's exit status and its
// --format json document.
type LockAnswer struct {
	ExitCode int                `json:"exitCode"`
	Lock     *configlock.Report `json:"lock"`
}

// checkLock answers as `vx lock --check --format json`.
func (d *Deps) checkLock() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "checkLock",
		Title:       "Check the config lock",
		Description: "Is the config lock current? vx lock --check --format json: upToDate, audited counts, each drift (task, field, locked, current); exitCode 1 on drift. Call it after editing vx config or package scripts.",
		Paged:       true,
		Annotations: readOnly,
		OutputTypes: documentSchema[configlock.Report](),
	}, func(ctx context.Context, call *tool.Call, args checkLockArgs) (*LockAnswer, error) {
		ws, err := d.load(ctx)
		if err != nil {
			return nil, err
		}
		report, err := configlock.Check(ws)
		if err != nil {
			return nil, err
		}
		ans := &LockAnswer{ExitCode: report.ExitCode, Lock: report}
		lists := []headed{headedOf(window.Of("lock.problems", &report.Lines), report.Lines), headedOf(window.Of("lock.drift", &report.Problems), report.Problems),
			headedOf(window.Of("lock.notAuditedTasks", &report.NotAudited), report.NotAudited), headedOf(window.Of("lock.auditedTasks", &report.Audited), report.Audited)}
		call.Window(ctx, args.Cursor, lockLists(ans, lists)...)
		return ans, nil
	})
}

// lockLists answers checkLock's windowed lists: the drift lines, the drift, the tasks not audited
// and those audited. A first answer of a large workspace shows the drift that fits and counts
// the tasks (audited, notAudited), listing only those not audited that fit; without a lock, it is
// its one line.
func lockLists(ans *LockAnswer, lists []headed) []window.List {
	r := *ans.Lock
	r.Lines, r.Problems, r.NotAudited, r.Audited = nil, nil, nil, nil
	base := jsonSize(LockAnswer{ExitCode: ans.ExitCode, Lock: &r})
	if ans.Lock.Missing {
		lists[2].sizes = []int{summaryChars} // every task: the line says so
	}
	out := summaryLists(base, lists[:3]...)
	audited := lists[3].list
	if jsonSize(ans.Lock.Audited) > summaryListChars {
		audited = audited.Head(0)
	}
	return append(out, audited)
}
