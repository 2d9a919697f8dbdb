package pkgscript

import (
	"fmt"
	"slices"
	"strings"
)

// The package managers a task's command may run a script through.
const (
	NPM   = "npm"
	PNPM  = "pnpm"
	Yarn  = "yarn"  // Yarn 1 (classic)
	Berry = "berry" // Yarn 2 and later
	Bun   = "bun"
)

// invocation is a command that runs one of its project's package scripts through a manager and
// nothing else: `npm run build -- --watch`, `pnpm build`, `yarn run test a`, `bun run lint`.
type invocation struct {
	// manager is the command's first word: npm, pnpm, yarn or bun (Yarn's major is told apart
	// later, from the workspace).
	manager string
	// script is the script's name; npmCommand is npm's name for the command that ran it (run,
	// test, start, …), npm_command's value.
	script, npmCommand string
	// args are the arguments the manager hands the script, in order, unquoted.
	args []string
}

// npmScriptCommands are npm's commands that run the script of their name (and their aliases).
var npmScriptCommands = map[string]string{"test": "test", "t": "test", "tst": "test", "start": "start", "stop": "stop", "restart": "restart"}

// npmRunAliases are npm's spellings of `npm run`.
var npmRunAliases = []string{"run", "run-script", "rum", "urn"}

// managerBuiltins are the commands of pnpm, Yarn and bun that a bare `pnpm NAME` runs instead of a
// script of that name; such a command is not read as a script.
var managerBuiltins = map[string][]string{
	PNPM: {"add", "audit", "bin", "c", "cache", "cat-file", "cat-index", "ci", "clean", "config", "create", "dedupe", "deploy",
		"dlx", "doctor", "env", "exec", "fetch", "find-hash", "get", "help", "i", "import", "init", "install", "install-test",
		"it", "licenses", "link", "list", "ln", "ls", "outdated", "pack", "patch", "patch-commit", "patch-remove", "prune",
		"publish", "rb", "rebuild", "recursive", "remove", "rm", "root", "run", "self-update", "server", "set", "setup",
		"store", "un", "uninstall", "unlink", "up", "update", "why", "x", "approve-builds", "ignored-builds", "sbom",
		"login", "logout", "whoami", "version", "view", "info", "owner", "dist-tag", "docs", "repo", "search", "stars",
		"team", "token", "access", "adduser", "bugs", "deprecate", "edit", "explore", "fund", "hook", "org", "ping",
		"prefix", "profile", "restart", "set-script", "shrinkwrap", "star", "unpublish", "unstar", "xmas", "show",
		"pkg", "s", "se", "v"},
	Yarn: {"add", "audit", "autoclean", "bin", "cache", "check", "config", "constraints", "create", "dedupe", "dlx", "exec",
		"explain", "generate-lock-entry", "global", "help", "import", "info", "init", "install", "licenses", "link", "list",
		"login", "logout", "node", "npm", "outdated", "owner", "pack", "patch", "patch-commit", "plugin", "policies",
		"publish", "rebuild", "remove", "run", "search", "set", "stage", "tag", "team", "unlink", "unplug", "up",
		"upgrade", "upgrade-interactive", "version", "versions", "why", "workspace", "workspaces"},
}

// parseInvocation reads a command as an invocation; the string says why it is not one.
func parseInvocation(command string) (invocation, string) {
	words, err := simpleWords(strings.TrimSpace(command))
	if err != nil || len(words) < 2 {
		return invocation{}, "its command is not a package manager running one script"
	}
	inv := invocation{manager: words[0]}
	rest := skipSilent(words[1:])
	if len(rest) == 0 {
		return invocation{}, "its command runs no script"
	}
	switch inv.manager {
	case NPM:
		return parseNPM(inv, rest)
	case PNPM, Yarn, Bun:
		return parseOther(inv, rest)
	}
	return invocation{}, "its command is not a package manager running one script"
}

// parseNPM reads what follows `npm`: a run alias and the script's name, or a command that runs
// the script of its name; then arguments, which npm reads as its own options unless they come
// after a `--` (whose first one it drops).
func parseNPM(inv invocation, rest []string) (invocation, string) {
	switch {
	case slices.Contains(npmRunAliases, rest[0]) && len(skipSilent(rest[1:])) > 0:
		rest = skipSilent(rest[1:])
		inv.script, inv.npmCommand, rest = rest[0], "run", rest[1:]
	case npmScriptCommands[rest[0]] != "":
		inv.script = npmScriptCommands[rest[0]]
		inv.npmCommand, rest = inv.script, rest[1:]
	default:
		return invocation{}, "its npm command runs no script"
	}
	if strings.HasPrefix(inv.script, "-") {
		return invocation{}, "its npm command has options"
	}
	for i, a := range rest {
		if a == "--" {
			inv.args = append(inv.args, rest[i+1:]...)
			return inv, ""
		}
		if strings.HasPrefix(a, "-") {
			return invocation{}, fmt.Sprintf("npm would read %s as its own option", a)
		}
		inv.args = append(inv.args, a)
	}
	return inv, ""
}

// parseOther reads what follows pnpm, yarn or bun: `run NAME` or a bare `NAME` that is none of
// the manager's commands (bun's bare form runs its own tools first, so only `bun run` is read),
// then everything after the name, handed to the script as written.
func parseOther(inv invocation, rest []string) (invocation, string) {
	switch {
	case rest[0] == "run" && len(skipSilent(rest[1:])) > 0:
		rest = skipSilent(rest[1:])
		inv.script, rest = rest[0], rest[1:]
	case inv.manager == Bun:
		return invocation{}, "only bun run is read as running a script"
	case slices.Contains(managerBuiltins[inv.manager], rest[0]):
		return invocation{}, fmt.Sprintf("%s %s is a command of %s", inv.manager, rest[0], inv.manager)
	default:
		inv.script, rest = rest[0], rest[1:]
	}
	if strings.HasPrefix(inv.script, "-") {
		return invocation{}, fmt.Sprintf("its %s command has options", inv.manager)
	}
	inv.npmCommand = "run-script"
	inv.args = slices.Clone(rest)
	return inv, ""
}

// skipSilent answers words without the -s and --silent in front: they silence the manager's own
// lines only, which a direct run does not print.
func skipSilent(words []string) []string {
	for len(words) > 0 && (words[0] == "-s" || words[0] == "--silent") {
		words = words[1:]
	}
	return words
}
