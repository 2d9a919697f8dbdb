package history

import (
	"slices"
)

// WhyCore is the original's `why` object of `vx why --format json`: the two executions compared
// and whether the key moved (the same facts as Why's top-level found, thisRun, previousRun,
// hashChanged and note).
type WhyCore struct {
	RunID       string   `json:"runId"`
	TaskID      string   `json:"taskId"`
	Found       bool     `json:"found"`
	ThisRun     *RunSide `json:"thisRun"`
	PreviousRun *RunSide `json:"previousRun"`
	HashChanged *bool    `json:"hashChanged"`
	Note        string   `json:"note"`
}

// Entry is one moved component of a key, as the original lists them: its kind (files, global,
// env, command, upstream, scripts, packages, runtime, through, depFiles, outputs, version,
// lockfile, sandbox), its name, how it changed (added, removed, changed) and both sides where
// vx shows them (an env value never; a file's digest never).
type Entry struct {
	Kind   string  `json:"kind"`
	Name   string  `json:"name"`
	Change string  `json:"change"`
	Before *string `json:"before"`
	After  *string `json:"after"`
}

// original fills the original's fields of an answer: the nested why (where it found the task),
// the diff's run, task, entries and note, and each root's chain (from the task asked about, where
// the walk did not record one) and entries.
func (w *Why) original() {
	if w.Found {
		w.Why = &WhyCore{RunID: w.RunID, TaskID: w.TaskID, Found: true, ThisRun: w.ThisRun, PreviousRun: w.PreviousRun,
			HashChanged: w.HashChanged, Note: w.Note}
	}
	d := &w.Diff
	d.RunID, d.TaskID, d.Found, d.PreviousRunID, d.Note = w.RunID, w.TaskID, w.Found, w.PreviousRunID, w.Note
	d.Entries = d.entries()
	d.UnchangedCount = d.unchanged
	for i := range w.Roots {
		r := &w.Roots[i]
		if r.Chain == nil {
			r.Chain = []string{w.TaskID, r.TaskID}
		}
		r.Entries = r.entries()
	}
}

// entries lists what moved, one entry a component, in a fixed order of kinds.
func (d *Diff) entries() []Entry {
	out := []Entry{}
	out = appendFiles(out, "files", d.Files)
	out = appendFiles(out, "global", d.Global)
	out = appendNames(out, "env", d.Env)
	if c := d.Command; c != nil {
		out = append(out, changed("command", "command", c.Before, c.After))
	}
	for _, u := range d.Upstream {
		out = append(out, changed("upstream", u.TaskID, u.Before, u.After))
	}
	out = appendNames(out, "scripts", d.Scripts)
	for _, p := range d.Packages {
		out = append(out, changed("packages", p.Name, p.Before, p.After))
	}
	for _, r := range d.Runtime {
		out = append(out, changed("runtime", r.Probe, r.Before, r.After))
	}
	out = appendNames(out, "through", d.Through)
	out = appendNames(out, "depFiles", d.DepFiles)
	for _, f := range []struct {
		kind string
		set  bool
	}{{"outputs", d.Outputs}, {"version", d.Version}, {"lockfile", d.Lockfile}, {"sandbox", d.sandbox}} {
		if f.set {
			out = append(out, Entry{Kind: f.kind, Name: f.kind, Change: "changed"})
		}
	}
	return out
}

// entries lists what moved of the root's own inputs.
func (r *Root) entries() []Entry {
	d := Diff{Files: r.Files, Env: r.Env, Command: r.Command, Scripts: r.Scripts, Packages: r.Packages,
		Runtime: r.Runtime, Through: r.Through, DepFiles: r.DepFiles}
	return d.entries()
}

// appendFiles adds an entry for each file added, removed or modified.
func appendFiles(out []Entry, kind string, f FileDiff) []Entry {
	for _, p := range f.Added {
		out = append(out, Entry{Kind: kind, Name: p, Change: "added"})
	}
	for _, p := range f.Removed {
		out = append(out, Entry{Kind: kind, Name: p, Change: "removed"})
	}
	for _, p := range f.Modified {
		out = append(out, Entry{Kind: kind, Name: p, Change: "changed"})
	}
	return out
}

// appendNames adds a changed entry, with no sides, for each name.
func appendNames(out []Entry, kind string, names []string) []Entry {
	for _, n := range slices.Clone(names) {
		out = append(out, Entry{Kind: kind, Name: n, Change: "changed"})
	}
	return out
}

// unchangedIn counts the names whose value is the same before and after.
func unchangedIn(before, after map[string]string) int {
	n := 0
	for k, v := range after {
		if old, ok := before[k]; ok && old == v {
			n++
		}
	}
	return n
}

// chainTo answers the path from asked down to id through parent (each moved upstream task's
// dependant, as the walk reached it); nil where the walk recorded none.
func chainTo(asked, id string, parent map[string]string) []string {
	chain := []string{id}
	for cur := id; cur != asked; {
		p, ok := parent[cur]
		if !ok || slices.Contains(chain, p) {
			return nil
		}
		chain = append(chain, p)
		cur = p
	}
	slices.Reverse(chain)
	return chain
}

// changed is an entry of both sides: added where before is empty, removed where after is.
func changed(kind, name, before, after string) Entry {
	e := Entry{Kind: kind, Name: name, Change: "changed", Before: orNull(before), After: orNull(after)}
	switch {
	case before == "":
		e.Change = "added"
	case after == "":
		e.Change = "removed"
	}
	return e
}
