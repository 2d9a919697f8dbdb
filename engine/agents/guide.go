package agents

import (
	"fmt"
	"strings"
)

// The markers around vx's section of a Markdown file the user also writes in.
const (
	beginMarker = "<!-- vx:begin (written by vx agents; edits inside are replaced) -->"
	endMarker   = "<!-- vx:end -->"
)

// markedSection puts body between the markers: replacing what is between them where the file has
// them, else appending it (or creating the file).
func markedSection(body string) edit {
	section := beginMarker + "\n" + strings.TrimRight(body, "\n") + "\n" + endMarker + "\n"
	return func(old []byte) ([]byte, error) {
		text := string(old)
		if i := strings.Index(text, beginMarker); i >= 0 {
			if j := strings.Index(text[i:], endMarker); j >= 0 {
				rest := text[i+j+len(endMarker):]
				rest = strings.TrimPrefix(rest, "\n")
				return []byte(text[:i] + section + rest), nil
			}
			return nil, fmt.Errorf("%q without %q: remove it or close it", beginMarker, endMarker)
		}
		switch {
		case text == "":
		case strings.HasSuffix(text, "\n\n"):
		case strings.HasSuffix(text, "\n"):
			text += "\n"
		default:
			text += "\n\n"
		}
		return []byte(text + section), nil
	}
}

// pointer is the section of CLAUDE.md or GEMINI.md: both hosts import a file named with @.
func pointer(ref string) string {
	return "How to build, test and debug this workspace with vx: see " + ref + " (its vx section)."
}

// taskLine lists the workspace's task names.
func taskLine(tasks []string) string {
	if len(tasks) == 0 {
		return "This workspace declares no tasks yet (`vx show` lists them once it does)."
	}
	const most = 40
	shown := tasks
	more := ""
	if len(shown) > most {
		shown, more = shown[:most], fmt.Sprintf(" and %d more (`vx show`)", len(tasks)-most)
	}
	return "Tasks here: `" + strings.Join(shown, "`, `") + "`" + more + "; a task id is `project#task`."
}

// usage is the part the AGENTS.md section and the skill share: which tool answers what.
func usage(tasks []string) string {
	return `This workspace runs its tasks with vx; its MCP server is ` + "`vx mcp`" + ` (tools below).
` + taskLine(tasks) + `

- What can run: listTasks (a summary first; project or filter for the list), getConfig for one task's inputs, outputs, env.
- Run: runTasks (tasks, filter, affected); plan without running: planTasks.
- A failure: getFailures (each failed task's output and file:line), getTaskLog for any task's log.
- Cache: whyDidThisRerun (what changed in a task's key), explainCacheKey, getCacheStats, pruneCache (a dry run unless dryRun is false).
- History and the workspace: getRunHistory, getWorkspaceInfo, checkLock; the manual: searchDocs.
- Without MCP, the shell answers the same documents: ` + "`vx show --format json`, `vx run build --format json`, `vx last --log app#test --format json`, `vx why app#test --format json`" + `.
`
}

// agentsSection is vx's section of AGENTS.md, which Codex, Cursor, Copilot and Gemini CLI read.
func agentsSection(tasks []string) string {
	return "## vx\n\n" + usage(tasks)
}

// skill is the Claude Code skill .claude/skills/vx/SKILL.md: frontmatter with its name and a
// description that tells the model when to load it.
func skill(tasks []string) string {
	return `---
name: vx
description: Build, test, lint and debug this monorepo's tasks with vx - which vx MCP tool to call to run tasks, read a failure's file:line, or learn why a task reran or missed the cache.
---

# vx in this workspace

` + usage(tasks)
}
