package report

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
)

// The report's bounds: the lines of each failure's output it shows (its first), the locations
// listed per failure, and the slowest tasks listed.
const (
	failureLines     = 30
	failureLocations = 10
	slowestListed    = 5
)

// Markdown writes the run as a CommonMark report for a CI job's summary: its verdict and tags,
// what failed first, each failure's first lines and the places it names, then the totals, the
// cache's hits and the time they saved, the flaky tasks and the slowest tasks. Everything a task
// or a config named is escaped: the report renders as vx wrote it, whatever the output held.
func Markdown(w io.Writer, run Run) error {
	bw := bufio.NewWriter(w)
	s := run.Summary
	if s.NoTasks != "" {
		// Nothing ran, nothing is recorded: the reason is the whole report.
		fmt.Fprintf(bw, "## vx run: no task to run\n\n%s.\n", escapeText(s.NoTasks))
		return bw.Flush()
	}
	fmt.Fprintf(bw, "## vx run %s\n\n", verdictLine(s))
	if len(s.Tags) > 0 {
		var tags []string
		for _, k := range slices.Sorted(maps.Keys(s.Tags)) {
			tags = append(tags, code(k+"="+s.Tags[k]))
		}
		fmt.Fprintf(bw, "Tags: %s\n\n", strings.Join(tags, " "))
	}
	if s.TimedOut {
		bw.WriteString("The run timed out: what still ran was stopped.\n\n")
	}
	writeFailures(bw, run.Failures)
	writeTotals(bw, s)
	writeFlaky(bw, s)
	writeSlowest(bw, s)
	return bw.Flush()
}

// verdictLine is the heading's text: the run's id and how it ended.
func verdictLine(s *summary.Summary) string {
	word := "passed"
	if !s.OK {
		word = "failed"
		if s.Status == store.RunCancelled {
			word = "was cancelled"
		}
	}
	return fmt.Sprintf("%s %s", code(s.RunID), word)
}

// writeFailures writes what failed first, then each failure: its output's first lines and the
// places it names.
func writeFailures(w *bufio.Writer, failures []Failure) {
	if len(failures) == 0 {
		return
	}
	first := failures[0]
	fmt.Fprintf(w, "**Failed first:** %s %s\n\n", code(first.TaskID), verdict(first))
	fmt.Fprintf(w, "### Failures (%d)\n\n", len(failures))
	for _, f := range failures {
		fmt.Fprintf(w, "#### %s %s\n\n", code(f.TaskID), verdict(f))
		for i, loc := range f.Locations {
			if i == failureLocations {
				fmt.Fprintf(w, "- and %d more\n", len(f.Locations)-failureLocations)
				break
			}
			fmt.Fprintf(w, "- %s\n", code(place(loc)))
		}
		if len(f.Locations) > 0 {
			w.WriteString("\n")
		}
		lines, more := firstLines(f.Plain, failureLines)
		if lines == "" {
			w.WriteString("No output.\n\n")
			continue
		}
		fence := codeFence(lines)
		fmt.Fprintf(w, "%stext\n%s\n%s\n\n", fence, lines, fence)
		if more > 0 {
			fmt.Fprintf(w, "%d more lines: %s shows the whole log.\n\n", more, code("vx last --log "+f.TaskID))
		}
	}
}

// place is loc as file:line:col.
func place(loc Location) string {
	s := loc.File
	if loc.Line > 0 {
		s += fmt.Sprintf(":%d", loc.Line)
	}
	if loc.Col > 0 {
		s += fmt.Sprintf(":%d", loc.Col)
	}
	return s
}

// writeTotals writes the table of the run's tasks by outcome, and the cache's part in it.
func writeTotals(w *bufio.Writer, s *summary.Summary) {
	t := s.Totals
	w.WriteString("### Totals\n\n| tasks | hit | ran | failed | blocked | skipped | cancelled | wall time | saved by the cache |\n")
	w.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	fmt.Fprintf(w, "| %d | %d | %d | %d | %d | %d | %d | %s | %s |\n\n", t.Tasks, t.Hits, t.Misses, t.Failed, t.Blocked, t.Skipped,
		t.Cancelled, duration(t.WallMs), duration(t.SavedMs))
	if t.Tasks > 0 {
		fmt.Fprintf(w, "Cache: %d of %d tasks hit (%d%%)", t.Hits, t.Tasks, t.Hits*100/t.Tasks)
		if rc := s.RemoteCache; rc != nil {
			fmt.Fprintf(w, ", %d from the remote cache, %d uploaded", t.RemoteHits, rc.Uploads)
		}
		fmt.Fprintf(w, "; they saved %s.\n\n", duration(t.SavedMs))
	}
}

// writeFlaky lists the tasks that passed only after a failed attempt.
func writeFlaky(w *bufio.Writer, s *summary.Summary) {
	var flaky []summary.TaskResult
	for _, t := range s.Tasks {
		if t.Flaky {
			flaky = append(flaky, t)
		}
	}
	if len(flaky) == 0 {
		return
	}
	fmt.Fprintf(w, "### Flaky (%d)\n\n", len(flaky))
	for _, t := range flaky {
		fmt.Fprintf(w, "- %s passed on attempt %d\n", code(t.TaskID), t.Attempts)
	}
	w.WriteString("\n")
}

// writeSlowest lists the tasks that took longest, slowest first.
func writeSlowest(w *bufio.Writer, s *summary.Summary) {
	tasks := slices.Clone(s.Tasks)
	tasks = slices.DeleteFunc(tasks, func(t summary.TaskResult) bool { return !t.Status.Ran() && t.Status != store.StatusHit })
	if len(tasks) == 0 {
		return
	}
	slices.SortStableFunc(tasks, func(a, b summary.TaskResult) int {
		return cmp.Or(cmp.Compare(b.DurationMs, a.DurationMs), strings.Compare(a.TaskID, b.TaskID))
	})
	w.WriteString("### Slowest tasks\n\n| task | status | time |\n| --- | --- | ---: |\n")
	for _, t := range tasks[:min(slowestListed, len(tasks))] {
		fmt.Fprintf(w, "| %s | %s | %s |\n", cell(t.TaskID), t.Status, duration(t.DurationMs))
	}
	w.WriteString("\n")
}

// firstLines answers the first n lines of output (escaped, trailing blank lines dropped) and how
// many more there are.
func firstLines(output string, n int) (string, int) {
	lines := strings.Split(strings.TrimRight(output, "\n \t"), "\n")
	if len(lines) == 1 && strings.TrimSpace(lines[0]) == "" {
		return "", 0
	}
	more := max(0, len(lines)-n)
	lines = lines[:min(n, len(lines))]
	for i, l := range lines {
		lines[i] = logtext.Escape(strings.TrimRight(l, "\r"))
	}
	return strings.Join(lines, "\n"), more
}

// codeFence is a backtick fence longer than any run of backticks in text, so that text cannot
// close it.
func codeFence(text string) string {
	longest, run := 0, 0
	for _, r := range text {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// cell is code(s) for a table's cell: a pipe escaped, which would end the cell (a GFM table
// reads `\|` as a pipe, inside a code span too).
func cell(s string) string { return strings.ReplaceAll(code(s), "|", `\|`) }

// code is s as an inline code span: escaped, between enough backticks that s cannot end it, with
// spaces inside where s starts or ends with a backtick.
func code(s string) string {
	s = logtext.Escape(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	ticks := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return ticks + " " + s + " " + ticks
	}
	return ticks + s + ticks
}

// markdownPunct are the ASCII punctuation characters CommonMark lets a backslash escape; each one
// in plain text is escaped so that it reads as itself.
const markdownPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// escapeText is s as CommonMark text that renders as s: every punctuation character that could
// start markup is backslash-escaped.
func escapeText(s string) string {
	var b strings.Builder
	for _, r := range logtext.Escape(s) {
		if r < 128 && strings.ContainsRune(markdownPunct, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// duration is a number of milliseconds as a short duration.
func duration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.String()
}
