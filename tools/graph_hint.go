package tools

import (
	"regexp"
	"strings"
)

// The graph hints: planTasks' and getRunHistory's answers name the vx command that draws what
// they answer as a page a person can look at (no image in an answer: it would cost an agent's
// context and say less than the JSON it has).

// planGraphHint is the vx graph command that draws a's selection.
func planGraphHint(a *taskSelectionArgs) string {
	argv := []string{"vx", "graph"}
	for _, t := range a.Tasks {
		argv = append(argv, shellWord(t))
	}
	for _, f := range a.Filter {
		argv = append(argv, "--filter", shellWord(f))
	}
	if a.Affected != nil && a.Affected.On {
		if a.Affected.Ref != "" {
			argv = append(argv, shellWord("--affected="+a.Affected.Ref))
		} else {
			argv = append(argv, "--affected")
		}
	}
	return strings.Join(append(argv, "--out", "vx-graph.html"), " ")
}

// runGraphHint is the vx last command that draws runID's timeline; "" without a run.
func runGraphHint(runID string) string {
	if runID == "" {
		return ""
	}
	return "vx last --run " + shellWord(runID) + " --format html --out vx-run-" + shellWord(runID) + ".html"
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./#^-]+$`)

// shellWord quotes s for a POSIX shell where it needs it.
func shellWord(s string) string {
	if plainWord.MatchString(s) && !strings.HasPrefix(s, "#") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
