package initplan

import (
	"fmt"
	"io"
	"strings"
)

// WriteText prints the plan for people: what was (or would be) written, each file's text on a dry
// run, the todos, the notes and the next commands.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	verdict := "written"
	if p.Dry {
		verdict = "dry run, nothing written"
	}
	fmt.Fprintf(&b, "vx init from %s (scripts run with %s) — %s\n", p.Mode, p.PackageManager, verdict)
	for _, f := range p.Files {
		fmt.Fprintf(&b, "  %-8s %s\n", f.Status, f.Path)
	}
	names := make([]string, len(p.Projects))
	for i, pr := range p.Projects {
		names[i] = pr.Name
	}
	if len(names) == 0 {
		b.WriteString("no projects\n")
	} else {
		fmt.Fprintf(&b, "%d projects: %s\n", len(p.Projects), strings.Join(names, ", "))
	}
	if p.Dry {
		for _, f := range p.Files {
			fmt.Fprintf(&b, "\n── %s (%s)\n%s", f.Path, f.Status, f.Text)
		}
	}
	if len(p.Todos) > 0 {
		fmt.Fprintf(&b, "\nTo do (not translated):\n")
		for _, t := range p.Todos {
			fmt.Fprintf(&b, "  %s %s: %s", t.File, t.Key, t.Message)
			if len(t.Projects) > 1 {
				fmt.Fprintf(&b, " (%d projects: %s)", len(t.Projects), strings.Join(t.Projects, ", "))
			}
			b.WriteByte('\n')
		}
	}
	if len(p.Notes) > 0 {
		fmt.Fprintf(&b, "\nNotes:\n")
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	if len(p.Next) > 0 {
		fmt.Fprintf(&b, "\nNext:\n")
		for _, n := range p.Next {
			fmt.Fprintf(&b, "  %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
