package actor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// frames reads every frame of data, rendering an oversize line as "!N" (its size).
func frames(t *testing.T, r io.Reader, maxLine, bufSize int) []string {
	t.Helper()
	fr := newFrameReader(r, maxLine)
	if bufSize > 0 {
		fr = newFrameReaderSize(r, maxLine, bufSize)
	}
	var out []string
	for {
		line, err := fr.next()
		var long *frameTooLongError
		switch {
		case errors.As(err, &long):
			out = append(out, "!"+itoa(long.size))
		case err == io.EOF:
			return out
		case err != nil:
			t.Fatalf("next: %v", err)
		default:
			if len(line) > maxLine || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("frame %q breaks the limit %d or holds a newline", line, maxLine)
			}
			out = append(out, string(line))
		}
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// want splits data as the frame reader must.
func want(data []byte, maxLine int) []string {
	var out []string
	pieces := strings.Split(string(data), "\n")
	if pieces[len(pieces)-1] == "" {
		pieces = pieces[:len(pieces)-1]
	}
	for _, p := range pieces {
		if len(p) > maxLine {
			out = append(out, "!"+itoa(int64(len(p))))
		} else {
			out = append(out, p)
		}
	}
	return out
}

func TestFrameReader(t *testing.T) {
	for _, tc := range []struct {
		data    string
		maxLine int
	}{
		{"", 8},
		{"\n", 8},
		{"a\nbb\n", 8},
		{"a\nno newline at end", 64},
		{"12345678\n123456789\nok\n", 8},
		{strings.Repeat("x", 100) + "\nafter\n" + strings.Repeat("y", 50), 16},
		{"\r\n{}\r\n", 8},
	} {
		for _, bufSize := range []int{0, 16} {
			got := frames(t, strings.NewReader(tc.data), tc.maxLine, bufSize)
			if w := want([]byte(tc.data), tc.maxLine); strings.Join(got, "|") != strings.Join(w, "|") {
				t.Errorf("%q (max %d, buf %d): got %q, want %q", tc.data, tc.maxLine, bufSize, got, w)
			}
		}
	}
}

func TestFrameReaderKeepsReadError(t *testing.T) {
	boom := errors.New("boom")
	fr := newFrameReader(io.MultiReader(strings.NewReader("last"), iotest.ErrReader(boom)), 64)
	if line, err := fr.next(); err != nil || string(line) != "last" {
		t.Fatalf("first: %q %v", line, err)
	}
	if _, err := fr.next(); !errors.Is(err, boom) {
		t.Fatalf("then: %v, want boom", err)
	}
	if _, err := fr.next(); !errors.Is(err, boom) {
		t.Fatalf("and again: %v, want boom", err)
	}
}

func TestIDFromPrefix(t *testing.T) {
	for prefix, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":"xxxx`: "7",
		` { "id" : "abc" , "params": [`:                                     `"abc"`,
		`{"jsonrpc":"2.0","method":"x","params":{"id":5,"s":"xxxx`:          "",
		`{"id":null,"method`:                                                "",
		`{"id":{"a":1}}`:                                                    "",
		`[{"id":1}`:                                                         "",
		`{"params":"xxxxxxxx`:                                               "",
	} {
		if got := string(idFromPrefix([]byte(prefix))); got != want {
			t.Errorf("idFromPrefix(%s) = %q, want %q", prefix, got, want)
		}
	}
}

func TestIDKey(t *testing.T) {
	same := [][2]string{{`7`, `7.0`}, {`7`, ` 7 `}, {`7`, `7e0`}, {`"a"`, `"\u0061"`}, {`-0`, `0`}}
	for _, p := range same {
		if idKey(json.RawMessage(p[0])) != idKey(json.RawMessage(p[1])) {
			t.Errorf("ids %s and %s differ", p[0], p[1])
		}
	}
	differ := [][2]string{{`7`, `"7"`}, {`1`, `2`}, {`9007199254740993`, `9007199254740992`}}
	for _, p := range differ {
		if idKey(json.RawMessage(p[0])) == idKey(json.RawMessage(p[1])) {
			t.Errorf("ids %s and %s collide", p[0], p[1])
		}
	}
}

func TestQueue(t *testing.T) {
	q := newQueue[int]()
	for i := range 5 {
		q.push(i)
	}
	if v, ok := q.pop(); !ok || v != 0 {
		t.Fatalf("pop = %d %v", v, ok)
	}
	all, ok := q.popAll(nil)
	if !ok || len(all) != 4 || all[0] != 1 || all[3] != 4 {
		t.Fatalf("popAll = %v %v", all, ok)
	}
	done := make(chan int)
	go func() {
		v, _ := q.pop()
		done <- v
	}()
	q.push(9)
	if v := <-done; v != 9 {
		t.Fatalf("blocked pop got %d", v)
	}
	q.push(10)
	q.close()
	if q.push(11) {
		t.Fatal("push after close accepted")
	}
	if v, ok := q.pop(); !ok || v != 10 {
		t.Fatalf("pop after close = %d %v, want what was left", v, ok)
	}
	if _, ok := q.pop(); ok {
		t.Fatal("pop on a closed empty queue")
	}
	if _, ok := q.popAll(nil); ok {
		t.Fatal("popAll on a closed empty queue")
	}
}

// FuzzFrameReader checks the frame reader against strings.Split for any input,
// limit and read pattern, and that every frame parses without panicking.
func FuzzFrameReader(f *testing.F) {
	for _, seed := range []string{
		"", "\n", "{}\n", `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n",
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},5]` + "\nnot json\n",
		strings.Repeat("x", 300) + "\nshort\n", `{"id":7,"params":"` + strings.Repeat("p", 100),
		"\r\n\r\n", `{"jsonrpc":"2.0","id":null,"method":"x","params":7}`,
	} {
		f.Add([]byte(seed), uint8(64), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, maxLine, mode uint8) {
		limit := 1 + int(maxLine)
		var r io.Reader = bytes.NewReader(data)
		switch mode % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		got := frames(t, r, limit, 16)
		if w := want(data, limit); strings.Join(got, "\x00") != strings.Join(w, "\x00") || len(got) != len(w) {
			t.Fatalf("frames %q, want %q", got, w)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			msg, id, err, _ := parseMessage(line)
			if id != nil && !validID(id) {
				t.Fatalf("parseMessage(%q) returned invalid id %s", line, id)
			}
			if err == nil && msg.id != nil {
				_ = idKey(msg.id)
			}
			if p := idFromPrefix(line); p != nil && !validID(p) {
				t.Fatalf("idFromPrefix(%q) = %s", line, p)
			}
		}
	})
}
