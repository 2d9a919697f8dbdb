package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/vzn/vx/engine/suggest"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

// verbHabits are the verbs other task runners' users type, and vx's for them.
var verbHabits = map[string]string{
	"clean": "vx cache prune", "exec": "vx run", "list": "vx ls", "summary": "vx last", "history": "vx last --list",
	"explain": "vx why", "config": "vx show", "daemon": "vx mcp",
}

// flagHabits are the flags Turborepo's and Nx's users type, and vx's for them.
var flagHabits = map[string]string{
	"--since": "--affected", "--base": "--affected", "--scope": "--filter", "--projects": "--filter",
	"--cwd": "-C", "--skip-nx-cache": "--force", "--parallel": "--concurrency",
}

// unknownCommand is cobra's refusal of a verb it does not know.
var unknownCommand = regexp.MustCompile(`^unknown command "(.*)" for "(.*)"$`)

// hinted rewrites cobra's refusal of an unknown verb as one line that names the verb and, where
// one is near, the verb meant: `vx prune` → vx cache prune, `vx shwo` → vx show. Other errors
// come back as they were.
func hinted(root *cobra.Command, err error) error {
	m := unknownCommand.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	word, parent := m[1], m[2]
	under := strings.TrimSpace(strings.TrimPrefix(parent, root.Name()) + " " + word)
	return &vxerr.UsageError{Msg: fmt.Sprintf("unknown command %q%s", under, verbHint(root, parent, word))}
}

// taskVerb rewrites cobra's refusal of an unknown top-level verb that is a task name of the
// workspace (`vx build app`, as `nx build app` and `npm run build` are typed) as one line naming
// the vx run that does it: the words after the verb, up to the first flag, are its filters.
// Outside a workspace, or for a word no project declares as a task, err comes back as it was.
func (a *app) taskVerb(ctx context.Context, root *cobra.Command, args []string, err error) error {
	m := unknownCommand.FindStringSubmatch(err.Error())
	if m == nil || m[2] != root.Name() {
		return err
	}
	word := m[1]
	at := slices.Index(args, word)
	if at < 0 || strings.HasPrefix(word, "-") {
		return err
	}
	ws, loadErr := a.load(ctx)
	if loadErr != nil || !slices.Contains(workspace.TaskNames(ws), word) {
		return err
	}
	run := "vx run " + word
	for _, arg := range args[at+1:] {
		if strings.HasPrefix(arg, "-") {
			break
		}
		run += " --filter " + arg
	}
	return &vxerr.UsageError{Msg: fmt.Sprintf("unknown command %q (did you mean %s?)", word, run)}
}

// verbHint is " (did you mean vx X?)" for a verb word under the command path parent: a verb
// of that name deeper in the tree, a habit's verb, or the nearest verb's name.
func verbHint(root *cobra.Command, parent, word string) string {
	paths := map[string]string{} // a verb's name → its path, the first found
	var names []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || !sub.IsAvailableCommand() && sub.Name() != "help" {
				continue
			}
			// Under parent, its own verbs come first.
			if _, ok := paths[sub.Name()]; !ok || c.CommandPath() == parent {
				paths[sub.Name()] = sub.CommandPath()
			}
			names = append(names, sub.Name())
			walk(sub)
		}
	}
	walk(root)
	if p, ok := paths[word]; ok {
		return " (did you mean " + p + "?)"
	}
	if h, ok := verbHabits[word]; ok {
		return " (did you mean " + h + "?)"
	}
	if best, ok := suggest.Closest(word, names); ok {
		return " (did you mean " + paths[best] + "?)"
	}
	return ""
}

// unknownFlag reads the flag out of pflag's refusals: "unknown flag: --dry-run",
// "unknown shorthand flag: 'f' in -f".
var unknownFlag = regexp.MustCompile(`^unknown (?:flag: (--[^=\s]+)|shorthand flag: '(.)' in)`)

// flagHint is " (did you mean --X?)" for a flag c refused as unknown: a habit's flag, the flag
// of c nearest it, or the shorthand of the other case.
func flagHint(c *cobra.Command, err error) string {
	var usage *vxerr.UsageError
	if errors.As(err, &usage) {
		return ""
	}
	m := unknownFlag.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	var long []string
	shorts := map[string]string{}
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		long = append(long, "--"+f.Name)
		if f.Shorthand != "" {
			shorts[f.Shorthand] = "-" + f.Shorthand + " (--" + f.Name + ")"
		}
	}
	c.Flags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	if short := m[2]; short != "" {
		for _, other := range []string{strings.ToUpper(short), strings.ToLower(short)} {
			if s, ok := shorts[other]; ok && other != short {
				return " (did you mean " + s + "?)"
			}
		}
		return ""
	}
	if h, ok := flagHabits[m[1]]; ok {
		return " (did you mean " + h + "?)"
	}
	if best, ok := suggest.Closest(m[1], long); ok {
		return " (did you mean " + best + "?)"
	}
	return ""
}
