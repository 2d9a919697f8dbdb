package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/vzn/vx/engine/docsearch"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/initplan"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/show"
)

// budget is the answer budget of the workspace: mcp({ answerChars }), or the default when the
// config does not load (the tools that need it answer its error themselves).
func (d *Deps) budget(ctx context.Context) int {
	if d.loader() == nil {
		return graph.DefaultAnswerChars
	}
	ws, err := d.loader().LoadConfig(ctx)
	if err != nil {
		return graph.DefaultAnswerChars
	}
	return ws.MCP.Budget()
}

// cutText keeps the start of text so that its JSON fits about chars characters, and ends it with a
// line saying how much of how much is shown; false when not even the marker fits.
func cutText(text string, chars int, what string) (string, bool) {
	marker := func(kept int) string {
		return fmt.Sprintf("\n… [%s cut to fit the answer: %d of %d bytes shown]\n", what, kept, len(text))
	}
	if chars < len(marker(len(text)))+64 {
		return "", false
	}
	// JSON escapes some characters into several; shrink until the escaped text fits.
	keep := chars - len(marker(len(text))) - 2
	for range 8 {
		keep = min(keep, len(text))
		for keep > 0 && keep < len(text) && !utf8.RuneStart(text[keep]) {
			keep--
		}
		out := text[:keep] + marker(keep)
		js, _ := json.Marshal(out)
		if len(js) <= chars {
			return out, true
		}
		keep -= len(js) - chars + 16
		if keep <= 0 {
			return "", false
		}
	}
	return "", false
}

// cutFile cuts a planned file's text to fit a page, with a marker and its size.
func cutFile(f initplan.File, chars int) (initplan.File, bool) {
	head, _ := json.Marshal(initplan.File{Path: f.Path, Status: f.Status})
	text, ok := cutText(f.Text, chars-len(head), "file")
	f.Text = text
	return f, ok
}

// cutSection cuts a manual section's text to fit a page, with a marker and its size; its URL
// leads to the whole.
func cutSection(s docsearch.Section, chars int) (docsearch.Section, bool) {
	rest := s
	rest.Text = ""
	head, _ := json.Marshal(rest)
	text, ok := cutText(s.Text, chars-len(head), "section")
	s.Text = text
	return s, ok
}

// cutOutput cuts a task's plain output as logtext.CutTo does, so that its JSON string is at most
// chars characters (JSON escapes some characters into several).
func cutOutput(plain string, chars int) logtext.Text {
	t, _ := cutOutputBy(func(limit int) (logtext.Text, bool) { return logtext.CutTo(plain, limit), true }, chars)
	return t
}

// cutOutputBy is cutOutput of an output that cut cuts to a limit (logtext.CutTo, logtext.CutEnds);
// ok is false when cut could not.
func cutOutputBy(cut func(limit int) (logtext.Text, bool), chars int) (logtext.Text, bool) {
	limit := chars
	for {
		t, ok := cut(max(limit, 0))
		if !ok {
			return t, false
		}
		js, _ := json.Marshal(t.Output)
		if len(js) <= chars || limit <= 0 {
			return t, true
		}
		limit = limit*chars/len(js) - 64
	}
}

// affectedOf keeps, of the affected reasons by project, those of the projects a page lists (name
// answers the name of listed project i); a page that lists every project keeps them all, as the
// CLI prints them.
func affectedOf(affected map[string]string, listed int, name func(i int) string, total int) map[string]string {
	if affected == nil || listed == total {
		return affected
	}
	out := make(map[string]string, listed)
	for i := range listed {
		if reason, ok := affected[name(i)]; ok {
			out[name(i)] = reason
		}
	}
	return out
}

// configPage is getConfig's answer: vx show's document, its affected reasons those of the
// projects the page lists.
type configPage struct {
	*show.Document
	total int
}

// MarshalJSON writes the document as vx show --format json does (show.Document.Original: the
// original's shape for its target) with the reasons of the listed projects only.
func (p configPage) MarshalJSON() ([]byte, error) {
	d := *p.Document
	d.Affected = affectedOf(d.Affected, len(d.Projects), func(i int) string { return d.Projects[i].Name }, p.total)
	return json.Marshal(d.Original())
}
