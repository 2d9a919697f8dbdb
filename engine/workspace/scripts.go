package workspace

import (
	"path"
	"strings"

	"github.com/vzn/vx/engine/pkgscript"
)

// rootScriptPrefix marks, among a task's scripts, one of the root package.json's ("//build:pkg"):
// a package script may run a root script (`pnpm -w run build:pkg`), whose text then keys the task
// as the package's own scripts do.
const rootScriptPrefix = "//"

// scriptSource is where scriptsRun looks scripts up: the project's package.json and the root's.
type scriptSource struct {
	own, root map[string]string
	// dir is the project folder relative to the root ("." for the root project); rootName is the
	// root package.json's name (for `yarn workspace root X`, `npm run X -w root`).
	dir, rootName string
}

// scriptsRun answers the package.json scripts a command runs through a package manager (`npm run
// build`, `npm test`, `pnpm build`, `yarn run build`, `bun run build`), and the scripts those
// scripts run in turn: script name → its text, a root script's name prefixed with "//". A command
// that runs at the root (`pnpm -w run X`, `pnpm --workspace-root run X`, `npm run X
// --workspace-root`, `npm run X -w <root>`, `yarn run -T X`, `yarn workspace <root> X`, `bun run
// --cwd ../.. X`) names a root script; a root script's own commands run at the root. nil when it
// runs none.
func scriptsRun(command string, src scriptSource) map[string]string {
	if len(src.own) == 0 && len(src.root) == 0 {
		return nil
	}
	atRootProject := src.dir == "." || src.dir == ""
	if atRootProject && src.own == nil {
		src.own = src.root // the root project's scripts are the root's
	}
	type item struct {
		cmd    string
		atRoot bool
	}
	var out map[string]string
	queue := []item{{command, false}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		for _, ref := range scriptNames(it.cmd, it.atRoot, src) {
			scripts, key := src.own, ref.name
			if ref.root && !atRootProject {
				scripts, key = src.root, rootScriptPrefix+ref.name
			}
			text, ok := scripts[ref.name]
			if !ok {
				continue
			}
			if _, seen := out[key]; seen {
				continue
			}
			if out == nil {
				out = map[string]string{}
			}
			out[key] = text
			queue = append(queue, item{text, ref.root || it.atRoot})
		}
	}
	return out
}

// scriptRef names a script a command runs; root is true for one of the root package.json.
type scriptRef struct {
	name string
	root bool
}

// npmLifecycle are the scripts npm runs without `run`.
var npmLifecycle = map[string]bool{"test": true, "t": true, "start": true, "stop": true, "restart": true}

// managerWords answers the words of a simple command from the package manager it runs on
// (environment assignments, exec and npx in front of it left out), with at least one word after
// the manager; false when it runs none.
func managerWords(seg string) ([]string, bool) {
	words := strings.Fields(seg)
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(words) > 0 && (words[0] == "exec" || words[0] == "npx" && len(words) > 1 && isPM(words[1])) {
		words = words[1:]
	}
	return words, len(words) >= 2 && isPM(words[0])
}

// scriptNames finds the package scripts one command line names, segment by segment. atRoot says
// the line runs at the workspace root (a root script's text), where every script is the root's.
func scriptNames(command string, atRoot bool, src scriptSource) []scriptRef {
	var refs []scriptRef
	for _, seg := range strings.FieldsFunc(command, func(r rune) bool { return r == '&' || r == '|' || r == ';' || r == '\n' }) {
		words, ok := managerWords(seg)
		if !ok {
			continue
		}
		pm := words[0]
		root, args := rootFlags(pm, words[1:], src)
		args = withoutFlags(args)
		if pm == "yarn" && len(args) >= 3 && args[0] == "workspace" && src.rootName != "" && args[1] == src.rootName {
			root, args = true, args[2:]
		}
		if len(args) == 0 {
			continue
		}
		name := ""
		switch {
		case args[0] == "run" || args[0] == "run-script":
			if rest := withoutFlags(args[1:]); len(rest) > 0 {
				name = rest[0]
			}
		case pm == "npm":
			if npmLifecycle[args[0]] {
				name = args[0]
				if name == "t" {
					name = "test"
				}
			}
		default: // pnpm, yarn and bun run a script named as their first argument
			name = args[0]
		}
		if name != "" {
			refs = append(refs, scriptRef{name: name, root: root || atRoot})
		}
	}
	return refs
}

// rootFlags reads, and takes out, the options that make a package manager run at the workspace
// root: pnpm's -w and --workspace-root, npm's --workspace-root and -w/--workspace naming the root
// package, yarn's run -T (--top-level), bun's --cwd to the root.
func rootFlags(pm string, args []string, src scriptSource) (bool, []string) {
	root := false
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--workspace-root" && (pm == "pnpm" || pm == "npm"):
			root = true
		case a == "-w" && pm == "pnpm":
			root = true
		case (a == "-w" || a == "--workspace") && pm == "npm" && i+1 < len(args):
			if src.rootName != "" && args[i+1] == src.rootName {
				root = true
			}
			i++
		case (a == "-T" || a == "--top-level") && pm == "yarn":
			root = true
		case a == "--cwd" && pm == "bun" && i+1 < len(args):
			if path.Clean(path.Join(src.dir, args[i+1])) == "." {
				root = true
			}
			i++
		case strings.HasPrefix(a, "--cwd=") && pm == "bun":
			if path.Clean(path.Join(src.dir, strings.TrimPrefix(a, "--cwd="))) == "." {
				root = true
			}
		default:
			rest = append(rest, a)
		}
	}
	return root, rest
}

func isPM(w string) bool { return w == "npm" || w == "pnpm" || w == "yarn" || w == "bun" }

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	return i > 0 && !strings.ContainsAny(w[:i], "-/.'\"")
}

// withoutFlags drops the options before the subcommand (`--silent`, `--filter=x`).
func withoutFlags(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		args = args[1:]
	}
	return args
}

// scriptsRunner reads `scripts: { runner }`: how a task whose command runs a package script runs
// it, 'direct' (the default: its text through sh where the manager is not needed) or
// 'package-manager' (through the manager, as the command says).
func scriptsRunner(r reader, v any) (string, error) {
	m, err := r.object("scripts", v, "runner")
	if err != nil {
		return "", err
	}
	rv, ok := m["runner"]
	if !ok {
		return "", nil
	}
	s, err := r.str("scripts.runner", rv)
	if err != nil {
		return "", err
	}
	if s != pkgscript.RunnerDirect && s != pkgscript.RunnerManager {
		return "", r.errAt("scripts.runner", "scripts.runner must be %q or %q, not %q", pkgscript.RunnerDirect, pkgscript.RunnerManager, s)
	}
	return s, nil
}
