package tools

import (
	"context"
	"encoding/json"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/show"
)

type listTasksArgs struct {
	Project  string    `json:"project" arg:"nonempty,doc=Only this project."`
	Filter   *Filter   `json:"filter" arg:"doc=As vx --filter: NAME or glob, tag:T, ./PATH, [REF], NAME..., ...NAME, !F."`
	Affected *Affected `json:"affected" arg:"doc=Changed since the default branch (true) or this ref, and dependents."`
	Cursor   string    `json:"cursor" arg:"nonempty,doc=An answer's nextCursor."`
}

// TaskList is listTasks' answer: the projects and the tasks a run would see.
type TaskList struct {
	Projects []ListedProject `json:"projects"`
	// TotalProjects counts the projects selected, across every page.
	TotalProjects int               `json:"totalProjects"`
	Affected      map[string]string `json:"affected,omitempty"`
}

// ListedProject is one project of listTasks' answer: of show.Project, the fields that say what
// can run, each as show answers it (see listOf).
type ListedProject struct {
	Name      string       `json:"name"`
	Dir       string       `json:"dir"`
	Tags      []string     `json:"tags"`
	DependsOn []string     `json:"dependsOn"`
	Tasks     []ListedTask `json:"tasks"`
}

// ListedTask is one task of listTasks' answer: of show.Task, the fields that say what it runs and
// after what, each as show answers it (see listOf).
type ListedTask struct {
	ID          string   `json:"id"`
	Command     string   `json:"command"`
	Description string   `json:"description,omitempty"`
	DependsOn   []string `json:"dependsOn"`
	Cache       bool     `json:"cache"`
}

func (d *Deps) listTasks() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "listTasks",
		Title:       "List projects and tasks",
		Description: "What can I run here? Every project (tags, dependencies) and the tasks a run would see: id, command, dependsOn, cache. project narrows to one; filter and affected narrow as vx show --filter/--affected. Call it first in a workspace.",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args listTasksArgs) (*taskListPage, error) {
		ws, err := d.load(ctx)
		if err != nil {
			return nil, err
		}
		var filters []string
		if args.Filter != nil {
			filters = []string{string(*args.Filter)}
		}
		doc, err := show.Show(ctx, ws, show.Options{Target: args.Project, Select: selectOptions(filters, args.Affected)})
		if err != nil {
			return nil, err
		}
		if args.Project != "" {
			if _, ok := ws.Project(args.Project); !ok {
				return nil, tool.Refusef("argument %q: no project is named %q", "project", args.Project)
			}
		}
		list := listOf(doc)
		call.Window(ctx, args.Cursor, window.Of("projects", &list.Projects))
		return &taskListPage{list}, nil
	})
}

// The listed types are projections of show's: each field is show's field of the same name, type
// and json tag (Tasks aside, which is projected in turn), checked when the package starts.
var (
	projectFields = projection[ListedProject, show.Project]("Tasks")
	taskFields    = projection[ListedTask, show.Task]()
)

// listOf is the list of the projects of doc and their tasks.
func listOf(doc *show.Document) *TaskList {
	list := &TaskList{Projects: make([]ListedProject, len(doc.Projects)), TotalProjects: len(doc.Projects), Affected: doc.Affected}
	for i, p := range doc.Projects {
		lp := &list.Projects[i]
		projectFields.copy(lp, &p)
		lp.Tasks = make([]ListedTask, len(p.Tasks))
		for j := range p.Tasks {
			taskFields.copy(&lp.Tasks[j], &p.Tasks[j])
		}
	}
	return list
}

// taskListPage is listTasks' answer: the list, its affected reasons those of the projects the page
// lists.
type taskListPage struct{ *TaskList }

// MarshalJSON writes the list with the reasons of the listed projects only.
func (p taskListPage) MarshalJSON() ([]byte, error) {
	l := *p.TaskList
	l.Affected = affectedOf(l.Affected, len(l.Projects), func(i int) string { return l.Projects[i].Name }, l.TotalProjects)
	return json.Marshal(l)
}
