// Package timings writes and reads the timings file (`vx history export FILE`, `vx history import
// FILE`): what the scheduler plans each task from — the p50 of its recent passing command runs
// and the largest peak RSS of them — carried from one machine's state folder to another's, so that
// a fresh CI runner starts the critical path first from its first run.
//
// The file is JSON lines: a header {"vxHistory":1}, then one line a task, sorted by task id:
//
//	{"task":"app#build","p50Ms":1234,"peakRssBytes":52428800,"at":1796627051000}
//
// at is when the newest run the estimate was measured from started (Unix milliseconds); p50Ms is
// absent for a task none of whose recent runs passed. An import keeps a task's estimate only
// where it is newer than the one the state folder holds, so importing a file twice, or files from
// several runners, keeps one estimate a task: the newest.
package timings

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/vzn/vx/engine/resources"
	"github.com/vzn/vx/engine/store"
)

// Version is the version of the file's layout this vx writes and reads.
const Version = 1

// MaxLine is the longest line an import reads; a longer one makes the file malformed.
const MaxLine = 1024

// header is the file's first line.
type header struct {
	VXHistory int `json:"vxHistory"`
}

// line is one task's estimate in the file.
type line struct {
	Task         string `json:"task"`
	P50Ms        *int64 `json:"p50Ms,omitempty"`
	PeakRSSBytes int64  `json:"peakRssBytes"`
	At           int64  `json:"at"`
}

// Exported says what Export wrote.
type Exported struct {
	File  string `json:"file"`
	Tasks int    `json:"tasks"`
	Bytes int    `json:"bytes"`
}

// Estimates answers what the state folder plans each task from: for a task with command runs
// here, the p50 and peak of its last resources.EstimateWindow of them, measured at the newest;
// for the others, the estimate carried from another machine, as it came. Sorted by task id.
func Estimates(ctx context.Context, st *store.Store) ([]store.Estimate, error) {
	ran, err := st.CommandRunTasks(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(ran))
	for id := range ran {
		ids = append(ids, id)
	}
	recent, err := st.RecentCommandRuns(ctx, ids, resources.EstimateWindow)
	if err != nil {
		return nil, err
	}
	p50s, peaks := resources.Estimates(recent)
	out := make([]store.Estimate, 0, len(ids))
	for _, id := range ids {
		p50, ok := p50s[id]
		out = append(out, store.Estimate{TaskID: id, P50: time.Duration(p50) * time.Millisecond, HasP50: ok,
			PeakRSSBytes: peaks[id], MeasuredAt: ran[id]})
	}
	carried, err := st.CarriedEstimates(ctx)
	if err != nil {
		return nil, err
	}
	for _, e := range carried {
		if _, ok := ran[e.TaskID]; !ok {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b store.Estimate) int { return strings.Compare(a.TaskID, b.TaskID) })
	return out, nil
}

// Write writes ests as a timings file to w; it answers the bytes written.
func Write(w io.Writer, ests []store.Estimate) (int, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(header{VXHistory: Version}); err != nil {
		return 0, err
	}
	for _, e := range ests {
		l := line{Task: e.TaskID, PeakRSSBytes: e.PeakRSSBytes, At: e.MeasuredAt.UnixMilli()}
		if e.HasP50 {
			ms := e.P50.Milliseconds()
			l.P50Ms = &ms
		}
		if err := enc.Encode(l); err != nil {
			return 0, err
		}
	}
	return w.Write(b.Bytes())
}

// Malformed is a timings file an import refuses: where, and what is wrong there.
type Malformed struct {
	File string
	// Line is the 1-based line; 0 for the file as a whole.
	Line   int
	Reason string
}

// Error names the file, the line, and the reason, on one line.
func (m *Malformed) Error() string {
	if m.Line == 0 {
		return fmt.Sprintf("%s: %s", m.File, m.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", m.File, m.Line, m.Reason)
}

// Read reads a timings file from r, named name in what it answers. A file that is not one, in
// any of its lines, is a *Malformed and nothing of it is answered. A task listed twice answers
// its newest estimate.
func Read(r io.Reader, name string) ([]store.Estimate, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 512), MaxLine+1) // a line and its newline
	byTask := map[string]store.Estimate{}
	n := 0
	for sc.Scan() {
		n++
		text := bytes.TrimSpace(sc.Bytes())
		if n == 1 {
			if err := readHeader(text); err != "" {
				return nil, &Malformed{File: name, Line: 1, Reason: err}
			}
			continue
		}
		if len(text) == 0 {
			continue
		}
		e, err := readLine(text)
		if err != "" {
			return nil, &Malformed{File: name, Line: n, Reason: err}
		}
		if old, ok := byTask[e.TaskID]; !ok || e.MeasuredAt.After(old.MeasuredAt) {
			byTask[e.TaskID] = e
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &Malformed{File: name, Line: n + 1, Reason: fmt.Sprintf("a line longer than %d bytes", MaxLine)}
		}
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if n == 0 {
		return nil, &Malformed{File: name, Reason: `empty: want a {"vxHistory":1} line first`}
	}
	out := make([]store.Estimate, 0, len(byTask))
	for _, e := range byTask {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b store.Estimate) int { return strings.Compare(a.TaskID, b.TaskID) })
	return out, nil
}

// readHeader checks the file's first line; it answers what is wrong, "" for nothing.
func readHeader(text []byte) string {
	var h header
	if err := strictJSON(text, &h); err != nil || h.VXHistory == 0 {
		return `not a vx timings file: want {"vxHistory":1} first`
	}
	if h.VXHistory != Version {
		return fmt.Sprintf("timings file version %d: this vx reads version %d", h.VXHistory, Version)
	}
	return ""
}

// readLine reads one task's line; it answers what is wrong, "" for nothing.
func readLine(text []byte) (store.Estimate, string) {
	var l line
	if err := strictJSON(text, &l); err != nil {
		return store.Estimate{}, fmt.Sprintf(`want {"task":…,"p50Ms":…,"peakRssBytes":…,"at":…}: %v`, err)
	}
	if !validTaskID(l.Task) {
		return store.Estimate{}, fmt.Sprintf("task %q: want a task id such as app#build", l.Task)
	}
	if (l.P50Ms != nil && *l.P50Ms < 0) || l.PeakRSSBytes < 0 || l.At <= 0 {
		return store.Estimate{}, fmt.Sprintf("task %s: p50Ms and peakRssBytes want a number from 0, at a time after 1970", l.Task)
	}
	e := store.Estimate{TaskID: l.Task, PeakRSSBytes: l.PeakRSSBytes, MeasuredAt: time.UnixMilli(l.At)}
	if l.P50Ms != nil {
		e.P50, e.HasP50 = time.Duration(*l.P50Ms)*time.Millisecond, true
	}
	return e, ""
}

// strictJSON decodes one JSON object into v, refusing keys v does not have and anything after it.
func strictJSON(text []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

// validTaskID reports whether id is project#task: two non-empty halves, printable, no space.
func validTaskID(id string) bool {
	project, task, ok := strings.Cut(id, "#")
	if !ok || project == "" || task == "" {
		return false
	}
	return !strings.ContainsFunc(id, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) })
}

// Imported says what an import did: how many estimates the file held, how many were new to the
// state folder, how many replaced an older one, and how many were no newer than what it held.
type Imported struct {
	File     string `json:"file"`
	Tasks    int    `json:"tasks"`
	Added    int    `json:"added"`
	Replaced int    `json:"replaced"`
	Kept     int    `json:"kept"`
	// Refused is why the file was refused (a malformed or missing file); nothing was imported.
	Refused string `json:"refused,omitempty"`
}

// Import keeps ests, read from the file name, in st.
func Import(ctx context.Context, st *store.Store, name string, ests []store.Estimate) (Imported, error) {
	added, replaced, err := st.CarryEstimates(ctx, ests)
	if err != nil {
		return Imported{}, fmt.Errorf("import %s: %w", name, err)
	}
	return Imported{File: name, Tasks: len(ests), Added: added, Replaced: replaced, Kept: len(ests) - added - replaced}, nil
}
