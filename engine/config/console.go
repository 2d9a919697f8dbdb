package config

import (
	"io"
	"strings"
	"sync"

	"github.com/dop251/goja"
)

// console is the config's console object: every method writes one line to the writer (stderr in
// the CLI and the server), never to stdout.
type console struct {
	mu sync.Mutex
	w  io.Writer
}

func newConsole(w io.Writer) *console {
	if w == nil {
		w = io.Discard
	}
	return &console{w: w}
}

func (c *console) install(vm *goja.Runtime) {
	obj := vm.NewObject()
	for _, name := range []string{"log", "info", "debug", "warn", "error", "trace"} {
		_ = obj.Set(name, func(call goja.FunctionCall) goja.Value {
			c.print(vm, call.Arguments)
			return goja.Undefined()
		})
	}
	_ = vm.Set("console", obj)
}

func (c *console) print(vm *goja.Runtime, args []goja.Value) {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = format(vm, a)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _ = io.WriteString(c.w, strings.Join(parts, " ")+"\n")
}

// format renders a value the way a console would: strings bare, objects as JSON.
func format(vm *goja.Runtime, v goja.Value) string {
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Function" || obj.ClassName() == "Error" {
		return v.String()
	}
	jsonObj := vm.Get("JSON").ToObject(vm)
	stringify, _ := goja.AssertFunction(jsonObj.Get("stringify"))
	s, err := stringify(jsonObj, v)
	if err != nil || goja.IsUndefined(s) {
		return v.String()
	}
	return s.String()
}
