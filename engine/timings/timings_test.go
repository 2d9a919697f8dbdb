package timings

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/engine/store"
)

// What Write writes, Read reads back the same; each line stays small.
func TestWriteRead(t *testing.T) {
	at := time.UnixMilli(1796627051000)
	ests := []store.Estimate{
		{TaskID: "@scope/web-app#build:production", P50: 123456 * time.Millisecond, HasP50: true, PeakRSSBytes: 3 << 30, MeasuredAt: at},
		{TaskID: "lib#test", PeakRSSBytes: 1 << 20, MeasuredAt: at},
	}
	var b bytes.Buffer
	if _, err := Write(&b, ests); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if len(l) > 200 {
			t.Errorf("a line of %d bytes: %s", len(l), l)
		}
	}
	got, err := Read(&b, "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].TaskID != ests[0].TaskID || got[0].P50 != ests[0].P50 || !got[0].HasP50 ||
		got[1].HasP50 || got[1].PeakRSSBytes != 1<<20 || !got[1].MeasuredAt.Equal(at) {
		t.Errorf("read back %+v, want %+v", got, ests)
	}
}

// A file that is not a timings file, in any line, is refused by name and line.
func TestReadRefuses(t *testing.T) {
	const head = `{"vxHistory":1}` + "\n"
	for _, c := range []struct{ text, want string }{
		{"", `f: empty: want a {"vxHistory":1} line first`},
		{"{}\n", `f:1: not a vx timings file`},
		{`{"vxHistory":3}`, "f:1: timings file version 3: this vx reads version 1"},
		{head + `{"task":"a#b","p50Ms":1,"peakRssBytes":1,"at":1,"x":1}`, `f:2: want {"task":…`},
		{head + `{"task":"a#b","p50Ms":-1,"peakRssBytes":1,"at":1}`, "f:2: task a#b: p50Ms and peakRssBytes want a number from 0"},
		{head + `{"task":"a#b","peakRssBytes":1}`, "f:2: task a#b: p50Ms and peakRssBytes want a number from 0, at a time after 1970"},
		{head + `{"task":"a b#c","peakRssBytes":1,"at":1}`, `f:2: task "a b#c": want a task id`},
		{head + `{"task":"a#b","peakRssBytes":1,"at":1} {}`, "f:2: want"},
		{head + "\n" + strings.Repeat("x", MaxLine+1), "f:3: a line longer than 1024 bytes"},
	} {
		_, err := Read(strings.NewReader(c.text), "f")
		var m *Malformed
		if !errors.As(err, &m) || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want a *Malformed starting %q", c.text, err, c.want)
		}
	}
}

// A task listed twice (files joined) answers its newest estimate.
func TestReadNewestOfTwice(t *testing.T) {
	text := `{"vxHistory":1}
{"task":"a#b","p50Ms":5,"peakRssBytes":1,"at":20}
{"task":"a#b","p50Ms":9,"peakRssBytes":1,"at":10}
`
	got, err := Read(strings.NewReader(text), "f")
	if err != nil || len(got) != 1 || got[0].P50 != 5*time.Millisecond {
		t.Errorf("got %+v (%v), want the estimate at 20", got, err)
	}
}
