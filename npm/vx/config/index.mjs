// @vzn/vx/config at run time, as an ES module: each function returns its argument.
export const defineWorkspace = (config) => config
export const defineProject = (config) => config
export const definePlugin = (plugin) => plugin
