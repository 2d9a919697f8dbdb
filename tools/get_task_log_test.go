package tools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/session"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/workspace"
)

// logWorkspace is a workspace whose history holds one failed run of app#test with log as its log.
func logWorkspace(t testing.TB, log string) (*Deps, string) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "vx.workspace.ts"), []byte("export default { projects: [] }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(dir, ".vx"), store.Options{SharedDir: sharedDirOf(dir)})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	blob, err := st.CAS().Put([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	id := store.NewRunID(time.Now())
	if err := st.BeginRun(ctx, store.Run{ID: id, Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	code := 1
	e := store.Execution{RunID: id, TaskID: "app#test", Project: "app", Task: "test", Status: store.StatusFailed,
		ExitCode: &code, LogBlob: blob, LogSource: history.LogFromFailure}
	if err := st.Record(ctx, store.Batch{Executions: []store.Execution{e}}); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, id, store.RunFailed, 1, time.Now()); err != nil {
		t.Fatal(err)
	}
	d := testDeps(t, session.Options{Loader: workspace.NewLoader(workspace.Options{Dir: dir})})
	return d, dir
}

// readLogPages follows getTaskLog's cursors through the whole log and answers the pages' outputs
// joined, and how many pages there were.
func readLogPages(t testing.TB, e *Deps) (string, int) {
	t.Helper()
	var b strings.Builder
	pages := 0
	followLogPages(t, e, func(js []byte) string {
		var page struct {
			Output     string `json:"output"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(js, &page); err != nil {
			t.Fatal(err)
		}
		if pages > 0 {
			b.WriteString(page.Output)
		}
		pages++
		return page.NextCursor
	})
	return b.String(), pages
}

// followLogPages calls getTaskLog without a cursor, then with each answer's nextCursor, which
// next reads off the answer, until an answer has none.
func followLogPages(t testing.TB, e *Deps, next func(js []byte) string) {
	gt := e.getTaskLog()
	args := map[string]any{"taskId": "app#test"}
	for page := 0; ; page++ {
		raw, _ := json.Marshal(args)
		js, err := gt.Call(context.Background(), &tool.Call{Args: raw})
		if err != nil {
			t.Fatal(err)
		}
		if len(js) > 40_000 {
			t.Fatalf("page %d is %d characters, over the budget", page, len(js))
		}
		cursor := next(js)
		if cursor == "" {
			return
		}
		args["cursor"] = cursor
	}
}

// The pages of a long one-line log, read through getTaskLog's cursors, join to the whole output.
func TestTaskLogPagesJoinToTheWhole(t *testing.T) {
	log := strings.Repeat("0123456789abcdef<&>", 60_000) // 1.1 MB, no newline
	e, _ := logWorkspace(t, log)
	got, pages := readLogPages(t, e)
	if got != log {
		t.Fatalf("%d pages joined to %d bytes, want the %d of the log", pages, len(got), len(log))
	}
}

// A page reads the stored log from its cursor's offset on, never what came before it: with the
// bytes before the cursor overwritten on disk, the next page is still answered, and right. (Each
// page read and planed the whole log again: a 32 MiB one-line log took 325 s to page through.)
func TestTaskLogPageReadsFromItsOffset(t *testing.T) {
	log := strings.Repeat("0123456789", 20_000) // 200 KB, one line
	e, dir := logWorkspace(t, log)
	gt := e.getTaskLog()
	ask := func(args map[string]any) (string, string, int) {
		t.Helper()
		raw, _ := json.Marshal(args)
		out, err := gt.Call(context.Background(), &tool.Call{Args: raw})
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Output     string `json:"output"`
			NextCursor string `json:"nextCursor"`
			Offset     int    `json:"offset"`
		}
		if err := json.Unmarshal(out, &page); err != nil {
			t.Fatal(err)
		}
		return page.Output, page.NextCursor, page.Offset
	}
	_, cursor, _ := ask(map[string]any{"taskId": "app#test"})
	out, cursor, _ := ask(map[string]any{"taskId": "app#test", "cursor": cursor})
	if cursor == "" || out != log[:len(out)] {
		t.Fatalf("the first page of the whole is %.80q…, cursor %q", out, cursor)
	}
	// Overwrite what the pages so far answered, in the stored log.
	sum := sha256.Sum256([]byte(log))
	path := store.NewCAS(filepath.Join(sharedDirOf(dir), "cas")).Path(hex.EncodeToString(sum[:]))
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("the stored log: %v", err)
	}
	if _, err := f.WriteAt([]byte(strings.Repeat("#", len(out))), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	next, _, offset := ask(map[string]any{"taskId": "app#test", "cursor": cursor})
	if offset != len(out) || next == "" || next != log[offset:offset+len(next)] {
		t.Fatalf("the page after it, at %d: %.80q…, want the log from %d", offset, next, len(out))
	}
}

// A page's cursor reads the stored log only while it is still the task's log: once its blob is
// gone (a prune) the next page is refused as stale, though an earlier page remembered the log;
// a cursor made to name another stored blob, or another run, is refused before anything is read;
// and the pages, with the server's buffer pool recycling every answer, still join to the whole.
func TestTaskLogCursorIsOnlyOfItsLog(t *testing.T) {
	log := strings.Repeat("0123456789", 20_000) // 200 KB, one line
	e, dir := logWorkspace(t, log)
	gt := e.getTaskLog()
	buffers := &tool.Buffers{}
	ask := func(args map[string]any) (map[string]any, error) {
		t.Helper()
		raw, _ := json.Marshal(args)
		out, err := gt.Call(context.Background(), &tool.Call{Args: raw, Buffers: buffers})
		if err != nil {
			return nil, err
		}
		var page map[string]any
		if err := json.Unmarshal(out, &page); err != nil {
			t.Fatal(err)
		}
		buffers.Put(out)
		return page, nil
	}
	first, err := ask(map[string]any{"taskId": "app#test"})
	if err != nil {
		t.Fatal(err)
	}
	var joined strings.Builder
	cursor := first["nextCursor"].(string)
	for range 2 {
		page, err := ask(map[string]any{"taskId": "app#test", "cursor": cursor})
		if err != nil {
			t.Fatal(err)
		}
		joined.WriteString(page["output"].(string))
		cursor = page["nextCursor"].(string)
	}
	if got := joined.String(); got != log[:len(got)] {
		t.Fatalf("two pages read %.80q…, not the log's start", got)
	}

	// The cursor, changed to name another stored blob (as a tampering client could), with its
	// question digest kept.
	var c map[string]any
	raw, _ := base64.RawURLEncoding.DecodeString(cursor)
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(dir, ".vx"), store.Options{SharedDir: sharedDirOf(dir)})
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.CAS().Put([]byte("a blob that is no log of app#test"))
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	for field, value := range map[string]string{"blob": other, "run": "20990101-000000-000000000"} {
		forged := map[string]any{}
		for k, v := range c {
			forged[k] = v
		}
		pos := map[string]any{}
		for k, v := range c["log"].(map[string]any) {
			pos[k] = v
		}
		pos[field] = value
		forged["log"] = pos
		js, _ := json.Marshal(forged)
		_, err := ask(map[string]any{"taskId": "app#test", "cursor": base64.RawURLEncoding.EncodeToString(js)})
		if err == nil || !strings.Contains(err.Error(), "stale") {
			t.Errorf("a cursor whose %s is changed: %v, want it refused as stale", field, err)
		}
	}

	// The log's blob pruned: its remembered cursor is stale.
	sum := sha256.Sum256([]byte(log))
	if err := os.Remove(store.NewCAS(filepath.Join(sharedDirOf(dir), "cas")).Path(hex.EncodeToString(sum[:]))); err != nil {
		t.Fatal(err)
	}
	if _, err := ask(map[string]any{"taskId": "app#test", "cursor": cursor}); err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("a page of a pruned log: %v, want it refused as stale", err)
	}
}

// BenchmarkTaskLog32MiBPaged reads a 32 MiB one-line log whole through getTaskLog's pages (first
// page, then every nextCursor), as the server answers them: the client here reads only each
// page's nextCursor (TestTaskLogPagesJoinToTheWhole checks that the pages join to the whole);
// BenchmarkTaskLog32MiBWhole reads it as `vx last --log` does. Each page reads the stored log from
// its cursor's offset, so a page costs what its own bytes cost.
func BenchmarkTaskLog32MiBPaged(b *testing.B) {
	e, _ := logWorkspace(b, strings.Repeat("x", 32<<20))
	b.ResetTimer()
	for b.Loop() {
		pages, last := 0, 0
		followLogPages(b, e, func(js []byte) string {
			pages++
			last = len(js)
			return cursorOf(b, js)
		})
		if pages < 32<<20/40_000 || last == 0 {
			b.Fatalf("%d pages", pages)
		}
		b.ReportMetric(float64(pages), "pages")
	}
}

// BenchmarkTaskLog32MiBPagedDecoded is BenchmarkTaskLog32MiBPaged with the client's cost: every
// page decoded whole and the outputs joined.
func BenchmarkTaskLog32MiBPagedDecoded(b *testing.B) {
	e, _ := logWorkspace(b, strings.Repeat("x", 32<<20))
	b.ResetTimer()
	for b.Loop() {
		got, pages := readLogPages(b, e)
		if len(got) != 32<<20 {
			b.Fatalf("%d pages hold %d bytes", pages, len(got))
		}
		b.ReportMetric(float64(pages), "pages")
	}
}

// cursorOf reads an answer's nextCursor without decoding the rest ("" when it has none): the
// cursor is base64url, so the first quote after the key ends it.
func cursorOf(t testing.TB, js []byte) string {
	const key = `"nextCursor":"`
	i := bytes.LastIndex(js, []byte(key))
	if i < 0 {
		return ""
	}
	rest := js[i+len(key):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		t.Fatalf("an answer's nextCursor does not end: %.80s", rest)
	}
	return string(rest[:end])
}

func BenchmarkTaskLog32MiBWhole(b *testing.B) {
	e, dir := logWorkspace(b, strings.Repeat("x", 32<<20))
	_ = e
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		st, err := store.OpenReadOnlyShared(ctx, filepath.Join(dir, ".vx"), sharedDirOf(dir))
		if err != nil {
			b.Fatal(err)
		}
		log, err := history.Log(ctx, st, "app#test", "", nil)
		st.Close()
		if err != nil || len(log.Whole()) != 32<<20 {
			b.Fatalf("%v, %d bytes", err, len(log.Whole()))
		}
	}
}

// A long log that is plain text already is answered from its ends alone (its first page reads it
// once, keeping a few dozen KiB, where it kept three copies of the whole), and that first page is
// the one the whole answers: the same cut, lengths and line count, at line breaks and runes alike.
// A log with escapes is read whole as before (a secret to mask too: TestLogEnds); one whose
// stored bytes are not its hash's answers no log, as `vx last --log` does.
func TestTaskLogFirstPageByItsEnds(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, log string
		ends      bool
	}{
		{"one line", strings.Repeat("0123456789abcdef<&>", 60_000), true},
		{"lines", strings.Repeat("a line of a test runner's output ✓\t\"quoted\"\n", 30_000), true},
		{"runes at the cuts", strings.Repeat("é❯", 200_000), true},
		{"short", strings.Repeat("short\n", 10_000), false},
		{"escapes", strings.Repeat("\x1b[31mred\x1b[0m line\r\n", 50_000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, dir := logWorkspace(t, tc.log)
			raw, _ := json.Marshal(map[string]any{"taskId": "app#test"})
			got, err := e.getTaskLog().Call(ctx, &tool.Call{Args: raw})
			if err != nil {
				t.Fatal(err)
			}
			st, err := store.Open(ctx, filepath.Join(dir, ".vx"), store.Options{SharedDir: sharedDirOf(dir)})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			budget := e.budget(ctx)
			byEnds, err := history.ReadLogEnds(ctx, st, "app#test", "", e.secretsMasker(), budget+4<<10)
			if err != nil || (byEnds.Ends != nil) != tc.ends {
				t.Fatalf("read by its ends: %v (ends %v), want %v", err, byEnds.Ends != nil, tc.ends)
			}
			whole, err := history.ReadLogEnds(ctx, st, "app#test", "", e.secretsMasker(), 1<<30)
			if err != nil || whole.Ends != nil {
				t.Fatalf("read whole: %v", err)
			}
			want, err := e.logPage(&tool.Call{}, getTaskLogArgs{TaskID: "app#test"}.question(), whole, budget)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("the first page:\n%.300s…\nwhat the whole answers:\n%.300s…", got, want)
			}
			if !bytes.Contains(got, []byte(`"nextCursor"`)) {
				t.Fatalf("a long log's first page has no cursor: %.200s", got)
			}
		})
	}

	t.Run("a tampered log", func(t *testing.T) {
		log := strings.Repeat("0123456789abcdef\n", 60_000)
		e, dir := logWorkspace(t, log)
		sum := sha256.Sum256([]byte(log))
		path := store.NewCAS(filepath.Join(sharedDirOf(dir), "cas")).Path(hex.EncodeToString(sum[:]))
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte("#"), int64(len(log)/2)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		raw, _ := json.Marshal(map[string]any{"taskId": "app#test"})
		got, err := e.getTaskLog().Call(ctx, &tool.Call{Args: raw})
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Source *string `json:"source"`
			Output string  `json:"output"`
		}
		if err := json.Unmarshal(got, &page); err != nil || page.Source != nil || page.Output != "" {
			t.Fatalf("a log whose bytes are not its hash's: %.200s", got)
		}
	})
}
