package tools

import (
	"context"
	"math"
	"strings"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/docsearch"
)

type searchDocsArgs struct {
	Query   string   `json:"query" arg:"required,nonempty,doc=Words to find, e.g. cache key."`
	Limit   *float64 `json:"limit" arg:"doc=Sections to answer: 1..100, clamped (default 10)."`
	Section string   `json:"section" arg:"nonempty,doc=A hit's url: it whole."`
	Cursor  string   `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// DocsAnswer is searchDocs' answer, as the original's: vx docs' exit status and its --format json
// document. Where the hits' sections together are long, the answer lists each hit's heading and URL
// with its text left out (TextOmitted), the first that fit a summary first and the rest behind the
// cursor, and Next says how to read one whole.
type DocsAnswer struct {
	ExitCode    int               `json:"exitCode"`
	Docs        *docsearch.Result `json:"docs"`
	TextOmitted bool              `json:"textOmitted,omitempty"`
	Next        string            `json:"next,omitempty"`
}

// searchDocs answers as `vx docs QUERY --format json`.
func (d *Deps) searchDocs() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "searchDocs",
		Title:       "Search the vx manual",
		Description: "Where is X documented (config fields, CLI flags, the cache)? vx's manual, offline: sections holding every word of query, with URLs; many: headings first, section: one whole. As vx docs --format json.",
		Paged:       true,
		Annotations: readOnly,
		OutputTypes: documentSchema[docsearch.Result](),
	}, func(ctx context.Context, call *tool.Call, args searchDocsArgs) (*DocsAnswer, error) {
		limit := docsearch.DefaultLimit
		if args.Limit != nil {
			// Clamp before converting, so a huge number cannot overflow into a small one.
			limit = int(math.Max(1, math.Min(*args.Limit, docsearch.MaxLimit)))
		}
		if args.Section != "" {
			limit = docsearch.MaxLimit // the section asked for is among every hit
		}
		res, err := docsearch.Search(args.Query, limit)
		if err != nil {
			return nil, err
		}
		ans := &DocsAnswer{Docs: res}
		if args.Section != "" {
			return ans, oneSection(res, args.Section)
		}
		if jsonSize(res.Sections) > summaryListChars {
			// Long hits: their headings and URLs, the first that fit a summary, the cursor the
			// rest; each hit's text on request (section).
			for i := range res.Sections {
				res.Sections[i].Text = ""
			}
			ans.TextOmitted = true
			ans.Next = `each hit's text is left out: searchDocs {query, section: <its url>} answers that section whole`
			hits := res.Sections
			res.Sections = nil
			base := jsonSize(ans)
			res.Sections = hits
			call.Window(ctx, args.Cursor, summaryLists(base, headedOf(window.Of("docs.hits", &res.Sections), hits))...)
			return ans, nil
		}
		call.Window(ctx, args.Cursor, window.OfCut("docs.hits", &res.Sections, cutSection))
		return ans, nil
	})
}

// oneSection keeps, of res's hits, the one whose URL (or anchor) is url, whole; a URL no hit has
// is refused, naming the hits' URLs.
func oneSection(res *docsearch.Result, url string) error {
	for _, s := range res.Sections {
		if s.URL == url || s.Anchor == url || strings.TrimPrefix(s.URL, s.File) == url {
			res.Sections = []docsearch.Section{s}
			return nil
		}
	}
	urls := make([]string, 0, len(res.Sections))
	for _, s := range res.Sections {
		urls = append(urls, s.URL)
	}
	if len(urls) > 5 {
		urls = append(urls[:5], "…")
	}
	return tool.Refusef("argument %q: no hit of %q has the url %q (hits: %s)", "section", res.Query, url, strings.Join(urls, ", "))
}
