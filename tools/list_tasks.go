package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/vzn/vx/engine/show"
)

// listTasksPageBytes bounds one page of listTasks' answer, so a large workspace never floods an
// agent's context: past it the answer carries nextCursor.
const listTasksPageBytes = 90_000

type listTasksArgs struct {
	Project  string    `json:"project" args:"nonempty"`
	Filter   *Filter   `json:"filter"`
	Affected *Affected `json:"affected"`
	Cursor   string    `json:"cursor" args:"nonempty"`
}

// TaskList is listTasks' answer: the projects and the tasks a run would see.
type TaskList struct {
	Projects []ListedProject `json:"projects"`
	// TotalProjects counts the projects selected, across every page.
	TotalProjects int `json:"totalProjects"`
	// NextCursor, when present, fetches the next page.
	NextCursor string            `json:"nextCursor,omitempty"`
	Affected   map[string]string `json:"affected,omitempty"`
}

// ListedProject is one project of listTasks' answer.
type ListedProject struct {
	Name      string       `json:"name"`
	Dir       string       `json:"dir"`
	Tags      []string     `json:"tags"`
	DependsOn []string     `json:"dependsOn"`
	Tasks     []ListedTask `json:"tasks"`
}

// ListedTask is one task of listTasks' answer.
type ListedTask struct {
	ID          string   `json:"id"`
	Command     string   `json:"command"`
	Description string   `json:"description,omitempty"`
	DependsOn   []string `json:"dependsOn"`
	Cache       bool     `json:"cache"`
}

func (e *Env) listTasks() Tool {
	return Tool{
		Name:        "listTasks",
		Title:       "List projects and tasks",
		Description: "What can I run here? Every project (tags, dependencies) and the tasks a run would see: id, command, dependsOn, cache. project narrows to one; filter and affected narrow as vx show --filter/--affected. Call it first in a workspace.",
		InputSchema: schema(map[string]any{
			"project":  map[string]any{"type": "string", "minLength": 1, "description": "Only this project."},
			"filter":   filterSchema,
			"affected": affectedSchema,
			"cursor":   map[string]any{"type": "string", "minLength": 1, "description": "The nextCursor of the previous page."},
		}),
		OutputSchema: outputSchema("projects", "totalProjects"),
		Annotations:  readOnly,
		Handler: func(ctx context.Context, call *Call) (any, error) {
			var args listTasksArgs
			if err := DecodeArgs(call.Args, &args); err != nil {
				return nil, err
			}
			offset := 0
			if args.Cursor != "" {
				raw, err := base64.RawURLEncoding.DecodeString(args.Cursor)
				n, cerr := strconv.Atoi(string(raw))
				if err != nil || cerr != nil || n < 0 {
					return nil, Refusef("argument %q is not a cursor this tool gave", "cursor")
				}
				offset = n
			}
			ws, err := e.load(ctx)
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
					return nil, Refusef("argument %q: no project is named %q", "project", args.Project)
				}
			}
			return pageTasks(doc, offset)
		},
	}
}

// pageTasks builds one page of the list from offset, as many projects as fit the page budget
// (always at least one).
func pageTasks(doc *show.Document, offset int) (*TaskList, error) {
	list := &TaskList{Projects: []ListedProject{}, TotalProjects: len(doc.Projects), Affected: doc.Affected}
	if offset > len(doc.Projects) {
		return nil, Refusef("argument %q is past the end of the list", "cursor")
	}
	size := 200
	for i := offset; i < len(doc.Projects); i++ {
		p := doc.Projects[i]
		lp := ListedProject{Name: p.Name, Dir: p.Dir, Tags: p.Tags, DependsOn: p.DependsOn, Tasks: make([]ListedTask, 0, len(p.Tasks))}
		for _, t := range p.Tasks {
			lp.Tasks = append(lp.Tasks, ListedTask{ID: t.ID, Command: t.Command, Description: t.Description, DependsOn: t.DependsOn, Cache: t.Cache})
		}
		data, err := json.Marshal(lp)
		if err != nil {
			return nil, fmt.Errorf("list tasks: %w", err)
		}
		if size+len(data) > listTasksPageBytes && len(list.Projects) > 0 {
			list.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(i)))
			break
		}
		size += len(data) + 1
		list.Projects = append(list.Projects, lp)
	}
	return list, nil
}
