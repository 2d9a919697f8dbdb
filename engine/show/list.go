package show

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/workspace"
)

// List is the answer of `vx ls`, as `turbo ls`'s: the selected projects, each with its folder and
// its tasks' names.
type List struct {
	Count    int           `json:"count"`
	Projects []ListProject `json:"projects"`
	// Affected says why each project is affected, under --affected.
	Affected map[string]string `json:"affected,omitempty"`
	// NothingAffected says why a selection narrowed by git holds no project.
	NothingAffected string `json:"nothingAffected,omitempty"`
}

// ListProject is one project of a List.
type ListProject struct {
	Name string `json:"name"`
	Dir  string `json:"dir"`
	// Tasks are the project's task names, sorted.
	Tasks []string `json:"tasks"`
}

// ListProjects answers `vx ls`: the projects sel selects (--filter, --affected; every project
// when it selects none), in name order.
func ListProjects(ctx context.Context, ws *graph.Workspace, sel workspace.SelectOptions) (*List, error) {
	sel.Tasks, sel.All = nil, false
	s, err := workspace.Select(ctx, ws, sel)
	if err != nil {
		return nil, err
	}
	out := &List{Projects: []ListProject{}, Affected: s.Affected, NothingAffected: s.NothingAffected}
	for _, name := range s.Projects {
		p, _ := ws.Project(name)
		out.Projects = append(out.Projects, ListProject{Name: p.Name, Dir: p.Dir, Tasks: p.TaskNames()})
	}
	out.Count = len(out.Projects)
	return out, nil
}

// WriteText prints the list for people: how many projects, then a line each — name, folder,
// task names — in columns, config text escaped; bold, when bold is set, wraps each name once
// escaped.
func (l *List) WriteText(w io.Writer, bold func(string) string) error {
	var b strings.Builder
	switch {
	case l.Count == 0 && l.NothingAffected != "":
		fmt.Fprintf(&b, "no projects: %s\n", l.NothingAffected)
	case l.Count == 1:
		b.WriteString("1 project\n")
	default:
		fmt.Fprintf(&b, "%d projects\n", l.Count)
	}
	nameWidth, dirWidth := 0, 0
	for _, p := range l.Projects {
		nameWidth = max(nameWidth, utf8.RuneCountInString(esc(p.Name)))
		dirWidth = max(dirWidth, utf8.RuneCountInString(esc(p.Dir)))
	}
	for _, p := range l.Projects {
		name := esc(p.Name)
		pad := strings.Repeat(" ", nameWidth-utf8.RuneCountInString(name))
		if bold != nil {
			name = bold(name)
		}
		line := fmt.Sprintf("  %s%s  %-*s  %s", name, pad, dirWidth, esc(p.Dir), join(p.Tasks, " "))
		if why, ok := l.Affected[p.Name]; ok {
			line += "  (affected: " + esc(why) + ")"
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
