package info

import (
	"fmt"
	"strings"

	"github.com/vzn/vx/engine/configlock"
	"github.com/vzn/vx/engine/remote"
)

// attentionNamed is how many names an attention line gives before it only counts.
const attentionNamed = 3

// attentionOf answers the document's Attention: a line for each part that needs looking at, the
// parts' own fields holding the whole of it.
func attentionOf(d *Document) []string {
	out := []string{}
	if n := len(d.ConfigErrors); n > 0 {
		e := d.ConfigErrors[0]
		loc := e.File
		if e.Line > 0 {
			loc = fmt.Sprintf("%s:%d:%d", e.File, e.Line, e.Col)
		}
		out = append(out, fmt.Sprintf("%d config file(s) did not load (configErrors), first %s: %s", n, loc, firstLine(e.Message)))
	}
	if f, ok := d.FlakyTasks.Value.(FlakyReport); ok && f.Count > 0 {
		out = append(out, fmt.Sprintf("%d flaky task(s) (one cache key both passed and failed): %s", f.Count, named(f.Tasks, f.Count)))
	}
	if l, ok := d.Lock.Value.(configlock.Status); ok {
		switch l.State {
		case configlock.StateDrift:
			out = append(out, fmt.Sprintf("%s has drifted: %d problem(s), %d task(s) not audited (vx lock --check lists them)", l.File, l.Problems, l.NotAudited))
		case configlock.StateUnreadable:
			out = append(out, fmt.Sprintf("%s is unreadable: %s", l.File, firstLine(l.Error)))
		}
	}
	if s, ok := d.Sandbox.Value.(SandboxReport); ok && !s.Enforced && s.TasksRequiring > 0 {
		out = append(out, fmt.Sprintf("%d task(s) require a sandbox this host does not enforce: a run refuses them (%s)", s.TasksRequiring, s.Verdict))
	}
	if c, ok := d.Cache.Value.(cacheReport); ok {
		switch c.State {
		case "ok", "absent":
		case "otherVersion":
			out = append(out, fmt.Sprintf("the index in %s is of version %s, not %d: the next vx run upgrades or resets it", c.Dir, c.FoundVersion, c.SchemaVersion))
		default:
			out = append(out, fmt.Sprintf("the index in %s is %s: %s", c.Dir, c.State, firstLine(c.Error)))
		}
	}
	if r, ok := d.RemoteCache.Value.(remote.Report); ok && r.Configured {
		switch {
		case r.Problem != "":
			out = append(out, "remote cache unusable: "+firstLine(r.Problem))
		case r.LastCheck != nil && !r.LastCheck.OK:
			out = append(out, "remote cache: the last check failed: "+firstLine(r.LastCheck.Error))
		}
	}
	return out
}

// named lists the first attentionNamed of names, and how many more there are of total.
func named(names []string, total int) string {
	shown := names[:min(len(names), attentionNamed)]
	s := strings.Join(shown, ", ")
	if more := total - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
