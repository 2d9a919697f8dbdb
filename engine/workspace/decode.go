package workspace

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/vzn/vx/engine/bytesize"
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
	for _, k := range slices.Sorted(maps.Keys(m)) {
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

// taskSpec is a task's config as declared in one file: the fields that file set (set, and where:
// origins), read into task.
type taskSpec struct {
	set     map[string]bool
	origins map[string]graph.Origin
	task    graph.Task
}

// declares reports whether the file set the field.
func (s *taskSpec) declares(name string) bool { return s.set[name] }

// applyTo sets on t every field this spec declared, with where it was declared.
func (s *taskSpec) applyTo(t *graph.Task) {
	for name := range s.set {
		t.Origins.Set(name, s.origins[name])
		fieldCodecs[name].copy(t, &s.task)
	}
}

// fieldCodec reads one task field (graph.TaskFields) from config into a task, and copies it from
// one task to another: the one place a field's config form and its task form meet.
type fieldCodec struct {
	read func(r reader, keyPath string, v any, t *graph.Task) error
	copy func(dst, src *graph.Task)
}

// fieldCodecs holds the codec of every field in graph.TaskFields (a test keeps the two equal).
var fieldCodecs = map[string]fieldCodec{
	"command": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		if t.Command, err = r.str(kp, v); err == nil && strings.TrimSpace(t.Command) == "" {
			err = r.errAt(kp, "%s is empty", kp)
		}
		return err
	}, func(d, s *graph.Task) { d.Command = s.Command }},
	"description": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Description, err = r.str(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Description = s.Description }},
	"dependsOn": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		if t.DependsOnSpec, err = r.strings(kp, v); err != nil {
			return err
		}
		for i, dep := range t.DependsOnSpec {
			if !validDepSpec(dep) {
				return r.errAt(kp, "%s[%d] %q is not a task reference (write \"build\", \"^build\", \"project#build\" or a pattern, \"lint:*\")", kp, i, dep)
			}
		}
		return nil
	}, func(d, s *graph.Task) { d.DependsOnSpec = s.DependsOnSpec }},
	"inputs": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		if t.Inputs, err = r.globs(kp, v); err == nil && t.Inputs == nil {
			t.Inputs = []string{} // declared empty: no file at all, never the default
		}
		for i, g := range t.Inputs {
			if msg := badDependencyInput(g); msg != "" {
				return r.errAt(kp, "%s[%d]: %q: %s", kp, i, g, msg)
			}
		}
		return err
	}, func(d, s *graph.Task) { d.Inputs = s.Inputs }},
	"outputs": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Outputs, err = r.globs(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Outputs = s.Outputs }},
	"rewrites": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		if t.Rewrites, err = r.strings(kp, v); err != nil {
			return err
		}
		for i, g := range t.Rewrites {
			if strings.HasPrefix(g, "!") || strings.HasPrefix(g, "/") || strings.HasPrefix(g, "$") || !doublestar.ValidatePattern(g) || strings.Contains(g, "..") {
				return r.errAt(kp, "%s[%d] %q is not a glob of files inside the project (write e.g. \"package.json\")", kp, i, g)
			}
		}
		return nil
	}, func(d, s *graph.Task) { d.Rewrites = s.Rewrites }},
	"env": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Env, err = r.strings(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Env = s.Env }},
	"exec": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		if t.ExecEnv, t.Retries, err = r.exec(kp, v); err != nil {
			return err
		}
		t.RemoteExec, err = r.execRemote(kp, v)
		return err
	}, func(d, s *graph.Task) { d.ExecEnv, d.Retries, d.RemoteExec = s.ExecEnv, s.Retries, s.RemoteExec }},
	"cache": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Cache, err = r.boolean(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Cache = s.Cache }},
	"timeout": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Timeout, t.TimeoutSpec, err = r.duration(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Timeout, d.TimeoutSpec = s.Timeout, s.TimeoutSpec }},
	"sandbox": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Sandbox, err = r.sandbox(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Sandbox = s.Sandbox }},
	"persistent": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Persistent, err = r.boolean(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Persistent = s.Persistent }},
	"interruptible": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Interruptible, err = r.boolean(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Interruptible = s.Interruptible }},
	"all": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.All, err = r.boolean(kp, v)
		return err
	}, func(d, s *graph.Task) { d.All = s.All }},
	"ifScript": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.IfScript, err = r.boolean(kp, v)
		return err
	}, func(d, s *graph.Task) { d.IfScript = s.IfScript }},
	"passThroughEnv": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.PassThroughEnv, err = r.strings(kp, v)
		return err
	}, func(d, s *graph.Task) { d.PassThroughEnv = s.PassThroughEnv }},
	"envMode": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.EnvMode, err = r.envMode(kp, v)
		return err
	}, func(d, s *graph.Task) { d.EnvMode = s.EnvMode }},
	"readyWhen": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.ReadyWhen, err = r.readyWhen(kp, v)
		return err
	}, func(d, s *graph.Task) { d.ReadyWhen = s.ReadyWhen }},
	"runtimeInputs": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.RuntimeInputs, err = r.probes(kp, v)
		return err
	}, func(d, s *graph.Task) { d.RuntimeInputs = s.RuntimeInputs }},
	"interactive": {func(r reader, kp string, v any, t *graph.Task) (err error) {
		t.Interactive, err = r.boolean(kp, v)
		return err
	}, func(d, s *graph.Task) { d.Interactive = s.Interactive }},
}

// envMode reads an envMode: "strict" or "loose".
func (r reader) envMode(keyPath string, v any) (string, error) {
	s, err := r.str(keyPath, v)
	if err == nil && s != "strict" && s != "loose" {
		err = r.errAt(keyPath, "%s %q: want \"strict\" or \"loose\"", keyPath, s)
	}
	return s, err
}

// size reads a memory size: a number of bytes, or a string such as "6GiB" or "512MiB".
func (r reader) size(keyPath string, v any) (string, error) {
	switch x := v.(type) {
	case int64:
		if x > 0 {
			return fmt.Sprint(x), nil
		}
	case float64:
		if x > 0 && x < math.MaxInt64 {
			return fmt.Sprint(int64(x)), nil
		}
	case string:
		s := strings.TrimSpace(x)
		if _, err := bytesize.Parse(s, bytesize.Positive); err == nil {
			return s, nil
		}
	}
	return "", r.errAt(keyPath, "%s must be a positive size (a number of bytes, or e.g. \"6GiB\")", keyPath)
}

// taskFieldNames lists the keys a task config may hold, in graph.TaskFields' order.
func taskFieldNames() []string {
	names := make([]string, len(graph.TaskFields()))
	for i, f := range graph.TaskFields() {
		names[i] = f.Name
	}
	return names
}

// taskSpec reads one task's config at keyPath ("tasks.build").
func (r reader) taskSpec(keyPath string, v any) (*taskSpec, error) {
	m, err := r.object(keyPath, v, taskFieldNames()...)
	if err != nil {
		return nil, err
	}
	ts := &taskSpec{set: map[string]bool{}, origins: map[string]graph.Origin{}}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		val, kp := m[k], join(keyPath, k)
		if val == nil {
			return nil, r.errAt(kp, "%s is null (leave the field out instead)", kp)
		}
		if err := fieldCodecs[k].read(r, kp, val, &ts.task); err != nil {
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
	name := strings.TrimPrefix(d, "^")
	if strings.Contains(d, "#") {
		var ok bool
		if _, name, ok = graph.SplitTaskID(d); !ok {
			return false
		}
	}
	return !isNamePattern(name) || doublestar.ValidatePattern(name)
}

// exec reads a task's exec: its env and its retries.
func (r reader) exec(keyPath string, v any) (map[string]graph.EnvValue, int, error) {
	m, err := r.object(keyPath, v, "env", "retries", "remote")
	if err != nil {
		return nil, 0, err
	}
	retries := 0
	if rv, ok := m["retries"]; ok {
		if retries, err = r.retries(join(keyPath, "retries"), rv); err != nil {
			return nil, 0, err
		}
	}
	out := map[string]graph.EnvValue{}
	envVal, ok := m["env"]
	if !ok {
		return out, retries, nil
	}
	env, err := r.execEnv(join(keyPath, "env"), envVal)
	return env, retries, err
}

// execRemote reads exec.remote (nil when absent): whether the task runs on the remote executor.
func (r reader) execRemote(keyPath string, v any) (*bool, error) {
	m, _ := v.(map[string]any)
	rv, ok := m["remote"]
	if !ok {
		return nil, nil
	}
	b, err := r.boolean(join(keyPath, "remote"), rv)
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// retries reads exec.retries: a whole number from 0 to graph.MaxRetries.
func (r reader) retries(keyPath string, v any) (int, error) {
	var n float64
	switch x := v.(type) {
	case int64:
		n = float64(x)
	case float64:
		n = x
	default:
		return 0, r.errAt(keyPath, "%s must be a number, not %s", keyPath, jsType(v))
	}
	if n != math.Trunc(n) || n < 0 || n > graph.MaxRetries {
		return 0, r.errAt(keyPath, "%s must be a whole number from 0 to %d, not %v", keyPath, graph.MaxRetries, v)
	}
	return int(n), nil
}

// execEnv reads exec.env: names to values or secrets.
func (r reader) execEnv(kp string, envVal any) (map[string]graph.EnvValue, error) {
	out := map[string]graph.EnvValue{}
	env, ok := envVal.(map[string]any)
	if !ok {
		return nil, r.errAt(kp, "%s must be an object of names to values, not %s", kp, jsType(envVal))
	}
	for _, name := range slices.Sorted(maps.Keys(env)) {
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
		m, err := r.object(keyPath, x, "network", "read", "write", "required")
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
		if req, ok := m["required"]; ok {
			if sb.Required, err = r.boolean(join(keyPath, "required"), req); err != nil {
				return nil, err
			}
		}
		return sb, nil
	}
	return nil, r.errAt(keyPath, "%s must be true, false or { network, read, write, required }, not %s", keyPath, jsType(v))
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

// badDependencyInput says what is wrong with a dependency input ("" when nothing is, or g is
// none): one is `^default` or `^GLOB`, a glob over each dependency project's own files. A bare
// word (`^production`) reads as an Nx named input, which vx has none of; a root file (`^//x`) is
// no dependency's.
func badDependencyInput(g string) string {
	glob, ok := strings.CutPrefix(g, graph.DependencyPrefix)
	switch {
	case !ok || g == graph.DependencyDefault:
		return ""
	case glob == "" || glob == "!":
		return "a dependency input names a glob after ^ (" + graph.DependencyDefault + ", '^src/**')"
	case strings.HasPrefix(strings.TrimPrefix(glob, "!"), "//"):
		return "a dependency input is a glob over each dependency project's own files, not a root file"
	case !strings.ContainsAny(glob, "/*?.[{$!"):
		return "reads as an Nx named input, which vx has none of: write its globs, each after ^ ('^src/**', '^!**/*.spec.ts'), or " + graph.DependencyDefault + " for every file"
	}
	if _, err := pathglob.Parse(glob); err != nil {
		return err.Error()
	}
	return ""
}
