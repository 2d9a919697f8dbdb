package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// pickable reports whether vx run, named no task, asks for one: a person is at a terminal (stdin
// and stderr are terminals) and nothing reads vx's answer as a document (--format json,
// --dry=json, the hidden descriptors of vx mcp's runTasks child).
func (a *app) pickable(rf *runFlags, stdin *os.File) bool {
	if a.format == "json" || rf.dry == "json" || rf.eventsFD > 0 || rf.handoffFD > 0 || rf.all {
		return false
	}
	return isTerminal(stdin) && isTerminal(a.stderr)
}

// pickTask lists every task of the projects vx run would work on (the filters', else the
// working folder's project, else all) with its description, and answers the id the person
// chooses on stdin.
func (a *app) pickTask(ctx context.Context, rf *runFlags, stdin io.Reader) (string, error) {
	ws, err := a.loadForRun(ctx, rf)
	if err != nil {
		return "", err
	}
	so, err := a.selectOptions(ws, &rf.sel)
	if err != nil {
		return "", err
	}
	if p := a.folderProject(ws); p != nil && len(rf.sel.filters) == 0 {
		so.Filters = append([]string{p.Name}, so.Filters...)
	}
	sel, err := workspace.Select(ctx, ws, so)
	if err != nil {
		return "", err
	}
	var items []graph.Task
	for _, name := range sel.Projects {
		p, _ := ws.Project(name)
		for _, tn := range p.TaskNames() {
			items = append(items, *p.Tasks[tn])
		}
	}
	if len(items) == 0 {
		return "", vxerr.Usagef("name the tasks to run, or --all: the selected projects have no task to pick")
	}
	return chooseTask(stdin, a.stderr, items)
}

// chooseTask writes the numbered list of tasks, each `project#task` with its description, to
// out and reads the choice from in: a number of the list or a task id. A choice that is neither
// is named and asked again; an empty line or the end of in chooses nothing, a refusal.
func chooseTask(in io.Reader, out io.Writer, tasks []graph.Task) (string, error) {
	width := 0
	for _, t := range tasks {
		width = max(width, utf8.RuneCountInString(t.ID))
	}
	numWidth := len(strconv.Itoa(len(tasks)))
	var b strings.Builder
	b.WriteString("Tasks:\n")
	for i, t := range tasks {
		line := fmt.Sprintf("  %*d  %s", numWidth, i+1, t.ID)
		if t.Description != "" {
			line += strings.Repeat(" ", width-utf8.RuneCountInString(t.ID)) + "  " + firstLine(t.Description)
		}
		b.WriteString(line + "\n")
	}
	if _, err := io.WriteString(out, b.String()); err != nil {
		return "", fmt.Errorf("write the task list: %w", err)
	}
	lines := bufio.NewReader(in)
	for {
		fmt.Fprintf(out, "Run which task? (1-%d or project#task; empty for none) ", len(tasks))
		line, err := lines.ReadString('\n')
		choice := strings.TrimSpace(line)
		if choice == "" {
			if err != nil && !errors.Is(err, io.EOF) {
				return "", fmt.Errorf("read the choice: %w", err)
			}
			if err != nil {
				fmt.Fprintln(out)
			}
			return "", vxerr.Usagef("no task chosen: name the tasks to run, or --all")
		}
		if id, ok := chosen(choice, tasks); ok {
			return id, nil
		}
		fmt.Fprintf(out, "vx: %q is not a number from 1 to %d nor a listed task\n", choice, len(tasks))
		if err != nil {
			return "", vxerr.Usagef("no task chosen: name the tasks to run, or --all")
		}
	}
}

// chosen answers the id of the task the choice names: by its number in the list, or its id.
func chosen(choice string, tasks []graph.Task) (string, bool) {
	if n, err := strconv.Atoi(choice); err == nil {
		if n >= 1 && n <= len(tasks) {
			return tasks[n-1].ID, true
		}
		return "", false
	}
	for _, t := range tasks {
		if t.ID == choice {
			return t.ID, true
		}
	}
	return "", false
}

// firstLine is s up to its first line break.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}
