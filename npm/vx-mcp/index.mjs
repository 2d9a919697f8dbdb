// @vzn/vx-mcp at run time, as an ES module (see index.js).
export function mcp(options) {
  const run = options == null || options.run === undefined ? true : options.run
  return { name: 'mcp', commands: ['mcp'], options: { ...options, run } }
}
