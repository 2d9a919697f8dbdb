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

// checkLock answers as `vx lock --check --format json`.
func (d *Deps) checkLock() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "checkLock",
		Title:       "Check the config lock",
		Description: "Is the config lock current? vx lock --check --format json: upToDate, audited and notAudited tasks, and each drift (task, field, locked, current) in problems; exitCode 1 on drift. Call it after editing vx config or package scripts.",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args checkLockArgs) (*configlock.Report, error) {
		ws, err := d.load(ctx)
		if err != nil {
			return nil, err
		}
		report, err := configlock.Check(ws)
		if err != nil {
			return nil, err
		}
		call.Window(ctx, args.Cursor, window.Of("problems", &report.Problems), window.Of("notAudited", &report.NotAudited), window.Of("audited", &report.Audited))
		return report, nil
	})
}
