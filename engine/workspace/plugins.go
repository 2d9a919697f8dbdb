package workspace

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/vzn/vx/engine/graph"
)

// plugins reads the plugins list.
func (b *build) plugins(r reader, top map[string]any) ([]graph.Plugin, *graph.MCPOptions, error) {
	v, ok := top["plugins"]
	if !ok {
		return []graph.Plugin{}, nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, nil, r.errAt("plugins", "plugins must be a list, not %s", jsType(v))
	}
	plugins := []graph.Plugin{}
	var mcp *graph.MCPOptions
	for i, item := range list {
		kp := fmt.Sprintf("plugins[%d]", i)
		m, ok := item.(map[string]any)
		if !ok {
			return nil, nil, r.errAt("plugins", "%s must be a plugin object { name, commands?, stage? }, not %s", kp, jsType(item))
		}
		name, ok := m["name"].(string)
		if !ok || name == "" {
			return nil, nil, r.errAt("plugins", "%s has no name", kp)
		}
		p := graph.Plugin{Name: name, Commands: []string{}, Stage: b.sess.PluginStage(b.ws, i) != nil}
		switch c := m["commands"].(type) {
		case nil:
		case []any:
			for _, x := range c {
				s, ok := x.(string)
				if !ok {
					return nil, nil, r.errAt("plugins", "%s.commands must list command names", kp)
				}
				p.Commands = append(p.Commands, s)
			}
		case map[string]any:
			p.Commands = append([]string{}, slices.Sorted(maps.Keys(c))...)
		default:
			return nil, nil, r.errAt("plugins", "%s.commands must list command names", kp)
		}
		if name == "mcp" {
			opts, err := mcpOptions(r, m["options"])
			if err != nil {
				return nil, nil, err
			}
			mcp = opts
		}
		plugins = append(plugins, p)
	}
	return plugins, mcp, nil
}

// mcpOptionNames are the options mcp() takes; any other is refused, naming them.
var mcpOptionNames = []string{"answerChars", "args", "run", "sandbox", "tools"}

func mcpOptions(r reader, v any) (*graph.MCPOptions, error) {
	opts, _ := v.(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		if !slices.Contains(mcpOptionNames, k) {
			return nil, r.errAt("plugins", "unknown field %q in mcp() options (known: %s)", k, strings.Join(mcpOptionNames, ", "))
		}
	}
	out, err := mcpRun(r, opts["run"])
	if err != nil {
		return nil, err
	}
	if out.AnswerChars, err = answerChars(r, opts["answerChars"]); err != nil {
		return nil, err
	}
	switch sb := opts["sandbox"].(type) {
	case nil:
	case bool:
		out.Sandbox = sb
	default:
		return nil, r.errAt("plugins", "mcp({ sandbox }) must be true or false, not %s", jsType(sb))
	}
	if out.Tools, err = mcpTools(r, opts["tools"]); err != nil {
		return nil, err
	}
	switch args := opts["args"].(type) {
	case nil:
	case bool:
		out.Args = args
	default:
		return nil, r.errAt("plugins", "mcp({ args }) must be true or false, not %s", jsType(args))
	}
	return out, nil
}

// mcpTools reads mcp({ tools }): a non-empty list of tool names, or absent (nil). Names that are no
// tool of vx mcp are refused, every one named, with the known ones.
func mcpTools(r reader, v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	names, err := r.strings("plugins", v)
	if err != nil || len(names) == 0 {
		return nil, r.errAt("plugins", "mcp({ tools }) must be a non-empty list of tool names (known: %s)", strings.Join(graph.MCPToolNames, ", "))
	}
	var unknown []string
	for _, n := range names {
		if !slices.Contains(graph.MCPToolNames, n) {
			unknown = append(unknown, strconv.Quote(n))
		}
	}
	if len(unknown) > 0 {
		return nil, r.errAt("plugins", "mcp({ tools }) names no tool of vx mcp: %s (known: %s)", strings.Join(unknown, ", "),
			strings.Join(graph.MCPToolNames, ", "))
	}
	return names, nil
}

// answerChars reads mcp({ answerChars }): a whole number within the bounds, or absent (0).
func answerChars(r reader, v any) (int, error) {
	if v == nil {
		return 0, nil
	}
	var n float64
	ok := true
	switch x := v.(type) {
	case int64:
		n = float64(x)
	case float64:
		n = x
	default:
		ok = false
	}
	if !ok || n != math.Trunc(n) || n < graph.MinAnswerChars || n > graph.MaxAnswerChars {
		return 0, r.errAt("plugins", "mcp({ answerChars }) must be a whole number of characters from %d to %d, not %v",
			graph.MinAnswerChars, graph.MaxAnswerChars, v)
	}
	return int(n), nil
}

// mcpRun reads mcp({ run }): true (the default), false, or a list of task names.
func mcpRun(r reader, v any) (*graph.MCPOptions, error) {
	switch run := v.(type) {
	case nil, bool:
		all, _ := run.(bool)
		if run == nil {
			all = true
		}
		return &graph.MCPOptions{RunAll: all}, nil
	case []any:
		names, err := r.strings("plugins", run)
		if err != nil {
			return nil, r.errAt("plugins", "mcp({ run }) must be true, false or a list of task names")
		}
		for _, n := range names {
			if n == "" || strings.Contains(n, "#") {
				return nil, r.errAt("plugins", "mcp({ run }): %q is not a task name", n)
			}
		}
		return &graph.MCPOptions{RunNames: names}, nil
	}
	return nil, r.errAt("plugins", "mcp({ run }) must be true, false or a list of task names")
}
