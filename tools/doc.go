// Package tools holds the fifteen tools of the MCP server `vx mcp` (package actor serves them):
// listTasks, getConfig, planTasks, runTasks and the rest, one file each.
//
// Each tool is a thin adapter over the engine function its CLI verb calls: it declares its
// argument and answer types (the schemas are generated from them), checks what the engine does
// not, and answers the verb's own document, which the tool framework (actor/tool) fits to the
// agent's answer budget. What the server keeps between calls (the loader, the watcher, the plan
// memo, the index reader, the log pages, the child started ahead) is the session (package
// engine/session) the tools share through Deps. runTasks alone runs a process: a `vx run` child
// the session starts, which runTasks orders and hands what the server already knows, and whose
// events it turns into progress notifications.
package tools
