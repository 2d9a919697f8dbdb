// Package window fits a tool's answer to a budget of characters. The lists of an answer that can
// grow with the workspace (projects, tasks, files, runs) are cut at a whole element; the rest of
// the document stays; an opaque cursor, bound to the question it came from, continues where the
// window ends, and the answer says how many elements the whole holds and how many it left out.
// Following the cursors yields every element exactly once.
package window

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
)

// DefaultChars is the answer budget, in characters of an answer's text, of a Request that names
// none (vx's is graph.DefaultAnswerChars, which mcp({ answerChars }) changes).
const DefaultChars = 40_000

// Reserve is what the page fields (nextCursor, total, omitted) may take: a cursor is under 200
// characters.
const Reserve = 320

// List is one list of a document that a window may cut. Make one with Of or OfCut.
type List struct {
	name string
	n    int
	item func(i int) any
	set  func(from, to int)
	// cut answers element i shrunk to at most chars characters of JSON, or false when it cannot.
	cut func(i, chars int) (any, bool)
	// replace records that the window answers element i as v (a cut element).
	replace func(i int, v any)
	// head, when at least 0, is the most elements a first page (no cursor) holds: a summary
	// answers the elements that need attention and only counts the rest.
	head int
}

// Of is the list *s, named name in the cursor; the window sets *s to the elements it keeps.
func Of[T any](name string, s *[]T) List {
	whole := *s
	return List{name: name, n: len(whole), head: -1,
		item: func(i int) any { return whole[i] },
		set:  func(from, to int) { *s = append(whole[:0:0], whole[from:to]...) }}
}

// OfCut is Of for a list whose elements can be shrunk: cut answers an element whose JSON is at most
// chars characters (a log cut in the middle, a file's text cut with a marker), or false.
func OfCut[T any](name string, s *[]T, cut func(v T, chars int) (T, bool)) List {
	l := Of(name, s)
	whole := *s
	var cuts map[int]T
	l.cut = func(i, chars int) (any, bool) {
		v, ok := cut(whole[i], chars)
		return v, ok
	}
	l.set = func(from, to int) {
		*s = append(whole[:0:0], whole[from:to]...)
		for i, v := range cuts {
			if i >= from && i < to {
				(*s)[i-from] = v
			}
		}
	}
	// The window records a cut element through replace.
	l.replace = func(i int, v any) {
		if cuts == nil {
			cuts = map[int]T{}
		}
		cuts[i] = v.(T)
	}
	return l
}

// Head limits a first page (asked without a cursor) to the list's first n elements: those a
// summary shows (what needs attention); the rest are counted and reached through the cursor.
func (l List) Head(n int) List {
	l.head = max(n, 0)
	return l
}

// Page is what an answer that is not whole carries beside its document.
type Page struct {
	// NextCursor continues the lists where this answer ends; "" on the last page.
	NextCursor string `json:"nextCursor,omitempty"`
	// Total counts the elements of the windowed lists in the whole answer.
	Total int `json:"total"`
	// Omitted counts those of them not in this answer (before it and after it).
	Omitted int `json:"omitted"`
}

// Request is one answer to fit.
type Request struct {
	// Chars is the budget: the most characters of the answer's text (0: DefaultChars).
	Chars int
	// Question is the question asked; a cursor given must be one of its answers.
	Question Question
	// Next is the question the next cursor continues, when another tool serves the rest (a run's
	// tasks, through getRunHistory); the zero value means Question.
	Next Question
	// Cursor is the cursor the call gave ("" for a first page).
	Cursor string
	// Final is true for an answer that cannot be asked again because the call did something (a
	// cache prune): it carries no nextCursor, only the counts of what it left out.
	Final bool
}

// Fit answers doc cut to the budget: doc is encoded with each list windowed, and, when the answer
// is not whole, the Page fields are added to its top-level object. It changes the lists through
// their pointers. The error of a cursor that is malformed, stale or of another question is a
// *CursorError.
func Fit(doc any, req Request, lists ...List) (json.RawMessage, error) {
	chars := req.Chars
	if chars <= 0 {
		chars = DefaultChars
	}
	sizes, total, fingerprint, err := measure(lists)
	if err != nil {
		return nil, err
	}

	offsets, err := startOffsets(req, lists, fingerprint)
	if err != nil {
		return nil, err
	}

	// The document with every list empty is the base every window adds to.
	for _, l := range lists {
		l.set(0, 0)
	}
	base, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	// A whole answer carries no page fields: it fits when the base, the elements and their commas do.
	if total == 0 || (req.Cursor == "" && len(base)+sumAll(sizes)+total <= chars && noHeads(lists, sizes)) {
		return whole(doc, lists)
	}
	room := chars - len(base) - Reserve

	// Fill each list from its offset, whole elements in order, while they fit.
	ends := make([]int, len(lists))
	shown := 0
	full := false
	for k, l := range lists {
		start := offsets[k]
		end := start
		limit := l.n
		if req.Cursor == "" && l.head >= 0 {
			limit = min(l.n, l.head)
		}
		for i := start; i < limit && !full; i++ {
			need := sizes[k][i] + 1
			if need > room && shown == 0 && l.cut != nil {
				// One element larger than a whole page: shrink it to the page.
				if v, ok := l.cut(i, room-1); ok {
					if js, err := json.Marshal(v); err == nil && len(js)+1 <= room {
						l.replace(i, v)
						need = len(js) + 1
					}
				}
			}
			if need > room && shown > 0 {
				full = true
				break
			}
			room -= need
			end = i + 1
			shown++
		}
		ends[k] = end
		l.set(start, end)
	}
	js, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	// A document whose other fields grow with the window (a map keyed by the listed projects)
	// may still be over: give back elements from the end until it fits, keeping at least one.
	for len(js)+Reserve > chars && shown > 1 {
		k := len(lists) - 1
		for ends[k] == offsets[k] {
			k--
		}
		ends[k]--
		shown--
		lists[k].set(offsets[k], ends[k])
		if js, err = json.Marshal(doc); err != nil {
			return nil, err
		}
	}
	page := Page{Total: total, Omitted: total - shown}
	for k, l := range lists {
		if ends[k] < l.n && !req.Final {
			q := req.Next
			if q.Tool == "" {
				q = req.Question
			}
			page.NextCursor = encodeCursor(cursor{Q: q.hash(), F: fingerprint, O: ends})
			break
		}
	}
	return withPage(js, page)
}

// measure encodes every element of the lists once: their sizes, how many there are, and a
// fingerprint of them all that a cursor carries, so that a cursor into another answer is stale.
func measure(lists []List) (sizes [][]int, total int, fingerprint string, err error) {
	sizes = make([][]int, len(lists))
	fp := sha256.New()
	for k, l := range lists {
		sizes[k] = make([]int, l.n)
		fmt.Fprintf(fp, "%s:%d\n", l.name, l.n)
		for i := range l.n {
			js, err := json.Marshal(l.item(i))
			if err != nil {
				return nil, 0, "", fmt.Errorf("encode %s[%d]: %w", l.name, i, err)
			}
			sizes[k][i] = len(js)
			fp.Write(js)
			fp.Write([]byte{'\n'})
		}
		total += l.n
	}
	return sizes, total, fmt.Sprintf("%x", fp.Sum(nil)[:8]), nil
}

// startOffsets answers where each list's window starts: at 0 for a first page, else where the
// request's cursor says, once it is checked to belong to this question and this answer.
func startOffsets(req Request, lists []List, fingerprint string) ([]int, error) {
	if req.Cursor == "" {
		return make([]int, len(lists)), nil
	}
	c, err := decodeCursor(req.Cursor)
	if err != nil {
		return nil, err
	}
	if c.Q != req.Question.hash() {
		return nil, &CursorError{Msg: "argument \"cursor\" belongs to another question: call again with the arguments it came from"}
	}
	if c.F != fingerprint || len(c.O) != len(lists) {
		return nil, stale()
	}
	for k, o := range c.O {
		if o < 0 || o > lists[k].n {
			return nil, stale()
		}
	}
	return c.O, nil
}

func stale() error {
	return &CursorError{Msg: "argument \"cursor\" is stale: the answer changed since it was given; call again without cursor"}
}

func sumAll(sizes [][]int) int {
	n := 0
	for _, s := range sizes {
		for _, v := range s {
			n += v
		}
	}
	return n
}

// noHeads reports whether no list's head cuts its first page.
func noHeads(lists []List, sizes [][]int) bool {
	for k, l := range lists {
		if l.head >= 0 && l.head < len(sizes[k]) {
			return false
		}
	}
	return true
}

// whole answers doc with every list whole: the document as the CLI prints it.
func whole(doc any, lists []List) (json.RawMessage, error) {
	for _, l := range lists {
		l.set(0, l.n)
	}
	return json.Marshal(doc)
}

// withPage adds the page fields to the top-level object js.
func withPage(js []byte, p Page) (json.RawMessage, error) {
	js = bytes.TrimSpace(js)
	if len(js) < 2 || js[0] != '{' || js[len(js)-1] != '}' {
		return nil, fmt.Errorf("a windowed answer must be a JSON object")
	}
	var b bytes.Buffer
	b.Grow(len(js) + Reserve)
	b.Write(js[:len(js)-1])
	if len(js) > 2 {
		b.WriteByte(',')
	}
	if p.NextCursor != "" {
		b.WriteString(`"nextCursor":`)
		b.WriteString(strconv.Quote(p.NextCursor))
		b.WriteByte(',')
	}
	// A document that counts its whole itself (searchDocs' total of matching sections) keeps its
	// own total.
	var keys map[string]json.RawMessage
	if json.Unmarshal(js, &keys) == nil {
		if _, ok := keys["total"]; ok {
			fmt.Fprintf(&b, `"omitted":%d}`, p.Omitted)
			return b.Bytes(), nil
		}
	}
	fmt.Fprintf(&b, `"total":%d,"omitted":%d}`, p.Total, p.Omitted)
	return b.Bytes(), nil
}
