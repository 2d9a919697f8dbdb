package initplan

import (
	"strings"
)

// lifecycleScripts are run by the package manager itself around installs and publishes, never as tasks.
var lifecycleScripts = map[string]bool{
	"preinstall": true, "install": true, "postinstall": true, "prepare": true, "prepublish": true,
	"prepublishOnly": true, "prepack": true, "postpack": true, "publish": true, "postpublish": true,
	"preversion": true, "version": true, "postversion": true, "dependencies": true,
}

// longRunningScripts are script names that start a server or a watcher.
var longRunningScripts = map[string]bool{
	"dev": true, "start": true, "serve": true, "watch": true, "preview": true, "storybook": true,
}

// isHook reports whether name is a pre/post hook of another script the package has: the package
// manager runs it around that script.
func isHook(name string, scripts map[string]string) bool {
	for _, p := range []string{"pre", "post"} {
		if base, ok := strings.CutPrefix(name, p); ok && base != "" {
			if _, has := scripts[base]; has {
				return true
			}
		}
	}
	return false
}

// commands splits a shell command line into its simple commands (at &&, ||, ;, | and newlines),
// each as words with quotes removed and leading VAR=value assignments dropped. It is no shell
// parser: enough to see which programs a package script runs.
func commands(line string) [][]string {
	var out [][]string
	var words []string
	var word strings.Builder
	inWord := false
	var quote byte
	flushWord := func() {
		if inWord {
			words = append(words, word.String())
			word.Reset()
			inWord = false
		}
	}
	flushCmd := func() {
		flushWord()
		for len(words) > 0 && isAssignment(words[0]) {
			words = words[1:]
		}
		if len(words) > 0 {
			out = append(out, words)
		}
		words = nil
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				word.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(line):
			i++
			word.WriteByte(line[i])
			inWord = true
		case c == ' ' || c == '\t':
			flushWord()
		case c == '&' || c == '|' || c == ';' || c == '\n' || c == '(' || c == ')':
			flushCmd()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	flushCmd()
	return out
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	return i > 0 && !strings.ContainsAny(w[:i], "-/.'\"")
}

// program is a command's program, past runners that only start it (npx, pnpm exec, cross-env…),
// with its arguments.
func program(words []string) (string, []string) {
	for len(words) > 0 {
		w := words[0]
		switch {
		case w == "npx" || w == "bunx" || w == "exec" || w == "dotenv" || w == "cross-env" || w == "env":
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || isAssignment(words[0])) {
				words = words[1:]
			}
		case (w == "pnpm" || w == "yarn" || w == "bun") && len(words) > 1 && (words[1] == "exec" || words[1] == "dlx" || words[1] == "x"):
			words = words[2:]
		default:
			return strings.TrimPrefix(w, "./node_modules/.bin/"), words[1:]
		}
	}
	return "", nil
}

// servers maps a program to the subcommands that make it serve or watch; nil means the program
// always does.
var servers = map[string][]string{
	"nodemon": nil, "ts-node-dev": nil, "webpack-dev-server": nil, "start-storybook": nil,
	"http-server": nil, "live-server": nil, "browser-sync": nil, "remix-serve": nil, "serve": nil,
	"next": {"dev", "start"}, "nuxt": {"dev", "preview"}, "nuxi": {"dev", "preview"}, "astro": {"dev", "preview"},
	"remix": {"dev", "vite:dev"}, "storybook": {"dev"}, "webpack": {"serve"}, "tsx": {"watch"},
	"react-scripts": {"start"}, "ng": {"serve"}, "wrangler": {"dev"}, "expo": {"start"},
	"docusaurus": {"start", "serve"},
}

// serversUnless maps a program that serves by default to the subcommands that make it finish.
var serversUnless = map[string][]string{
	"vite": {"build", "optimize"}, "vitepress": {"build", "init"},
}

// isLongRunning reports whether a script is a server or a watcher rather than a task that ends: by
// its name (dev, start, serve, watch, …) or by what its command runs (a --watch flag, `next dev`,
// `vite` without build, nodemon, …).
func isLongRunning(name, command string) bool {
	if longRunningScripts[name] {
		return true
	}
	for _, words := range commands(command) {
		prog, args := program(words)
		for _, a := range args {
			if a == "--watch" || a == "--watchAll" || strings.HasPrefix(a, "--watch=") ||
				a == "-w" && prog != "npm" && prog != "pnpm" && prog != "yarn" && prog != "bun" && prog != "prettier" { // prettier -w writes
				return true
			}
		}
		sub := ""
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				sub = a
				break
			}
		}
		if not, ok := serversUnless[prog]; ok && !containsString(not, sub) {
			return true
		}
		if subs, ok := servers[prog]; ok && (subs == nil || containsString(subs, sub)) {
			return true
		}
	}
	return false
}

// isCleanup reports whether a script cleans up (clean, clean:dist, or a command that only deletes:
// rimraf, rm -rf, del-cli, git clean), which `vx run --all` should leave out.
func isCleanup(name, command string) bool {
	if name == "clean" || strings.HasPrefix(name, "clean:") {
		return true
	}
	cmds := commands(command)
	if len(cmds) == 0 {
		return false
	}
	for _, words := range cmds {
		prog, args := program(words)
		switch {
		case prog == "rimraf" || prog == "del-cli" || prog == "del" || prog == "trash":
		case prog == "rm" && len(args) > 0 && strings.HasPrefix(args[0], "-") && strings.Contains(args[0], "r"):
		case prog == "git" && len(args) > 0 && args[0] == "clean":
		default:
			return false
		}
	}
	return true
}

// runsTool reports whether a command runs the monorepo tool itself (`turbo run build`,
// `nx run-many -t build`): such a root script is how the repository called the tool vx replaces.
func runsTool(command string, tools ...string) bool {
	for _, words := range commands(command) {
		if prog, _ := program(words); containsString(tools, prog) {
			return true
		}
	}
	return false
}
