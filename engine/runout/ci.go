package runout

import (
	"fmt"
	"strings"

	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/store"
)

// groupEnd ends a fold of GitHub Actions' log.
const groupEnd = "::endgroup::\n"

// groupStart begins a fold of GitHub Actions' log titled with the task id, escaped as a workflow
// command's data is ('%', CR and LF as %25, %0D, %0A) and made plain text.
func groupStart(id string) string {
	return "::group::" + CommandData(logtext.Escape(id)) + "\n"
}

// CommandData escapes s as the data of a GitHub Actions workflow command: what follows its `::`.
func CommandData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// CommandProperty escapes s as a property value of a workflow command (file=…,line=…).
func CommandProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

// fold answers a finished task's held output as GitHub Actions shows it: in a fold of its own
// when it passed, outside any fold when it did not (a failure is what the reader looks for).
// Without GitHub, or with nothing held, the output is as it was.
func (d *Display) fold(e store.Execution, held string) string {
	if !d.logs.GitHub || held == "" || !store.Passed(e.Status) {
		return held
	}
	return groupStart(e.TaskID) + held + groupEnd
}

// The lines an agent's output keeps of a failure: its first and its last.
const (
	agentHeadLines = 10
	agentTailLines = 10
)

// agentFinished shows a finished task as an agent's output does: a hit only counted (Finish
// says them in one line); a failure's line, its first and last lines, and where its whole log
// is; any other task its line. Callers hold d.mu.
func (d *Display) agentFinished(e store.Execution, held []byte) {
	if e.Status == store.StatusHit {
		d.hits++
		d.saved += e.Saved
		return
	}
	d.write(d.statusLine(e))
	if !store.Failed(e.Status) {
		return
	}
	lines := strings.SplitAfter(string(held), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	prefix := d.prefix(e.TaskID)
	var b strings.Builder
	if len(lines) <= agentHeadLines+agentTailLines {
		b.WriteString(strings.Join(lines, ""))
	} else {
		b.WriteString(strings.Join(lines[:agentHeadLines], ""))
		fmt.Fprintf(&b, "%s[… %d lines …]\n", prefix, len(lines)-agentHeadLines-agentTailLines)
		b.WriteString(strings.Join(lines[len(lines)-agentTailLines:], ""))
	}
	fmt.Fprintf(&b, "%s(%d lines of output; the whole log: vx last --log %s)\n", prefix, len(lines), logtext.Escape(e.TaskID))
	d.write(b.String())
}

// plural is one or many as n says.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
