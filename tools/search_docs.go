package tools

import (
	"context"
	"math"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/docsearch"
)

type searchDocsArgs struct {
	Query  string   `json:"query" arg:"required,nonempty,doc=Words to find, e.g. cache key."`
	Limit  *float64 `json:"limit" arg:"doc=Sections to answer: 1..100, clamped (default 10)."`
	Cursor string   `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// searchDocs answers as `vx docs QUERY --format json`.
func (d *Deps) searchDocs() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "searchDocs",
		Title:       "Search the vx manual",
		Description: "Where is X documented? Searches vx's manual offline: the sections holding every word of query, each whole with its URL (limit: most sections). For config fields, CLI flags, how the cache works. As vx docs --format json.",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args searchDocsArgs) (*docsearch.Result, error) {
		limit := docsearch.DefaultLimit
		if args.Limit != nil {
			// Clamp before converting, so a huge number cannot overflow into a small one.
			limit = int(math.Max(1, math.Min(*args.Limit, docsearch.MaxLimit)))
		}
		res, err := docsearch.Search(args.Query, limit)
		if err != nil {
			return nil, err
		}
		call.Window(ctx, args.Cursor, window.OfCut("sections", &res.Sections, cutSection))
		return res, nil
	})
}
