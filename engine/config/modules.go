package config

import (
	"regexp"
	"strings"
)

// Built-in module names a config imports.
const (
	ModuleConfig = "@vzn/vx/config"
	ModuleMCP    = "@vzn/vx-mcp"
)

// builtinModules holds the source of the modules vx provides to configs; they are plain JavaScript
// so they bundle like any other import.
var builtinModules = map[string]string{
	ModuleConfig: `
export function defineWorkspace(config) { return config }
export function defineProject(config) { return config }
export function definePlugin(plugin) { return plugin }
`,
	ModuleMCP: `
export function mcp(options) {
  const run = options === undefined || options === null || options.run === undefined ? true : options.run
  return { name: 'mcp', commands: ['mcp'], options: { run } }
}
`,
}

// nodeBuiltins lists Node's built-in modules, which a config cannot import: it runs without Node.
var nodeBuiltins = strings.Fields(`assert async_hooks buffer child_process cluster console constants crypto dgram
diagnostics_channel dns domain events fs fs/promises http http2 https inspector module net os path path/posix
path/win32 perf_hooks process punycode querystring readline repl sqlite stream stream/promises string_decoder sys
test timers tls trace_events tty url util v8 vm wasi worker_threads zlib`)

// nodeBuiltinFilter matches an import of a Node built-in, with or without the node: prefix.
var nodeBuiltinFilter = func() string {
	quoted := make([]string, len(nodeBuiltins))
	for i, m := range nodeBuiltins {
		quoted[i] = regexp.QuoteMeta(m)
	}
	return `^(node:.*|(` + strings.Join(quoted, "|") + `)(/.*)?)$`
}()

// builtinFilter matches the modules vx provides.
var builtinFilter = `^` + regexp.QuoteMeta(ModuleConfig) + `$|^` + regexp.QuoteMeta(ModuleMCP) + `$`
