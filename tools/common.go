package tools

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/workspace"
)

func ptr[T any](v T) *T { return &v }

// readOnly are the annotations of every tool that runs nothing and writes nothing.
var readOnly = tool.Annotations{ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)}

// FilterList is a filter argument: one non-empty string, or (where a tool takes several) a
// non-empty list of them, each one --filter value.
type FilterList []string

// UnmarshalJSON accepts a non-empty string or a list of non-empty strings.
func (f *FilterList) UnmarshalJSON(data []byte) error {
	var one string
	if json.Unmarshal(data, &one) == nil {
		if strings.TrimSpace(one) == "" {
			return errors.New("must be a non-empty string or a list of them")
		}
		*f = FilterList{one}
		return nil
	}
	var many []json.RawMessage
	if json.Unmarshal(data, &many) != nil || len(many) == 0 {
		return errors.New("must be a non-empty string or a list of them")
	}
	for _, raw := range many {
		if json.Unmarshal(raw, &one) != nil || strings.TrimSpace(one) == "" {
			return errors.New("must be a non-empty string or a list of them")
		}
		*f = append(*f, one)
	}
	return nil
}

// Affected is the affected argument: true (compare with the default branch), false (no
// narrowing), or a git ref.
type Affected struct {
	On  bool
	Ref string
}

// UnmarshalJSON accepts true, false or a non-empty git ref.
func (a *Affected) UnmarshalJSON(data []byte) error {
	var b bool
	if json.Unmarshal(data, &b) == nil {
		*a = Affected{On: b}
		return nil
	}
	var ref string
	if json.Unmarshal(data, &ref) != nil || strings.TrimSpace(ref) == "" {
		return errors.New("must be true, false or a git ref")
	}
	*a = Affected{On: true, Ref: ref}
	return nil
}

// selectOptions turns the selection arguments into engine options.
func selectOptions(filters []string, affected *Affected) workspace.SelectOptions {
	opts := workspace.SelectOptions{Filters: filters}
	if affected != nil && affected.On {
		opts.Affected, opts.AffectedRef = true, affected.Ref
	}
	return opts
}

// checkTaskID refuses a task id missing a half.
func checkTaskID(key, id string) error {
	if _, _, ok := graph.SplitTaskID(id); !ok {
		return tool.Refusef("argument %q must be a task id project#task, not %q (a half is missing)", key, id)
	}
	return nil
}

// checkTaskName refuses a project#task where a task name is asked.
func checkTaskName(key, name string) error {
	if strings.Contains(name, "#") {
		return tool.Refusef("argument %q must be a task name, not the task id %q (use the project argument for the project)", key, name)
	}
	return nil
}
