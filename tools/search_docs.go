package tools

import (
	"context"
	"math"

	"github.com/vzn/vx/engine/docsearch"
	"github.com/vzn/vx/tools/window"
)

type searchDocsArgs struct {
	Query  string   `json:"query" args:"required,nonempty" jsonschema:"Words to find, e.g. cache key."`
	Limit  *float64 `json:"limit" jsonschema:"Sections to answer: 1..100, clamped (default 10)."`
	Cursor string   `json:"cursor" args:"nonempty" jsonschema:"An answer's nextCursor."`
}

// searchDocs answers as `vx docs QUERY --format json`.
func (e *Env) searchDocs() Tool {
	return Tool{
		Name:         "searchDocs",
		Title:        "Search the vx manual",
		Description:  "Where is X documented? Searches vx's manual offline: the sections holding every word of query, each whole with its URL (limit: most sections). Call it for config fields, CLI flags and how the cache works. As vx docs --format json.",
		InputSchema:  inputOf[searchDocsArgs](),
		OutputSchema: outputOf[docsearch.Result](true),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args searchDocsArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			limit := docsearch.DefaultLimit
			if args.Limit != nil {
				// Clamp before converting, so a huge number cannot overflow into a small one.
				limit = int(math.Max(1, math.Min(*args.Limit, docsearch.MaxLimit)))
			}
			res, err := docsearch.Search(args.Query, limit)
			if err != nil {
				return nil, err
			}
			return e.fit(ctx, call, "searchDocs", args.Cursor, res, window.OfCut("sections", &res.Sections, cutSection))
		},
	}
}
