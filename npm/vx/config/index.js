'use strict'
// @vzn/vx/config at run time, for tools that import a config (vx itself evaluates config with its
// built-in copy): each function returns its argument. The types are index.d.ts.
exports.defineWorkspace = (config) => config
exports.defineProject = (config) => config
exports.definePlugin = (plugin) => plugin
