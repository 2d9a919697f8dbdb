package workspace

import (
	"slices"
	"strings"

	"github.com/vzn/vx/engine/graph"
)

// NamedTasks answers the task ids of sel that opts names on the command line: a requested task
// whose id, or whose name, is one of opts.Tasks. Under --all alone none is named; a task run only
// because another depends on it is never named.
func NamedTasks(sel *Selection, opts SelectOptions) []string {
	var named []string
	for _, id := range sel.Requested {
		_, name, _ := graph.SplitTaskID(id)
		if slices.Contains(opts.Tasks, id) || slices.Contains(opts.Tasks, name) {
			named = append(named, id)
		}
	}
	return named
}

// WithArgs answers ws with args (what the command line holds after `--`) appended to the command
// of each task in ids, as AppendArgs writes them: those commands, and so those tasks' keys, hold
// them. ws itself is not changed (a loader keeps it for the next call): the answer is a copy that
// shares every project and task it does not change. Without args or ids it is ws.
func WithArgs(ws *graph.Workspace, ids, args []string) *graph.Workspace {
	if len(args) == 0 || len(ids) == 0 {
		return ws
	}
	byProject := map[string][]*graph.Task{}
	for _, id := range ids {
		if t, ok := ws.Task(id); ok {
			byProject[t.Project] = append(byProject[t.Project], t)
		}
	}
	out := *ws
	out.Projects = make([]*graph.Project, len(ws.Projects))
	for i, p := range ws.Projects {
		tasks, ok := byProject[p.Name]
		if !ok {
			out.Projects[i] = p
			continue
		}
		cp := *p
		cp.Tasks = make(map[string]*graph.Task, len(p.Tasks))
		for name, t := range p.Tasks {
			cp.Tasks[name] = t
		}
		for _, t := range tasks {
			changed := *t
			changed.Command = AppendArgs(t.Command, args)
			cp.Tasks[t.Name] = &changed
		}
		out.Projects[i] = &cp
	}
	out.Index()
	return &out
}

// AppendArgs appends args to command, each quoted for sh where it needs it, so that its last
// command gets them. Where that command runs a package.json script through a package manager,
// they come after the `--` the manager needs to hand them to the script, as Turborepo writes
// them: npm's (`npm run test -- --watch`, unless the command already has one), none for pnpm and
// Yarn, which pass what follows the script's name; for Yarn and bun, which would swallow a `--` of
// the arguments' own, one before it.
func AppendArgs(command string, args []string) string {
	if len(args) == 0 {
		return command
	}
	command = strings.TrimRight(command, " \t\n")
	quoted := make([]string, 0, len(args)+1)
	if needsSeparator(lastSegment(command), args) {
		quoted = append(quoted, "--")
	}
	for _, a := range args {
		quoted = append(quoted, ShellQuote(a))
	}
	return command + " " + strings.Join(quoted, " ")
}

// lastSegment is the last simple command of a command line: what follows its last &&, ||, ;, |,
// & or line break (an & of a redirection, 2>&1 or &>, is no break). Quotes are not read: a
// break inside them only makes the `--` of a package manager's script go unwritten.
func lastSegment(command string) string {
	start := 0
	for i := 0; i < len(command); i++ {
		switch c := command[i]; {
		case c == ';' || c == '\n' || c == '|':
			start = i + 1
		case c == '&':
			redirect := i > 0 && (command[i-1] == '>' || command[i-1] == '<') || i+1 < len(command) && command[i+1] == '>'
			if !redirect {
				start = i + 1
			}
		}
	}
	return strings.TrimSpace(command[start:])
}

// npmRunsScript are the npm subcommands that hand what follows `--` to what they run.
var npmRunsScript = map[string]bool{
	"run": true, "run-script": true, "rum": true, "urn": true, "test": true, "t": true, "tst": true,
	"start": true, "stop": true, "restart": true, "exec": true, "x": true,
}

// needsSeparator reports whether a `--` must come between the simple command seg and args for
// the package manager it runs to pass them on.
func needsSeparator(seg string, args []string) bool {
	words, ok := managerWords(seg)
	if !ok {
		return false
	}
	has := slices.Contains(words[1:], "--")
	switch words[0] {
	case "npm":
		rest := withoutFlags(words[1:])
		return len(rest) > 0 && npmRunsScript[rest[0]] && !has
	case "yarn", "bun":
		return slices.Contains(args, "--") && !has
	}
	return false // pnpm passes everything after the script's name
}

// ShellQuote quotes s for sh: as it is when it holds only characters sh reads literally in a
// word, else in single quotes, each single quote inside closing them, escaped, and opening them again.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=@%+,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
