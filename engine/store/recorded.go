package store

import (
	"encoding/json"
	"time"
)

// Recorded answers e as the index reads it back once recorded: its start and durations in whole
// milliseconds (its wait rounded up), its lists as their JSON columns decode. A run that recorded
// its executions answers its summary from them, the same document `vx last` makes, without
// reading them again.
func (e Execution) Recorded() Execution {
	e.Started = time.UnixMilli(ms(e.Started))
	e.Duration = wholeMs(e.Duration)
	e.UserCPU = wholeMs(e.UserCPU)
	e.SysCPU = wholeMs(e.SysCPU)
	e.Saved = wholeMs(e.Saved)
	e.Waited = time.Duration(waitedMs(e.Waited)) * time.Millisecond
	e.SandboxViolations = recordedList(e.SandboxViolations)
	e.NotReady = recordedList(e.NotReady)
	if e.ExitCode != nil {
		c := *e.ExitCode
		e.ExitCode = &c
	}
	if e.RestoredFiles != nil {
		n := *e.RestoredFiles
		e.RestoredFiles = &n
	}
	return e
}

// Recorded answers r as the index reads it back once it is recorded as finished with its
// Status, ExitCode and Finished.
func (r Run) Recorded() Run {
	r.Started = time.UnixMilli(ms(r.Started))
	if !r.Finished.IsZero() {
		r.Finished = time.UnixMilli(ms(r.Finished))
	}
	r.Args = recordedList(r.Args)
	r.Requested = recordedList(r.Requested)
	if len(r.Tags) == 0 {
		r.Tags = nil
	}
	return r
}

// wholeMs is d as a column of milliseconds holds it.
func wholeMs(d time.Duration) time.Duration {
	return time.Duration(d.Milliseconds()) * time.Millisecond
}

// recordedList is a list as its JSON column decodes: never nil, and through JSON (which
// replaces what is not UTF-8) unless empty.
func recordedList(l []string) []string {
	if len(l) == 0 {
		return []string{}
	}
	b, _ := json.Marshal(l)
	var out []string
	_ = json.Unmarshal(b, &out)
	return out
}
