package tools

import (
	"context"
	"slices"

	"github.com/vzn/vx/actor/tool"
	"github.com/vzn/vx/actor/tool/window"
	"github.com/vzn/vx/engine/agents"
	"github.com/vzn/vx/engine/initplan"
)

type planInitArgs struct {
	Mode   string   `json:"mode" arg:"nonempty,enum=auto|turbo|nx|scripts,doc=auto (default): turbo.json, else nx.json, else package scripts."`
	Agents []string `json:"agents" arg:"doc=Hosts, as vx init --agents: claude, codex…, all."`
	Cursor string   `json:"cursor" arg:"nonempty,doc=nextCursor."`
}

// InitAnswer is planInit's answer, as the original's: vx init --dry's exit status and its
// --format json document.
type InitAnswer struct {
	ExitCode int            `json:"exitCode"`
	Init     *initplan.Plan `json:"init"`
}

// planInit answers as `vx init --dry --format json`.
func (d *Deps) planInit() tool.Tool {
	return tool.New(tool.Tool{
		Name:        "planInit",
		Title:       "Plan adopting vx",
		Description: "What would adopting vx write here? vx init --dry --format json: each file with its text and status, todos, notes, next commands, translated from turbo.json, nx.json or package scripts. Writes nothing.",
		Paged:       true,
		Annotations: readOnly,
		OutputTypes: documentSchema[initplan.Plan](),
	}, func(ctx context.Context, call *tool.Call, args planInitArgs) (*InitAnswer, error) {
		root, err := d.loader().Root()
		if err != nil {
			return nil, err
		}
		plan, err := initplan.Init(initplan.Options{Dir: root, Mode: args.Mode, Dry: true})
		if err != nil {
			return nil, err
		}
		if args.Agents != nil {
			if err := d.planAgents(ctx, root, args.Agents, plan); err != nil {
				return nil, err
			}
		}
		call.Window(ctx, args.Cursor, initLists(plan)...)
		return &InitAnswer{Init: plan}, nil
	})
}

// planAgents adds to plan the files `vx init --agents` would write for hosts, unwritten.
func (d *Deps) planAgents(ctx context.Context, root string, hosts []string, plan *initplan.Plan) error {
	opts := agents.Options{Root: root, Hosts: hosts, Dry: true}
	if ws, err := d.loader().Load(ctx); err == nil {
		opts.DeclaresMCP = ws.MCP != nil
		for _, p := range ws.Projects {
			for name := range p.Tasks {
				opts.Tasks = append(opts.Tasks, name)
			}
		}
	}
	slices.Sort(opts.Tasks)
	opts.Tasks = slices.Compact(opts.Tasks)
	ap, err := agents.Write(opts)
	if err != nil {
		return err
	}
	for _, f := range ap.Files {
		plan.Files = append(plan.Files, initplan.File{Path: f.Path, Text: f.Text, Status: f.Status})
	}
	plan.Notes = append(plan.Notes, ap.Todos...)
	plan.Derive()
	return nil
}

// initLists answers planInit's windowed lists: what could not be translated, the notes, the files
// and the projects. A first answer of a large workspace shows the first of each that fit, in that
// order, and the cursor the rest.
func initLists(plan *initplan.Plan) []window.List {
	p := *plan
	p.Files, p.Todos, p.Notes, p.Projects = nil, nil, nil, nil
	return summaryLists(jsonSize(InitAnswer{Init: &p}),
		headedOf(window.Of("init.todos", &plan.Todos), plan.Todos), headedOf(window.Of("init.notes", &plan.Notes), plan.Notes),
		headedOf(window.OfCut("init.files", &plan.Files, cutFile), plan.Files), headedOf(window.Of("init.projects", &plan.Projects), plan.Projects))
}
