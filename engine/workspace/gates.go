package workspace

import (
	"fmt"
	"math"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/vxerr"
)

// readyWhen reads a persistent task's readyWhen: { log, port, timeout }, at least one of log and
// port.
func (r reader) readyWhen(keyPath string, v any) (*graph.ReadyWhen, error) {
	m, err := r.object(keyPath, v, "log", "port", "timeout")
	if err != nil {
		return nil, err
	}
	rw := &graph.ReadyWhen{Timeout: graph.DefaultReadyTimeout}
	if lv, ok := m["log"]; ok {
		if rw.Log, err = r.str(join(keyPath, "log"), lv); err != nil {
			return nil, err
		}
		if rw.Log == "" {
			return nil, r.errAt(join(keyPath, "log"), "%s.log is empty", keyPath)
		}
	}
	if pv, ok := m["port"]; ok {
		if rw.Port, err = r.port(join(keyPath, "port"), pv); err != nil {
			return nil, err
		}
	}
	if tv, ok := m["timeout"]; ok {
		if rw.Timeout, rw.TimeoutSpec, err = r.duration(join(keyPath, "timeout"), tv); err != nil {
			return nil, err
		}
	}
	if rw.Log == "" && rw.Port == 0 {
		return nil, r.errAt(keyPath, "%s gives no condition: write log (a text its output prints), port (one it listens on), or both", keyPath)
	}
	return rw, nil
}

// port reads a TCP port: a whole number from 1 to 65535.
func (r reader) port(keyPath string, v any) (int, error) {
	var n float64
	switch x := v.(type) {
	case int64:
		n = float64(x)
	case float64:
		n = x
	default:
		return 0, r.errAt(keyPath, "%s must be a port number, not %s", keyPath, jsType(v))
	}
	if n != math.Trunc(n) || n < 1 || n > 65535 {
		return 0, r.errAt(keyPath, "%s must be a port from 1 to 65535, not %v", keyPath, v)
	}
	return int(n), nil
}

// probes reads runtimeInputs (or globalRuntimeInputs): shell commands, none empty, each once.
func (r reader) probes(keyPath string, v any) ([]string, error) {
	list, err := r.strings(keyPath, v)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, c := range list {
		switch {
		case strings.TrimSpace(c) == "":
			return nil, r.errAt(keyPath, "%s[%d] is empty (write a command such as 'node -v')", keyPath, i)
		case seen[c]:
			return nil, r.errAt(keyPath, "%s[%d] %q is listed twice", keyPath, i, c)
		}
		seen[c] = true
	}
	return list, nil
}

// refuseReadyWhen refuses readyWhen on a task that is not persistent (as resolved from its
// template and its project), at the line that declared it.
func refuseReadyWhen(ws *graph.Workspace) error {
	for _, id := range ws.TaskIDs() {
		t, _ := ws.Task(id)
		if t.ReadyWhen == nil || t.Persistent {
			continue
		}
		o := t.Origins.Get("readyWhen")
		return &vxerr.ConfigError{File: o.File, Line: o.Line, Col: o.Col,
			Msg: fmt.Sprintf("task %s: readyWhen is for a persistent task (add persistent: true, or remove readyWhen)", id)}
	}
	return nil
}
