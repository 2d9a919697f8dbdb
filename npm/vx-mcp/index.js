'use strict'
// @vzn/vx-mcp at run time, for tools that import a config (vx itself evaluates config with its
// built-in copy, which returns the same object). The types are index.d.ts.
exports.mcp = function mcp(options) {
  const run = options == null || options.run === undefined ? true : options.run
  return { name: 'mcp', commands: ['mcp'], options: { ...options, run } }
}
