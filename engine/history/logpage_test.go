package history

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/internal/jsonquote"
)

// recordLog stores log as p#t's log in a run of its own and answers the store and the run id.
func recordLog(t testing.TB, log string) (*store.Store, string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blob, err := st.CAS().Put([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	id := store.NewRunID(time.Now())
	if err := st.BeginRun(ctx, store.Run{ID: id, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	e := exec(id, "t", store.StatusFailed, "k", time.Second)
	e.LogBlob, e.LogSource = blob, LogFromFailure
	if err := st.Record(ctx, store.Batch{Executions: []store.Execution{e}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, id, store.RunFailed, 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	return st, id
}

// readAllPages follows the pages of p#t's log from the start and answers them.
func readAllPages(t testing.TB, st *store.Store, m *mask.Masker, maxChars int) (pages []string, whole string) {
	t.Helper()
	ctx := context.Background()
	log, err := ReadLogEnds(ctx, st, "p#t", "", m, 1<<30) // read whole
	if err != nil {
		t.Fatal(err)
	}
	if log.Ends != nil {
		t.Fatalf("a log of %d bytes was read by its ends", log.Ends.Len)
	}
	pos := StartLog(log)
	var b strings.Builder
	// The same room for every page, as a server keeps it: each page's output is taken before the
	// next page writes over it.
	scratch, text := make([]byte, 0, 4096), make([]byte, 0, 4096)
	for {
		p, err := ReadLogPage(ctx, st, "p#t", pos, m, maxChars, scratch, text)
		if err != nil {
			t.Fatal(err)
		}
		if p.Offset != b.Len() {
			t.Fatalf("page %d says it starts at %d, the pages before it hold %d bytes", len(pages), p.Offset, b.Len())
		}
		if p.Verbatim && jsonquote.Verbatim(p.Output) != len(p.Output) {
			t.Fatalf("page %d says it needs no JSON escape, but holds %q", len(pages), p.Output[jsonquote.Verbatim(p.Output):][:1])
		}
		pages = append(pages, string(p.Output))
		b.Write(p.Output)
		if p.Next == nil {
			break
		}
		if len(pages) > 1<<16 {
			t.Fatal("the pages never end")
		}
		pos = *p.Next
	}
	return pages, log.Whole()
}

// The pages of a log, joined, are Log's whole output, whatever the log holds: escapes, progress
// bars rewritten by carriage returns, long lines, multi-byte characters, secrets at every cut;
// and each page keeps to its budget.
func TestLogPagesJoinToTheWhole(t *testing.T) {
	const secret = "s3cr3t-value-42"
	var bar strings.Builder
	for i := range 100 {
		fmt.Fprintf(&bar, "progress %d%%\r", i)
	}
	logs := map[string]string{
		"one line":     strings.Repeat("abcdefghij", 3000),
		"lines":        strings.Repeat("a line of text\n", 500),
		"bars":         "start\n" + bar.String() + "done\n" + bar.String() + "\n",
		"escapes":      strings.Repeat("\x1b[31merror\x1b[0m: \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x07bell\r\n", 150),
		"osc newline":  "a\x1b]0;title\nstill title\x07b\nc\n",
		"unicode":      strings.Repeat("ünïcödé ❯ 日本語 ", 400),
		"secrets":      strings.Repeat("token="+secret+" and more ", 400),
		"trailing cr":  strings.Repeat("x", 3000) + "\r",
		"html":         strings.Repeat("<a href=\"x\">&amp;</a>\t", 300),
		"empty lines":  strings.Repeat("\n", 1000),
		"crlf and bar": "one\r\ntwo\rTWO\r\nthree",
	}
	m := mask.New(secret)
	for name, log := range logs {
		t.Run(name, func(t *testing.T) {
			st, _ := recordLog(t, log)
			for _, maxChars := range []int{61, 1000, 40_000} {
				pages, whole := readAllPages(t, st, m, maxChars)
				if got := strings.Join(pages, ""); got != whole {
					t.Fatalf("budget %d: %d pages join to %d bytes that differ from the whole (%d bytes)\n got %.300q\nwant %.300q",
						maxChars, len(pages), len(got), len(whole), got, whole)
				}
				for i, p := range pages {
					js := jsonquote.Append(nil, p) // as getTaskLog writes it
					if len(js) > maxChars+64 && i < len(pages) {
						t.Fatalf("budget %d: page %d takes %d characters", maxChars, i, len(js))
					}
					if strings.Contains(p, secret[:8]) {
						t.Fatalf("page %d shows part of the secret: %q", i, p)
					}
				}
			}
		})
	}
}

// ReadLogEnds keeps only the ends of a long plain log, exactly the whole's; a log it cannot read
// so (escapes to remove, a secret to mask, a short one) it answers whole, as Log does.
func TestLogEnds(t *testing.T) {
	ctx := context.Background()
	const keep = 80_000
	plain := strings.Repeat("one line of output ✓\n", 20_000)
	st, _ := recordLog(t, plain)
	log, err := ReadLogEnds(ctx, st, "p#t", "", mask.New(), keep)
	if err != nil || log.Ends == nil || log.Blob == "" {
		t.Fatalf("a %d-byte plain log: %v, ends %v", len(plain), err, log.Ends)
	}
	e := log.Ends
	if e.Head != plain[:keep] || e.Tail != plain[len(plain)-keep:] || e.Len != len(plain) || e.Newlines != 20_000 {
		t.Fatalf("ends: head %d, tail %d, len %d, %d newlines", len(e.Head), len(e.Tail), e.Len, e.Newlines)
	}
	whole, err := Log(ctx, st, "p#t", "", mask.New())
	if err != nil {
		t.Fatal(err)
	}
	if log.Text != whole.Text || *log.Source != *whole.Source || log.Status != whole.Status {
		t.Fatalf("by its ends %d bytes kept of %d, whole %d of %d", len(log.Output), log.OutputBytes, len(whole.Output), whole.OutputBytes)
	}
	if got := StartLog(log); got.Whole != len(plain) || got.Blob != log.Blob {
		t.Fatalf("the first position: %+v", got)
	}

	for name, tc := range map[string]struct {
		log string
		m   *mask.Masker
	}{
		"escapes":  {strings.Repeat("\x1b[1mbold\x1b[0m\n", 30_000), mask.New()},
		"a secret": {strings.Repeat("the token s3cr3t-value leaked\n", 20_000), mask.New("s3cr3t-value")},
		"short":    {strings.Repeat("x", 4*keep), mask.New()},
	} {
		st, _ := recordLog(t, tc.log)
		log, err := ReadLogEnds(ctx, st, "p#t", "", tc.m, keep)
		if err != nil || log.Ends != nil {
			t.Fatalf("%s: %v, read by its ends", name, err)
		}
		whole, err := Log(ctx, st, "p#t", "", tc.m)
		if err != nil || log.Whole() != whole.Whole() || log.Whole() == "" || strings.Contains(log.Whole(), "s3cr3t") {
			t.Fatalf("%s: %v, the whole differs from Log's or holds the secret", name, err)
		}
	}
}
