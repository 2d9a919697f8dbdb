package config

import (
	"fmt"
	"strings"

	"github.com/dop251/goja"
)

// Built-in module names a config imports.
const (
	ModuleConfig = "@vzn/vx/config"
	ModuleMCP    = "@vzn/vx-mcp"
)

// builtinModules holds the modules vx provides to configs, as CommonJS-style objects: the bundle
// keeps them external and its require() calls get these.
var builtinModules = map[string]string{
	ModuleConfig: `({
  defineWorkspace(config) { return config },
  defineProject(config) { return config },
  definePlugin(plugin) { return plugin },
})`,
	ModuleMCP: `({
  mcp(options) {
    const run = options === undefined || options === null || options.run === undefined ? true : options.run
    const sandbox = options === undefined || options === null ? undefined : options.sandbox
    return { name: 'mcp', commands: ['mcp'], options: sandbox === undefined ? { run } : { run, sandbox } }
  },
})`,
}

// installBuiltins defines require() for vx's own modules; any other name throws, as a config
// cannot load modules at run time.
func installBuiltins(vm *goja.Runtime) {
	mods := map[string]goja.Value{}
	for name, src := range builtinModules {
		v, err := vm.RunScript("vx:"+name, src)
		if err != nil {
			panic(fmt.Sprintf("config: built-in module %s: %v", name, err))
		}
		mods[name] = v
	}
	_ = vm.Set("require", func(call goja.FunctionCall) goja.Value {
		name := call.Argument(0).String()
		if m, ok := mods[name]; ok {
			return m
		}
		panic(vm.NewTypeError("cannot load %q at run time", name))
	})
}

// unresolvedNodeBuiltin recognises esbuild's failure to resolve a Node built-in.
func unresolvedNodeBuiltin(text string) (string, bool) {
	const prefix = "Could not resolve \""
	if !strings.HasPrefix(text, prefix) {
		return "", false
	}
	mod := strings.TrimSuffix(strings.TrimPrefix(text, prefix), "\"")
	if strings.HasPrefix(mod, "node:") {
		return mod, true
	}
	base := mod
	if i := strings.IndexByte(base, '/'); i > 0 && base != "fs/promises" && !strings.HasPrefix(base, "path/") && !strings.HasPrefix(base, "stream/") {
		base = base[:i]
	}
	for _, b := range nodeBuiltins {
		if b == mod || b == base {
			return mod, true
		}
	}
	return "", false
}

// nodeBuiltins lists Node's built-in modules, which a config cannot import: it runs without Node.
var nodeBuiltins = strings.Fields(`assert async_hooks buffer child_process cluster console constants crypto dgram
diagnostics_channel dns domain events fs fs/promises http http2 https inspector module net os path path/posix
path/win32 perf_hooks process punycode querystring readline repl sqlite stream stream/promises string_decoder sys
test timers tls trace_events tty url util v8 vm wasi worker_threads zlib`)
