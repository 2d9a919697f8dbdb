package tools

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/show"
)

type listTasksArgs struct {
	Project  string     `json:"project" arg:"nonempty,doc=Only this project."`
	Filter   FilterList `json:"filter" arg:"doc=--filter value(s)."`
	Affected *Affected  `json:"affected" arg:"doc=Changed since the default branch (true) or this ref, and dependents."`
	Cursor   string     `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// TaskList is listTasks' answer: the projects and the tasks a run would see.
type TaskList struct {
	Projects []ListedProject `json:"projects"`
	// TotalProjects counts the projects selected, across every page.
	TotalProjects int               `json:"totalProjects"`
	Affected      map[string]string `json:"affected,omitempty"`
	// TaskNames and Tags summarise a call with no narrowing argument: each task name and tag with
	// how many projects have it. The projects are then behind the cursor.
	TaskNames []NameCount `json:"taskNames,omitempty"`
	Tags      []NameCount `json:"tags,omitempty"`
}

// summaryProjectChars is how large the project list of a summary may be and still be answered in
// it: a small workspace's first answer is whole, a large one's fits 8,000 characters.
const summaryProjectChars = 6000

// NameCount is a task name or a tag and how many projects have it.
type NameCount struct {
	Name     string `json:"name"`
	Projects int    `json:"projects"`
}

// countNames counts, for each name the projects give, how many projects give it; sorted by name.
func countNames(projects []ListedProject, names func(ListedProject) []string) []NameCount {
	counts := map[string]int{}
	for _, p := range projects {
		seen := map[string]bool{}
		for _, n := range names(p) {
			if !seen[n] {
				seen[n] = true
				counts[n]++
			}
		}
	}
	out := make([]NameCount, 0, len(counts))
	for _, n := range slices.Sorted(maps.Keys(counts)) {
		out = append(out, NameCount{Name: n, Projects: counts[n]})
	}
	return out
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
// Name and Cached are the original's names of the task's name and of whether it caches.
type ListedTask struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Command     string   `json:"command"`
	Description string   `json:"description,omitempty"`
	DependsOn   []string `json:"dependsOn"`
	Cache       bool     `json:"cache"`
	Cached      bool     `json:"cached"`
	// Persistent marks a long-running task: runTasks refuses it.
	Persistent bool `json:"persistent,omitempty"`
}

func (d *Deps) listTasks() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "listTasks",
		Title:       "List projects and tasks",
		Description: "What can I run here? Each project (tags, dependencies) and its tasks: id, command, dependsOn, cache. No argument: a summary (task names, tags with project counts; projects if few); project, filter, affected or cursor list them.",
		Paged:       true,
		Annotations: readOnly,
	}, func(ctx context.Context, call *tool.Call, args listTasksArgs) (*taskListPage, error) {
		ws, err := d.load(ctx)
		if err != nil {
			return nil, err
		}
		if args.Project != "" && (args.Filter != nil || args.Affected != nil) {
			return nil, tool.Refusef("argument %q does not combine with filter or affected: name the project in filter instead (filter: [%q, …])", "project", args.Project)
		}
		doc, err := show.Show(ctx, ws, show.Options{Target: args.Project, Select: selectOptions(args.Filter, args.Affected)})
		if err != nil {
			return nil, err
		}
		if args.Project != "" {
			if _, ok := ws.Project(args.Project); !ok {
				return nil, tool.Refusef("argument %q: no project is named %q", "project", args.Project)
			}
		}
		list := listOf(doc)
		projects := window.Of("projects", &list.Projects)
		if args.Project == "" && args.Filter == nil && args.Affected == nil && args.Cursor == "" {
			list.TaskNames = countNames(list.Projects, func(p ListedProject) []string {
				names := make([]string, len(p.Tasks))
				for i, t := range p.Tasks {
					_, names[i], _ = strings.Cut(t.ID, "#")
				}
				return names
			})
			list.Tags = countNames(list.Projects, func(p ListedProject) []string { return p.Tags })
			if data, err := json.Marshal(list.Projects); err != nil || len(data) > summaryProjectChars {
				projects = projects.Head(0)
			}
		}
		call.Window(ctx, args.Cursor, projects)
		return &taskListPage{list}, nil
	})
}

// The listed types are projections of show's: each field is show's field of the same name, type
// and json tag (Tasks aside, which is projected in turn), checked when the package starts.
var (
	projectFields = projection[ListedProject, show.Project]("Tasks")
	taskFields    = projection[ListedTask, show.Task]("Cached")
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
			lp.Tasks[j].Cached = lp.Tasks[j].Cache
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
