// @vzn/vx-mcp: the mcp() plugin, which adds the `vx mcp` verb (an MCP server over this workspace).
//
// ONE SHAPE: McpOptions declares exactly the options vx's config reader takes from mcp()
// (engine/workspace); engine/workspace/dts_test.go fails on an option in one and not the other.
// Whoever adds an option to the reader (and to vx's built-in mcp()) adds it here, with a doc comment.

import type { Plugin } from '@vzn/vx/config'

/** The options of `mcp()`. */
export interface McpOptions {
  /**
   * What an agent may run through the runTasks tool: `true` (the default) any task; a list of task
   * names (`['test', 'lint']`) only those, any other refused before anything runs (a task's
   * `dependsOn` still runs); `false`: runTasks is not listed and the server runs nothing.
   */
  run?: boolean | string[]
  /**
   * The budget of every tool answer's text, in characters: a whole number from 8,000 to
   * 1,000,000 (default 40,000). A longer answer is windowed, with a cursor for the rest.
   */
  answerChars?: number
  /**
   * Confine every task an agent runs through runTasks: the task's own sandbox where it declares
   * one, narrowed to no network and writes to its outputs only (never wider). Part of those runs'
   * cache keys, like a declared sandbox.
   */
  sandbox?: boolean
  /**
   * Let runTasks pass `args` to the commands of the tasks it names, as `vx run test -- ARGS`
   * does (default `false`: a call with `args` is refused). Arguments can make a test runner load
   * any file (`--config`, `--setupFiles`), which `run`'s list of task names alone never lets an
   * agent do. planTasks takes `args` regardless: it runs nothing.
   */
  args?: boolean
  /**
   * The only tools `vx mcp` lists, by name (`['runTasks', 'getFailures', 'listTasks']`); the
   * default lists all fifteen. A name that is no tool of vx mcp is refused when the config loads,
   * named, with the known ones.
   */
  tools?: string[]
}

/** The plugin object `mcp()` returns. */
export interface McpPlugin extends Plugin {
  /** Always `'mcp'`. */
  name: 'mcp'
  /** The one verb the plugin adds: `vx mcp`. */
  commands: ['mcp']
  /** The options as given, with `run` defaulted to `true`. */
  options: McpOptions & { run: boolean | string[] }
}

/**
 * The MCP server plugin: `plugins: [mcp()]` in vx.workspace.ts adds `vx mcp`, a stdio MCP server
 * over the workspace's tasks, cache and run history for Claude Code, Cursor, Continue, Copilot and
 * any MCP client.
 */
export declare function mcp(options?: McpOptions): McpPlugin
