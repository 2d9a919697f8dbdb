package workspace

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vzn/vx/engine/config"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/pathglob"
	"github.com/vzn/vx/engine/vxerr"
)

// reader reads one config file's exported values with type checks, so that every refusal names
// the file, the line the key was written on, and the key.
type reader struct {
	sess *config.Session
	file string
	// secrets collects the names of the secrets read, so that an error met later in the same
	// load can still mask their values.
	secrets map[string]bool
}

// errAt returns a config error positioned at keyPath of the reader's file.
func (r reader) errAt(keyPath, format string, args ...any) error {
	ce := &vxerr.ConfigError{File: r.file, Msg: fmt.Sprintf(format, args...)}
	if r.sess != nil {
		ce.Line, ce.Col, _ = r.sess.Position(r.file, keyPath)
	}
	return ce
}

// origin is where keyPath of the reader's file was written.
func (r reader) origin(keyPath string) graph.Origin {
	o := graph.Origin{File: r.file}
	if r.sess != nil {
		o.Line, o.Col, _ = r.sess.Position(r.file, keyPath)
	}
	return o
}

// object checks that v is an object with only the allowed keys.
func (r reader) object(keyPath string, v any, allowed ...string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, r.errAt(keyPath, "%s must be an object, not %s", keyPath, jsType(v))
	}
	for _, k := range sortedKeys(m) {
		if !slices.Contains(allowed, k) {
			return nil, r.errAt(join(keyPath, k), "unknown field %q in %s (known: %s)", k, orTop(keyPath), strings.Join(allowed, ", "))
		}
	}
	return m, nil
}

func (r reader) str(keyPath string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", r.errAt(keyPath, "%s must be a string, not %s", keyPath, jsType(v))
	}
	return s, nil
}

func (r reader) boolean(keyPath string, v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, r.errAt(keyPath, "%s must be true or false, not %s", keyPath, jsType(v))
	}
	return b, nil
}

func (r reader) strings(keyPath string, v any) ([]string, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, r.errAt(keyPath, "%s must be a list of strings, not %s", keyPath, jsType(v))
	}
	out := make([]string, 0, len(list))
	for i, item := range list {
		s, ok := item.(string)
		if !ok {
			return nil, r.errAt(keyPath, "%s[%d] must be a string, not %s", keyPath, i, jsType(item))
		}
		out = append(out, s)
	}
	return out, nil
}

// globs reads a list of path globs: relative to the project folder, or from the workspace root
// when written "//path". A glob that climbs out with ".." is refused, naming the spelling to use.
func (r reader) globs(keyPath string, v any) ([]string, error) {
	list, err := r.strings(keyPath, v)
	if err != nil {
		return nil, err
	}
	for i, g := range list {
		if err := pathglob.Check(g); err != nil {
			return nil, r.errAt(keyPath, "%s[%d]: %v", keyPath, i, err)
		}
	}
	return list, nil
}

// duration reads a timeout: a Go duration string ("90s", "2m", "1h30m") or a number of milliseconds.
func (r reader) duration(keyPath string, v any) (time.Duration, string, error) {
	switch x := v.(type) {
	case string:
		d, err := time.ParseDuration(x)
		if err != nil || d <= 0 {
			return 0, "", r.errAt(keyPath, "%s %q is not a positive duration (write e.g. \"90s\", \"2m\" or a number of milliseconds)", keyPath, x)
		}
		return d, x, nil
	case int64:
		if x <= 0 {
			return 0, "", r.errAt(keyPath, "%s must be a positive number of milliseconds", keyPath)
		}
		d := time.Duration(x) * time.Millisecond
		return d, d.String(), nil
	case float64:
		if x <= 0 || math.IsInf(x, 0) || math.IsNaN(x) {
			return 0, "", r.errAt(keyPath, "%s must be a positive number of milliseconds", keyPath)
		}
		d := time.Duration(x * float64(time.Millisecond))
		return d, d.String(), nil
	}
	return 0, "", r.errAt(keyPath, "%s must be a duration string or a number of milliseconds, not %s", keyPath, jsType(v))
}

// taskFields lists the fields a task config may declare.
var taskFields = []string{"command", "dependsOn", "inputs", "outputs", "env", "exec", "cache", "timeout", "sandbox", "description", "persistent", "all", "ifScript"}

// taskSpec is a task's config as declared in one file: only the fields that file set.
type taskSpec struct {
	set         map[string]bool
	origins     map[string]graph.Origin
	command     string
	description string
	dependsOn   []string
	inputs      []string
	outputs     []string
	env         []string
	execEnv     map[string]graph.EnvValue
	cache       bool
	timeout     time.Duration
	timeoutSpec string
	sandbox     *graph.Sandbox
	persistent  bool
	all         bool
	ifScript    bool
}

// taskSpec reads one task's config at keyPath ("tasks.build").
func (r reader) taskSpec(keyPath string, v any) (*taskSpec, error) {
	m, err := r.object(keyPath, v, taskFields...)
	if err != nil {
		return nil, err
	}
	ts := &taskSpec{set: map[string]bool{}, origins: map[string]graph.Origin{}}
	for _, k := range sortedKeys(m) {
		val, kp := m[k], join(keyPath, k)
		if val == nil {
			return nil, r.errAt(kp, "%s is null (leave the field out instead)", kp)
		}
		switch k {
		case "command":
			ts.command, err = r.str(kp, val)
			if err == nil && strings.TrimSpace(ts.command) == "" {
				err = r.errAt(kp, "%s is empty", kp)
			}
		case "description":
			ts.description, err = r.str(kp, val)
		case "dependsOn":
			ts.dependsOn, err = r.strings(kp, val)
			for i, d := range ts.dependsOn {
				if err == nil && !validDepSpec(d) {
					err = r.errAt(kp, "%s[%d] %q is not a task reference (write \"build\", \"^build\" or \"project#build\")", kp, i, d)
				}
			}
		case "inputs":
			ts.inputs, err = r.globs(kp, val)
			if ts.inputs == nil {
				ts.inputs = []string{}
			}
		case "outputs":
			ts.outputs, err = r.globs(kp, val)
		case "env":
			ts.env, err = r.strings(kp, val)
		case "exec":
			ts.execEnv, err = r.exec(kp, val)
		case "cache":
			ts.cache, err = r.boolean(kp, val)
		case "timeout":
			ts.timeout, ts.timeoutSpec, err = r.duration(kp, val)
		case "sandbox":
			ts.sandbox, err = r.sandbox(kp, val)
		case "persistent":
			ts.persistent, err = r.boolean(kp, val)
		case "all":
			ts.all, err = r.boolean(kp, val)
		case "ifScript":
			ts.ifScript, err = r.boolean(kp, val)
		}
		if err != nil {
			return nil, err
		}
		ts.set[k] = true
		ts.origins[k] = r.origin(kp)
	}
	return ts, nil
}

func validDepSpec(d string) bool {
	if d == "" || d == "^" {
		return false
	}
	if strings.Contains(d, "#") {
		_, _, ok := graph.SplitTaskID(d)
		return ok
	}
	return true
}

func (r reader) exec(keyPath string, v any) (map[string]graph.EnvValue, error) {
	m, err := r.object(keyPath, v, "env")
	if err != nil {
		return nil, err
	}
	out := map[string]graph.EnvValue{}
	envVal, ok := m["env"]
	if !ok {
		return out, nil
	}
	kp := join(keyPath, "env")
	env, ok := envVal.(map[string]any)
	if !ok {
		return nil, r.errAt(kp, "%s must be an object of names to values, not %s", kp, jsType(envVal))
	}
	for _, name := range sortedKeys(env) {
		switch x := env[name].(type) {
		case string:
			out[name] = graph.EnvValue{Value: x}
		case int64, float64, bool:
			out[name] = graph.EnvValue{Value: fmt.Sprint(x)}
		case map[string]any:
			sec, err := r.object(join(kp, name), x, "secret")
			if err != nil {
				return nil, err
			}
			s, err := r.str(join(kp, name, "secret"), sec["secret"])
			if err != nil {
				return nil, err
			}
			if s == "" {
				return nil, r.errAt(join(kp, name, "secret"), "%s.secret is empty", join(kp, name))
			}
			if r.secrets != nil {
				r.secrets[s] = true
			}
			out[name] = graph.EnvValue{Secret: s}
		default:
			return nil, r.errAt(join(kp, name), "%s must be a string or { secret: 'NAME' }, not %s", join(kp, name), jsType(x))
		}
	}
	return out, nil
}

func (r reader) sandbox(keyPath string, v any) (*graph.Sandbox, error) {
	switch x := v.(type) {
	case bool:
		if !x {
			return nil, nil
		}
		return &graph.Sandbox{}, nil
	case map[string]any:
		m, err := r.object(keyPath, x, "network", "read", "write")
		if err != nil {
			return nil, err
		}
		sb := &graph.Sandbox{}
		if n, ok := m["network"]; ok {
			if sb.Network, err = r.boolean(join(keyPath, "network"), n); err != nil {
				return nil, err
			}
		}
		if rd, ok := m["read"]; ok {
			if sb.Read, err = r.globs(join(keyPath, "read"), rd); err != nil {
				return nil, err
			}
		}
		if wr, ok := m["write"]; ok {
			if sb.Write, err = r.globs(join(keyPath, "write"), wr); err != nil {
				return nil, err
			}
		}
		return sb, nil
	}
	return nil, r.errAt(keyPath, "%s must be true, false or { network, read, write }, not %s", keyPath, jsType(v))
}

// jsType names a value's type the way a TypeScript author would.
func jsType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("a string (%q)", x)
	case bool:
		return fmt.Sprintf("a boolean (%v)", x)
	case int64, float64:
		return fmt.Sprintf("a number (%v)", x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a function"
}

func join(parts ...string) string {
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	return strings.Join(nonEmpty, ".")
}

func orTop(keyPath string) string {
	if keyPath == "" {
		return "the config"
	}
	return keyPath
}

// sortedKeys lists a map's keys in order, as a non-nil slice (an empty list, never null, in JSON).
func sortedKeys[V any](m map[string]V) []string {
	return append([]string{}, slices.Sorted(maps.Keys(m))...)
}
