package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/vzn/vx/engine/store"
)

// An agent reads a row of a task that passed or hit for what it acts on: which task, its status,
// how long it took, where a hit came from, and what it must know of it: why a pass stored no
// cache entry, that it passed only on a retry, or where it ran (executor, in a run that may execute
// remotely). runTasks and planTasks write such rows lean (those
// fields only, and only when not zero, null or empty); a row of a task that failed, was blocked,
// timed out, was skipped or cancelled, or did something outside its sandbox is written whole.
// The rest of a lean row (hash, exit code, memory figures) is getRunHistory's and
// explainCacheKey's. The answer's text and structuredContent are the same lean JSON.

// leanRunKeys are the fields a lean row of a run keeps.
var leanRunKeys = []string{"taskId", "status", "durationMs", "cacheSource", "notCachedReason", "attempts", "flaky", "executor"}

// leanPlanKeys are the fields a lean row of a plan keeps: its predicted status and duration.
var leanPlanKeys = []string{"taskId", "cache", "p50Ms"}

// member is one member of a JSON object, in the object's order.
type member struct {
	key string
	val json.RawMessage
}

// members answers the members of the JSON object obj in their order.
func members(obj []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object: %.40s", obj)
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		out = append(out, member{key, val})
	}
	return out, nil
}

// object writes members as a JSON object, in their order.
func object(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(m.key)
		b.Write(key)
		b.WriteByte(':')
		b.Write(m.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// isEmpty reports whether a JSON value says nothing: absent, 0, false, null, "", [] or {}.
func isEmpty(v json.RawMessage) bool {
	switch string(bytes.TrimSpace(v)) {
	case "", "0", "false", "null", `""`, "[]", "{}":
		return true
	}
	return false
}

// leanObject keeps, of the JSON object obj, the members keep names (all when keep is nil) whose
// values are not empty.
func leanObject(obj []byte, keep []string) ([]byte, error) {
	ms, err := members(obj)
	if err != nil {
		return nil, err
	}
	ms = slices.DeleteFunc(ms, func(m member) bool {
		return keep != nil && !slices.Contains(keep, m.key) || isEmpty(m.val)
	})
	return object(ms), nil
}

// leanRows rewrites the JSON array rows, each row lean (keep's fields, not empty) when lean says
// its members allow it, else as it is.
func leanRows(rows json.RawMessage, keep []string, lean func(ms []member) bool) (json.RawMessage, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(rows, &list); err != nil || list == nil {
		return rows, err
	}
	for i, row := range list {
		ms, err := members(row)
		if err != nil {
			return nil, err
		}
		if lean(ms) {
			if list[i], err = leanObject(row, keep); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(list)
}

// valueOf answers the value of key among ms, nil when absent.
func valueOf(ms []member, key string) json.RawMessage {
	for _, m := range ms {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

// statusIn reports whether the string value of key among ms is one of statuses.
func statusIn(ms []member, key string, statuses ...store.Status) bool {
	var s store.Status
	if json.Unmarshal(valueOf(ms, key), &s) != nil {
		return false
	}
	return slices.Contains(statuses, s)
}

// passedRow reports whether a run's row is of a task that passed or hit, and did nothing that
// needs a look (no sandbox violation, no input that moved while it ran).
func passedRow(ms []member) bool {
	return statusIn(ms, "status", store.StatusHit, store.StatusMiss) &&
		isEmpty(valueOf(ms, "sandboxViolations")) && isEmpty(valueOf(ms, "inputsChangedDuringRun"))
}

// hitRow reports whether a plan's row is of a task predicted to hit.
func hitRow(ms []member) bool { return statusIn(ms, "cache", store.StatusHit) }

// leanMember rewrites the member key of the JSON object doc with rewrite, the others as they are.
func leanMember(doc []byte, key string, rewrite func(json.RawMessage) (json.RawMessage, error)) ([]byte, error) {
	ms, err := members(doc)
	if err != nil {
		return nil, err
	}
	for i := range ms {
		if ms[i].key == key {
			if ms[i].val, err = rewrite(ms[i].val); err != nil {
				return nil, err
			}
		}
	}
	return object(ms), nil
}

// runOriginalKeys are the members of a run summary that restate, in the original's names, what
// its totals and rows say (endedAt, totalMs, the original's summary counts, the aborted rows,
// which tasks holds too): the CLI's document carries them, a runTasks answer leaves them out
// (aborted only when empty).
var runOriginalKeys = []string{"endedAt", "totalMs", "summary", "aborted"}

// withoutOriginalKeys answers the run summary sum without runOriginalKeys, its aborted rows kept
// when there are some.
func withoutOriginalKeys(sum json.RawMessage) (json.RawMessage, error) {
	ms, err := members(sum)
	if err != nil {
		return nil, err
	}
	kept := ms[:0]
	for _, m := range ms {
		if !slices.Contains(runOriginalKeys, m.key) || (m.key == "aborted" && !isEmpty(m.val)) {
			kept = append(kept, m)
		}
	}
	return object(kept), nil
}

// MarshalJSON writes the answer with its summary's rows of tasks that passed or hit lean, its
// totals without the counts that are 0, and without the members that restate them in the
// original's names (runOriginalKeys).
func (a RunAnswer) MarshalJSON() ([]byte, error) {
	type plain RunAnswer
	doc, err := json.Marshal(plain(a))
	if err != nil || a.Summary == nil {
		return doc, err
	}
	return leanMember(doc, "summary", func(sum json.RawMessage) (json.RawMessage, error) {
		sum, err := leanMember(sum, "tasks", func(rows json.RawMessage) (json.RawMessage, error) {
			return leanRows(rows, leanRunKeys, passedRow)
		})
		if err != nil {
			return nil, err
		}
		if sum, err = withoutOriginalKeys(sum); err != nil {
			return nil, err
		}
		return leanMember(sum, "totals", func(totals json.RawMessage) (json.RawMessage, error) {
			return leanObject(totals, nil)
		})
	})
}

// MarshalJSON writes the answer with its plan's rows of tasks predicted to hit lean.
func (a PlanAnswer) MarshalJSON() ([]byte, error) {
	type plain PlanAnswer
	doc, err := json.Marshal(plain(a))
	if err != nil || a.Plan == nil {
		return doc, err
	}
	return leanMember(doc, "plan", func(plan json.RawMessage) (json.RawMessage, error) {
		return leanMember(plan, "tasks", func(rows json.RawMessage) (json.RawMessage, error) {
			return leanRows(rows, leanPlanKeys, hitRow)
		})
	})
}
