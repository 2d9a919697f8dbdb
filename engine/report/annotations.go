package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/runout"
)

// GitHub keeps at most 10 error annotations of a step and 50 of a job: vx writes at most
// MaxAnnotationsPerTask of a task (its first) and MaxAnnotationsPerRun of a run.
const (
	MaxAnnotationsPerTask = 10
	MaxAnnotationsPerRun  = 50
)

// Annotations writes a GitHub Actions `::error file=…,line=…,col=…::message` line for each
// location the failures name, at most MaxAnnotationsPerTask a task and MaxAnnotationsPerRun in
// all, in the order of the failures; it answers how many it wrote. A failure that names no
// place gets one annotation without a file, so that the job's page names it.
func Annotations(w io.Writer, failures []Failure) (int, error) {
	n := 0
	for _, f := range failures {
		title := fmt.Sprintf("%s %s", f.TaskID, verdict(f))
		if len(f.Locations) == 0 {
			if n == MaxAnnotationsPerRun {
				return n, nil
			}
			if _, err := fmt.Fprintf(w, "::error title=%s::%s\n", runout.CommandProperty(logtext.Escape(title)), runout.CommandData(lastLine(f.Plain, title))); err != nil {
				return n, err
			}
			n++
			continue
		}
		for i, loc := range f.Locations {
			if i == MaxAnnotationsPerTask || n == MaxAnnotationsPerRun {
				break
			}
			if _, err := io.WriteString(w, annotation(title, loc)); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// annotation is one `::error` line for loc.
func annotation(title string, loc Location) string {
	props := "file=" + runout.CommandProperty(logtext.Escape(loc.File))
	if loc.Line > 0 {
		props += fmt.Sprintf(",line=%d", loc.Line)
	}
	if loc.Col > 0 {
		props += fmt.Sprintf(",col=%d", loc.Col)
	}
	props += ",title=" + runout.CommandProperty(logtext.Escape(title))
	msg := loc.Message
	if msg == "" {
		msg = title
	}
	return "::error " + props + "::" + runout.CommandData(logtext.Escape(msg)) + "\n"
}

// lastLine is the last line of output that is not blank, escaped, or otherwise when there is none.
func lastLine(output, otherwise string) string {
	lines := strings.Split(strings.TrimRight(output, "\n"), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return logtext.Escape(s)
		}
	}
	return otherwise
}
