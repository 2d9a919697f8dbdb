package pkgscript

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// plan makes the Plan of a resolution that needs no manager.
func (r *resolution) plan() Plan {
	vars := r.vars()
	main := r.steps[r.main]
	maps.Copy(vars, r.stepVars(main))
	shell := main.text
	if len(r.steps) > 1 {
		parts := make([]string, len(r.steps))
		for i, s := range r.steps {
			var b strings.Builder
			sv := r.stepVars(s)
			for _, k := range slices.Sorted(maps.Keys(sv)) {
				b.WriteString(k + "=" + shQuote(sv[k]) + " ")
			}
			b.WriteString("sh -c " + shQuote(s.text))
			parts[i] = b.String()
		}
		shell = strings.Join(parts, " && ")
	}
	env := make([]string, 0, len(r.t.Env)+len(vars))
	for _, kv := range r.t.Env {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := vars[name]; over || (r.manager == PNPM && strings.HasPrefix(name, "npm_")) {
			continue // pnpm gives a script none of the npm_* variables it was started with
		}
		env = append(env, kv)
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		env = append(env, k+"="+vars[k])
	}
	return Plan{Manager: r.manager, Script: r.inv.script, Shell: shell, Env: env}
}

// stepVars are the variables that differ between the scripts of one run: the event, and the text
// (where the manager sets it).
func (r *resolution) stepVars(s step) map[string]string {
	vars := map[string]string{"npm_lifecycle_event": s.event}
	switch r.manager {
	case Berry:
	case PNPM:
		vars["npm_lifecycle_script"] = s.text // with its arguments, as pnpm appends them
	default:
		text := r.pkg.Scripts[s.event] // without its arguments, as npm, Yarn 1 and bun set it
		vars["npm_lifecycle_script"] = text
	}
	return vars
}

// vars are the variables every script of the run gets, PATH among them.
func (r *resolution) vars() map[string]string {
	m := r.managerVars()
	pkgJSON := filepath.Join(r.t.Dir, "package.json")
	switch r.manager {
	case NPM:
		m["npm_command"] = r.inv.npmCommand
		m["npm_package_json"] = pkgJSON
		flattenNPM(r.pkg.fields, "npm_package_", m)
	case PNPM:
		m["npm_command"] = "run-script"
		m["npm_package_json"] = pkgJSON
		m["PNPM_SCRIPT_SRC_DIR"] = r.t.Dir
		flattenPNPM(r.pkg.fields, "npm_package_", m)
	case Yarn:
		flattenNPM(r.pkg.fields, "npm_package_", m)
		scripts := make(map[string]any, len(r.pkg.Scripts))
		for k, v := range r.pkg.Scripts {
			scripts[k] = v
		}
		flattenNPM(map[string]any{"scripts": scripts}, "npm_package_", m)
	case Berry:
		m["npm_package_json"] = pkgJSON
		m["PROJECT_CWD"] = r.t.Root
		m["npm_package_name"], m["npm_package_version"] = r.pkg.Name, r.pkg.Version
	case Bun:
		m["npm_command"] = "run-script"
		m["npm_package_json"] = pkgJSON
		m["npm_package_name"], m["npm_package_version"] = r.pkg.Name, r.pkg.Version
	}
	m["PATH"] = strings.Join(append(r.binDirs(), r.env["PATH"]), string(os.PathListSeparator))
	return m
}

// managerVars are the manager's and node's paths and the folder the manager was started in.
func (r *resolution) managerVars() map[string]string {
	m := map[string]string{"npm_execpath": r.execPath}
	if r.nodePath != "" {
		m["npm_node_execpath"] = r.nodePath
		if r.manager != Berry {
			m["NODE"] = r.nodePath
		}
	}
	if r.manager != Bun {
		m["INIT_CWD"] = r.t.Dir
	}
	return m
}

// binDirs are the folders the manager puts in front of PATH, in its order.
func (r *resolution) binDirs() []string {
	own := filepath.Join(r.t.Dir, "node_modules", ".bin")
	root := filepath.Join(r.t.Root, "node_modules", ".bin")
	switch r.manager {
	case NPM, Bun:
		dirs := ancestorsBin(r.t.Dir)
		if r.manager == Bun {
			dirs = append([]string{own}, dirs...) // bun puts the project's first twice
		}
		if r.manager == NPM {
			// npm's run-script adds its node-gyp shim (<npm>/bin/npm-cli.js is its program).
			gyp := filepath.Join(filepath.Dir(filepath.Dir(r.execPath)), "node_modules", "@npmcli", "run-script", "lib", "node-gyp-bin")
			if isDir(gyp) {
				dirs = append(dirs, gyp)
			}
		}
		return dirs
	case PNPM:
		dirs := []string{own}
		if gyp := filepath.Join(filepath.Dir(filepath.Dir(r.execPath)), "dist", "node-gyp-bin"); isDir(gyp) {
			dirs = append(dirs, gyp)
		}
		if root != own {
			dirs = append(dirs, root)
		}
		return dirs
	}
	if root != own {
		return []string{own, root}
	}
	return []string{own}
}

// ancestorsBin is node_modules/.bin of dir and of each folder above it, up to the file system's
// root, nearest first (npm's and bun's PATH).
func ancestorsBin(dir string) []string {
	var dirs []string
	for {
		dirs = append(dirs, filepath.Join(dir, "node_modules", ".bin"))
		up := filepath.Dir(dir)
		if up == dir {
			return dirs
		}
		dir = up
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// flattenNPM sets the variables npm's run-script makes of package.json fields: an object's
// fields under prefix_key_, an array's items under key_index, null and false as "", anything
// else as JavaScript's String would write it.
func flattenNPM(fields map[string]any, prefix string, out map[string]string) {
	for k, v := range fields {
		switch x := v.(type) {
		case nil:
			out[prefix+k] = ""
		case bool:
			if x {
				out[prefix+k] = "true"
			} else {
				out[prefix+k] = ""
			}
		case []any:
			for i, item := range x {
				flattenNPM(map[string]any{k + "_" + strconv.Itoa(i): item}, prefix, out)
			}
		case map[string]any:
			flattenNPM(x, prefix+k+"_", out)
		default:
			out[prefix+k] = jsString(x)
		}
	}
}

// unsafeEnvKey finds the characters pnpm replaces with _ in a variable's name.
var unsafeEnvKey = regexp.MustCompile(`[^a-zA-Z0-9_]`)

// flattenPNPM sets the variables pnpm's lifecycle makes of package.json fields: as npm's, but a
// name's characters outside [a-zA-Z0-9_] are written _, null and false are written as words, and
// a value holding a line break is JSON-quoted.
func flattenPNPM(fields map[string]any, prefix string, out map[string]string) {
	for k, v := range fields {
		key := unsafeEnvKey.ReplaceAllString(prefix+k, "_")
		switch x := v.(type) {
		case []any:
			obj := make(map[string]any, len(x))
			for i, item := range x {
				obj[strconv.Itoa(i)] = item
			}
			flattenPNPM(obj, key+"_", out)
		case map[string]any:
			flattenPNPM(x, key+"_", out)
		default:
			s := jsString(x)
			if strings.Contains(s, "\n") {
				b, _ := json.Marshal(s)
				s = string(b)
			}
			out[key] = s
		}
	}
}

// jsString writes a decoded JSON scalar as JavaScript's String does.
func jsString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		return x
	}
	return ""
}

// shQuote quotes s for sh, always: '…' with each ' written '\”.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
