package workspace

import "strings"

// scriptsRun answers the package.json scripts a command runs through a package manager (`npm run
// build`, `npm test`, `pnpm build`, `yarn run build`, `bun run build`), and the scripts those
// scripts run in turn: script name → its text. nil when it runs none.
func scriptsRun(command string, scripts map[string]string) map[string]string {
	if len(scripts) == 0 {
		return nil
	}
	var out map[string]string
	queue := []string{command}
	for len(queue) > 0 {
		cmd := queue[0]
		queue = queue[1:]
		for _, name := range scriptNames(cmd, scripts) {
			if _, seen := out[name]; seen {
				continue
			}
			if out == nil {
				out = map[string]string{}
			}
			out[name] = scripts[name]
			queue = append(queue, scripts[name])
		}
	}
	return out
}

// npmLifecycle are the scripts npm runs without `run`.
var npmLifecycle = map[string]bool{"test": true, "t": true, "start": true, "stop": true, "restart": true}

// scriptNames finds the package scripts one command line names, segment by segment.
func scriptNames(command string, scripts map[string]string) []string {
	var names []string
	for _, seg := range strings.FieldsFunc(command, func(r rune) bool { return r == '&' || r == '|' || r == ';' || r == '\n' }) {
		words := strings.Fields(seg)
		for len(words) > 0 && isAssignment(words[0]) {
			words = words[1:]
		}
		if len(words) > 0 && (words[0] == "exec" || words[0] == "npx" && len(words) > 1 && isPM(words[1])) {
			words = words[1:]
		}
		if len(words) < 2 || !isPM(words[0]) {
			continue
		}
		pm, args := words[0], withoutFlags(words[1:])
		if len(args) == 0 {
			continue
		}
		name := ""
		switch {
		case args[0] == "run" || args[0] == "run-script":
			if len(args) > 1 {
				name = args[1]
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
		if _, ok := scripts[name]; ok && name != "" {
			names = append(names, name)
		}
	}
	return names
}

func isPM(w string) bool { return w == "npm" || w == "pnpm" || w == "yarn" || w == "bun" }

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	return i > 0 && !strings.ContainsAny(w[:i], "-/.'\"")
}

// withoutFlags drops the options before the subcommand (`--silent`, `-w`, `--filter=x`).
func withoutFlags(args []string) []string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		args = args[1:]
	}
	return args
}
