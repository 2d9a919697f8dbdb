package window

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

type doc struct {
	Name  string   `json:"name"`
	A     []string `json:"a"`
	B     []item   `json:"b"`
	Count int      `json:"count"`
}

type item struct {
	ID   int    `json:"id"`
	Text string `json:"text"`
}

func makeDoc(na, nb, textLen int) doc {
	d := doc{Name: "x", Count: na + nb}
	for i := range na {
		d.A = append(d.A, fmt.Sprintf("a-%04d", i))
	}
	for i := range nb {
		d.B = append(d.B, item{ID: i, Text: strings.Repeat("t", textLen)})
	}
	return d
}

// smallBudget is the least budget vx allows (graph.MinAnswerChars).
const smallBudget = 8_000

type answer struct {
	doc
	NextCursor *string `json:"nextCursor"`
	Total      *int    `json:"total"`
	Omitted    *int    `json:"omitted"`
}

// follow answers every page of the question from the first, and checks each against the budget.
func follow(t *testing.T, mk func() doc, chars int, heads ...int) (as []string, bs []int, pages int) {
	t.Helper()
	q := Question{Tool: "t", Args: json.RawMessage(`{"x":1}`)}
	cur := ""
	for {
		d := mk()
		la, lb := Of("a", &d.A), Of("b", &d.B)
		if len(heads) == 2 {
			la, lb = la.Head(heads[0]), lb.Head(heads[1])
		}
		js, err := Fit(&d, Request{Chars: chars, Question: q, Cursor: cur}, la, lb)
		if err != nil {
			t.Fatal(err)
		}
		if len(js) > chars {
			t.Fatalf("page %d is %d characters, over the budget of %d", pages, len(js), chars)
		}
		var ans answer
		if err := json.Unmarshal(js, &ans); err != nil {
			t.Fatalf("page %d: %v: %s", pages, err, js)
		}
		pages++
		as = append(as, ans.A...)
		for _, b := range ans.B {
			bs = append(bs, b.ID)
		}
		if ans.NextCursor == nil {
			return as, bs, pages
		}
		if ans.Total == nil || *ans.Total != len(mk().A)+len(mk().B) {
			t.Fatalf("page %d: total %v, want the whole's count", pages, ans.Total)
		}
		cur = *ans.NextCursor
		if pages > 10000 {
			t.Fatal("the cursors never end")
		}
	}
}

func checkOnce(t *testing.T, as []string, bs []int, na, nb int) {
	t.Helper()
	if len(as) != na || len(bs) != nb {
		t.Fatalf("followed %d a and %d b, want %d and %d", len(as), len(bs), na, nb)
	}
	for i, a := range as {
		if a != fmt.Sprintf("a-%04d", i) {
			t.Fatalf("a[%d] = %s: an element is missing or repeated", i, a)
		}
	}
	for i, b := range bs {
		if b != i {
			t.Fatalf("b[%d] = %d: an element is missing or repeated", i, b)
		}
	}
}

func TestWholeAnswerIsTheDocument(t *testing.T) {
	d := makeDoc(3, 2, 5)
	want, _ := json.Marshal(d)
	js, err := Fit(&d, Request{Question: Question{Tool: "t"}}, Of("a", &d.A), Of("b", &d.B))
	if err != nil {
		t.Fatal(err)
	}
	if string(js) != string(want) {
		t.Fatalf("a whole answer must be the document unchanged:\n got %s\nwant %s", js, want)
	}
}

func TestCursorsYieldEveryElementOnce(t *testing.T) {
	for _, tc := range []struct{ na, nb, text, chars int }{
		{2000, 0, 0, smallBudget},
		{0, 3000, 40, smallBudget},
		{1500, 1500, 100, DefaultChars},
		{1, 1, 20000, smallBudget}, // b's one element is larger than a page: it gets a page of its own
	} {
		t.Run(fmt.Sprintf("%d+%d", tc.na, tc.nb), func(t *testing.T) {
			mk := func() doc { return makeDoc(tc.na, tc.nb, tc.text) }
			as, bs, pages := follow(t, mk, tc.chars+tc.text)
			checkOnce(t, as, bs, tc.na, tc.nb)
			if tc.na+tc.nb > 100 && pages < 2 {
				t.Fatalf("%d pages for a list over the budget", pages)
			}
		})
	}
}

func TestHeadsAnswerASummaryFirst(t *testing.T) {
	mk := func() doc { return makeDoc(300, 300, 10) }
	d := mk()
	js, err := Fit(&d, Request{Question: Question{Tool: "t"}}, Of("a", &d.A).Head(3), Of("b", &d.B).Head(0))
	if err != nil {
		t.Fatal(err)
	}
	var ans answer
	if err := json.Unmarshal(js, &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.A) != 3 || len(ans.B) != 0 || ans.NextCursor == nil || *ans.Omitted != 597 {
		t.Fatalf("first page: %d a, %d b, omitted %v; want 3, 0, 597 and a cursor", len(ans.A), len(ans.B), ans.Omitted)
	}
	as, bs, _ := follow(t, mk, DefaultChars, 3, 0)
	checkOnce(t, as, bs, 300, 300)
}

func TestCutElementFitsItsPage(t *testing.T) {
	d := makeDoc(0, 1, 50000)
	cut := func(v item, chars int) (item, bool) {
		v.Text = v.Text[:max(0, chars-40)]
		return v, true
	}
	js, err := Fit(&d, Request{Chars: smallBudget, Question: Question{Tool: "t"}}, OfCut("b", &d.B, cut))
	if err != nil {
		t.Fatal(err)
	}
	if len(js) > smallBudget {
		t.Fatalf("%d characters, over %d", len(js), smallBudget)
	}
	if !strings.Contains(string(js), `"omitted":0`) {
		t.Fatalf("a cut element still counts as answered: %s", js[len(js)-80:])
	}
}

func TestBadCursorsAreRefusedByName(t *testing.T) {
	q := Question{Tool: "t", Args: json.RawMessage(`{"x":1}`)}
	d := makeDoc(6000, 0, 0)
	js, err := Fit(&d, Request{Question: q}, Of("a", &d.A))
	if err != nil {
		t.Fatal(err)
	}
	var ans answer
	_ = json.Unmarshal(js, &ans)
	if ans.NextCursor == nil {
		t.Fatal("no cursor")
	}
	for name, tc := range map[string]struct {
		q      Question
		cursor string
		mk     func() doc
		want   string
	}{
		"malformed":        {q, "not-a-cursor", func() doc { return makeDoc(6000, 0, 0) }, "not a cursor this server gave"},
		"another question": {Question{Tool: "t", Args: json.RawMessage(`{"x":2}`)}, *ans.NextCursor, func() doc { return makeDoc(6000, 0, 0) }, "another question"},
		"another tool":     {Question{Tool: "u", Args: json.RawMessage(`{"x":1}`)}, *ans.NextCursor, func() doc { return makeDoc(6000, 0, 0) }, "another question"},
		"stale":            {q, *ans.NextCursor, func() doc { return makeDoc(6001, 0, 0) }, "stale"},
	} {
		t.Run(name, func(t *testing.T) {
			d := tc.mk()
			_, err := Fit(&d, Request{Question: tc.q, Cursor: tc.cursor}, Of("a", &d.A))
			var ce *CursorError
			if !errors.As(err, &ce) || !strings.Contains(ce.Msg, tc.want) || !strings.Contains(ce.Msg, `"cursor"`) {
				t.Fatalf("got %v, want a CursorError naming cursor and saying %q", err, tc.want)
			}
		})
	}
	// The same question spelled with its keys in another order keeps its cursor.
	d = makeDoc(6000, 0, 0)
	if _, err := Fit(&d, Request{Question: Question{Tool: "t", Args: json.RawMessage(`{ "x" : 1, "cursor": "c"}`)}, Cursor: *ans.NextCursor}, Of("a", &d.A)); err != nil {
		t.Fatal(err)
	}
}
