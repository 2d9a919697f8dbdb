// Package configlock keeps vx.lock, the committed record of each task's resolved config, and checks the
// workspace against it. The point is review: a task whose command, environment, inputs or
// dependencies changed — by a person or by an agent — shows up as drift before CI runs it.
//
// A fingerprint holds only what the config says, never the environment: exec.env secrets are
// recorded by the name they are read from, never by value.
package configlock

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// FileName is the lock file at the workspace root.
const FileName = "vx.lock"

// Version is the lock file format version. A lock of another version is refused by name.
const Version = 1

// fieldOrder lists the fingerprint fields in the order drift is reported: the task fields the lock
// audits (graph.TaskFields), and after the command the package scripts it runs.
var fieldOrder = func() []string {
	var order []string
	for _, f := range graph.TaskFields() {
		if f.Lock != "" {
			order = append(order, f.Lock)
		}
		if f.Name == "command" {
			order = append(order, "scripts")
		}
	}
	return order
}()

// Fingerprint is one task's resolved config as the lock records it.
type Fingerprint struct {
	Command string `json:"command"`
	// Env holds the names whose values enter the cache key, sorted.
	Env []string `json:"env"`
	// ExecEnv holds the exec.env entries: a literal value, or the name a secret is read from.
	ExecEnv map[string]graph.EnvValue `json:"execEnv"`
	// Inputs is null for the default (every file of the project git does not ignore).
	Inputs    []string       `json:"inputs"`
	Outputs   []string       `json:"outputs"`
	DependsOn []string       `json:"dependsOn"`
	Cache     bool           `json:"cache"`
	Sandbox   *graph.Sandbox `json:"sandbox"`
	// Scripts holds the text of the package.json scripts the command runs, by name.
	Scripts map[string]string `json:"scripts,omitempty"`
	// Persistent is true for a long-running task; NotInAll for one --all leaves out.
	Persistent bool `json:"persistent,omitempty"`
	NotInAll   bool `json:"notInAll,omitempty"`
}

// File is the vx.lock document.
type File struct {
	Version int `json:"version"`
	// Tasks maps each task id to its fingerprint.
	Tasks map[string]Fingerprint `json:"tasks"`
	// Frozen is what `vx run --frozen` runs from; nil in a lock written before it existed.
	Frozen *Frozen `json:"frozen,omitempty"`
}

// Frozen is the resolved workspace a lock keeps, so that `vx run --frozen` evaluates no config:
// every field a key and a run read, and the digest of each file and folder it was resolved from.
type Frozen struct {
	// Version is the vx and layout that encoded Workspace; another vx refuses to read it.
	Version string `json:"version"`
	// Sources maps each source, relative to the root, to its digest (engine/workspace says how).
	Sources map[string]string `json:"sources"`
	// Workspace is the resolved workspace, encoded by engine/workspace, in base64.
	Workspace string `json:"workspace"`
}

// Problem is one drift: a field of a task whose current value is not the locked one. Field "task"
// is a task added since the lock (locked "absent") or removed from the config (current "absent").
type Problem struct {
	TaskID  string `json:"taskId"`
	Field   string `json:"field"`
	Locked  any    `json:"locked"`
	Current any    `json:"current"`
}

// Report is the answer of `vx lock` and `vx lock --check`, and the --format json document of both:
// the original's audit (upToDate, audited and notAudited counted, problems one line per drift, a
// missing lock one) and vx's lists of them (auditedTasks, notAuditedTasks, each drift's task,
// field, locked and current values in drift).
type Report struct {
	// ExitCode is the exit status the report ends on: 1 on drift, else 0. The checkLock tool
	// answers it too, so the CLI and the tool print one document.
	ExitCode int `json:"exitCode"`
	// File is the lock file, relative to the workspace root.
	File string `json:"file"`
	// Written is true when `vx lock` wrote the file.
	Written bool `json:"written"`
	// UpToDate is true when every task matches the lock and the lock names no removed task.
	UpToDate bool `json:"upToDate"`
	// AuditedCount and NotAuditedCount count Audited and NotAudited.
	AuditedCount    int `json:"audited"`
	NotAuditedCount int `json:"notAudited"`
	// Lines holds one line per drift, as the plain report prints it; a missing lock is one line.
	Lines []string `json:"problems"`
	// Missing is true when there is no lock file: every task is then new, and Problems is empty.
	Missing bool `json:"missing,omitempty"`
	// Audited lists the tasks whose config matches the lock, sorted.
	Audited []string `json:"auditedTasks"`
	// NotAudited lists the tasks new or changed since the lock, sorted.
	NotAudited []string `json:"notAuditedTasks"`
	// Problems holds one entry per drift, by task id then field.
	Problems []Problem `json:"drift"`
	// Recorded holds, for `vx lock`, the drift it accepted into the new lock.
	Recorded []Problem `json:"recorded,omitempty"`
}

// missingLine is the one problem of a workspace without a lock.
const missingLine = FileName + " is missing: no task is audited; review the config, then run `vx lock` to record it"

// count fills the counts and the lines of the lists.
func (r *Report) count() {
	r.AuditedCount, r.NotAuditedCount = len(r.Audited), len(r.NotAudited)
	r.Lines = make([]string, 0, len(r.Problems)+1)
	if r.Missing {
		r.Lines = append(r.Lines, missingLine)
	}
	for _, p := range r.Problems {
		r.Lines = append(r.Lines, p.Line())
	}
}

// Line is the drift as the plain report prints it: task, field, locked and current values.
func (p Problem) Line() string {
	return fmt.Sprintf("%s %s: locked %s, now %s", p.TaskID, p.Field, textValue(p.Locked), textValue(p.Current))
}

// Status is the lock state `vx info` reports.
type Status struct {
	// File is the lock file, relative to the workspace root.
	File string `json:"file"`
	// State is "absent" (no vx.lock), "upToDate", "drift", or "unreadable".
	State      string `json:"state"`
	Audited    int    `json:"audited"`
	NotAudited int    `json:"notAudited"`
	Problems   int    `json:"problems"`
	// Error says why the lock is unreadable.
	Error string `json:"error,omitempty"`
}

// Lock states of Status.State.
const (
	StateAbsent     = "absent"
	StateUpToDate   = "upToDate"
	StateDrift      = "drift"
	StateUnreadable = "unreadable"
)

// Of computes the fingerprint of every task of ws.
func Of(ws *graph.Workspace) File {
	f := File{Version: Version, Tasks: make(map[string]Fingerprint, ws.TaskCount())}
	for _, id := range ws.TaskIDs() {
		t, _ := ws.Task(id)
		f.Tasks[id] = fingerprint(t)
	}
	return f
}

// FingerprintOf answers task t's resolved config as vx.lock records it.
func FingerprintOf(t *graph.Task) Fingerprint { return fingerprint(t) }

func fingerprint(t *graph.Task) Fingerprint {
	fp := Fingerprint{
		Command:    t.Command,
		Env:        sortedCopy(t.Env),
		ExecEnv:    map[string]graph.EnvValue{},
		Outputs:    nonNil(t.Outputs),
		DependsOn:  sortedCopy(t.DependsOn),
		Cache:      t.Cache,
		Scripts:    t.Scripts,
		Persistent: t.Persistent,
		NotInAll:   !t.All,
	}
	if t.Sandbox != nil {
		// Empty lists are left out of the file, so they must read back as what they were written from.
		sb := graph.Sandbox{Network: t.Sandbox.Network}
		if t.Sandbox.Read != nil { // `read: []` narrows, unlike an absent read
			sb.Read = append([]string{}, t.Sandbox.Read...)
		}
		if len(t.Sandbox.Write) > 0 {
			sb.Write = append([]string{}, t.Sandbox.Write...)
		}
		fp.Sandbox = &sb
	}
	if t.Inputs != nil {
		fp.Inputs = append([]string{}, t.Inputs...)
	}
	for name, v := range t.ExecEnv {
		if v.Secret != "" {
			fp.ExecEnv[name] = graph.EnvValue{Secret: v.Secret}
		} else {
			fp.ExecEnv[name] = graph.EnvValue{Value: v.Value}
		}
	}
	return fp
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return append([]string{}, s...)
}

func sortedCopy(s []string) []string {
	out := nonNil(s)
	sort.Strings(out)
	return out
}

// Read reads the lock file at the workspace root; ok is false when there is none.
func Read(root string) (f File, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(root, FileName))
	if errors.Is(err, fs.ErrNotExist) {
		return File{}, false, nil
	}
	if err != nil {
		return File{}, false, fmt.Errorf("read %s: %w", FileName, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, false, &vxerr.ConfigError{File: FileName, Msg: fmt.Sprintf("not a vx lock: %v (run vx lock to rewrite it)", err)}
	}
	if f.Version != Version {
		return File{}, false, &vxerr.ConfigError{File: FileName,
			Msg: fmt.Sprintf("lock format version %d, this vx reads version %d (run vx lock to rewrite it)", f.Version, Version)}
	}
	if f.Tasks == nil {
		f.Tasks = map[string]Fingerprint{}
	}
	return f, true, nil
}

// Check compares ws with its vx.lock. Without a lock every task is new, not audited, and the one
// problem is the missing lock.
func Check(ws *graph.Workspace) (*Report, error) {
	locked, ok, err := Read(ws.Root)
	if err != nil {
		return nil, err
	}
	r := compare(locked, Of(ws))
	if !ok {
		r.Missing, r.Problems = true, []Problem{}
		r.count()
	}
	return r, nil
}

// Write records the current config of ws as audited in vx.lock (atomically) and reports the drift it
// accepted. The file is rewritten only when its content changes.
func Write(ws *graph.Workspace) (*Report, error) { return WriteFrozen(ws, nil) }

// WriteFrozen is Write with the frozen workspace fr (nil for none) kept in the lock.
func WriteFrozen(ws *graph.Workspace, fr *Frozen) (*Report, error) {
	locked, existed, err := Read(ws.Root)
	var cfgErr *vxerr.ConfigError
	if errors.As(err, &cfgErr) {
		// An unreadable or older lock is replaced whole: writing the lock is how it is repaired.
		locked, existed, err = File{}, false, nil
	}
	if err != nil {
		return nil, err
	}
	current := Of(ws)
	before := compare(locked, current)
	withFrozen := current
	withFrozen.Frozen = fr
	data, err := Marshal(withFrozen)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(ws.Root, FileName)
	written := false
	if old, rerr := os.ReadFile(path); !existed || rerr != nil || !bytes.Equal(old, data) {
		if err := writeFileAtomic(path, data); err != nil {
			return nil, err
		}
		written = true
	}
	after := compare(current, current)
	after.Written = written
	after.Recorded = before.Problems
	return after, nil
}

// Drift answers how the fingerprints locked in f differ from ws's tasks, by task id then field;
// none when ws is the workspace they were taken from.
func Drift(f File, ws *graph.Workspace) []Problem { return compare(f, Of(ws)).Problems }

// State summarises the lock of ws for `vx info`. It never fails: a lock that cannot be read is
// reported as unreadable with the reason.
func State(ws *graph.Workspace) Status {
	st := Status{File: FileName}
	locked, ok, err := Read(ws.Root)
	switch {
	case err != nil:
		st.State, st.Error = StateUnreadable, err.Error()
		return st
	case !ok:
		st.State = StateAbsent
		st.NotAudited = ws.TaskCount()
		return st
	}
	r := compare(locked, Of(ws))
	st.Audited, st.NotAudited, st.Problems = len(r.Audited), len(r.NotAudited), len(r.Problems)
	st.State = StateDrift
	if r.UpToDate {
		st.State = StateUpToDate
	}
	return st
}

// Marshal renders a lock file: indented JSON with sorted keys and a final newline, so that it diffs
// well under review.
func Marshal(f File) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("encode %s: %w", FileName, err)
	}
	return buf.Bytes(), nil
}

// compare lists the drift of current against locked.
func compare(locked, current File) *Report {
	r := &Report{File: FileName, Audited: []string{}, NotAudited: []string{}, Problems: []Problem{}}
	ids := make([]string, 0, len(current.Tasks))
	for id := range current.Tasks {
		ids = append(ids, id)
	}
	for id := range locked.Tasks {
		if _, ok := current.Tasks[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	for _, id := range ids {
		cur, inCurrent := current.Tasks[id]
		old, inLock := locked.Tasks[id]
		switch {
		case !inLock:
			r.NotAudited = append(r.NotAudited, id)
			r.Problems = append(r.Problems, Problem{TaskID: id, Field: "task", Locked: "absent", Current: "present"})
		case !inCurrent:
			r.Problems = append(r.Problems, Problem{TaskID: id, Field: "task", Locked: "present", Current: "absent"})
		default:
			ps := diff(id, old, cur)
			if len(ps) == 0 {
				r.Audited = append(r.Audited, id)
			} else {
				r.NotAudited = append(r.NotAudited, id)
				r.Problems = append(r.Problems, ps...)
			}
		}
	}
	r.UpToDate = len(r.Problems) == 0
	r.count()
	r.ExitCode = vxerr.ExitOK
	if !r.UpToDate {
		r.ExitCode = vxerr.ExitFailure
	}
	return r
}

// diff lists the fields of one task that differ, in fieldOrder.
func diff(id string, old, cur Fingerprint) []Problem {
	var ps []Problem
	for _, field := range fieldOrder {
		a, b := fieldValue(old, field), fieldValue(cur, field)
		if !reflect.DeepEqual(a, b) {
			ps = append(ps, Problem{TaskID: id, Field: field, Locked: a, Current: b})
		}
	}
	return ps
}

// fieldValue returns one field in the form a problem reports it (and compares it): empty lists and
// maps compare equal to absent ones.
func fieldValue(fp Fingerprint, field string) any {
	switch field {
	case "command":
		return fp.Command
	case "env":
		return nonNil(fp.Env)
	case "exec.env":
		if fp.ExecEnv == nil {
			return map[string]graph.EnvValue{}
		}
		return fp.ExecEnv
	case "inputs":
		return fp.Inputs
	case "outputs":
		return nonNil(fp.Outputs)
	case "dependsOn":
		return nonNil(fp.DependsOn)
	case "cache":
		return fp.Cache
	case "sandbox":
		return fp.Sandbox
	case "scripts":
		if fp.Scripts == nil {
			return map[string]string{}
		}
		return fp.Scripts
	case "persistent":
		return fp.Persistent
	case "all":
		return !fp.NotInAll
	}
	return nil
}

// writeFileAtomic writes data to a temp file beside path and renames it over path, so a reader sees
// the old file or the new one, never a torn one.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, atomicfile.Perm(0o644)); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

// InfoSection answers the lock part of `vx info` (the signature of info's section hooks). Without a
// loaded workspace there are no tasks to compare, and it says so.
func InfoSection(_ context.Context, ws *graph.Workspace) (any, error) {
	if ws == nil {
		return nil, errors.New("the lock cannot be checked: the workspace config did not load")
	}
	return State(ws), nil
}

// WriteText prints the report for people: the verdict, then each drift.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	switch {
	case r.Written:
		fmt.Fprintf(&b, "%s written: %d tasks audited", r.File, len(r.Audited))
		changed := map[string]bool{}
		for _, p := range r.Recorded {
			changed[p.TaskID] = true
		}
		if n := len(changed); n > 0 {
			fmt.Fprintf(&b, " (%d new, changed or removed since the last lock)", n)
		}
		b.WriteString("\n")
	case r.UpToDate && r.Recorded != nil:
		fmt.Fprintf(&b, "%s already records every task: %d audited\n", r.File, len(r.Audited))
	case r.UpToDate:
		fmt.Fprintf(&b, "%s is up to date: %d tasks audited\n", r.File, len(r.Audited))
	default:
		fmt.Fprintf(&b, "%s: %d tasks audited, %d not audited\n", r.File, len(r.Audited), len(r.NotAudited))
	}
	for _, line := range r.Lines {
		fmt.Fprintf(&b, "  %s\n", line)
	}
	if len(r.Problems) > 0 {
		b.WriteString("review the changes, then run `vx lock` to record them\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// textValue renders a locked or current value compactly: JSON, with null read as "default" (the
// default inputs) and the presence words as they are.
func textValue(v any) string {
	switch x := v.(type) {
	case string:
		if x == "absent" || x == "present" {
			return x
		}
	case []string:
		if x == nil {
			return "default"
		}
	case *graph.Sandbox:
		if x == nil {
			return "none"
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
