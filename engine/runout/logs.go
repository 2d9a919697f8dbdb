package runout

import (
	"hash/fnv"
	"slices"

	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/vxerr"
)

// The task output a run shows (vx run --output-logs), as Turborepo's words say it.
const (
	// LogsFull shows every task's output, and each hit's log replayed (the default).
	LogsFull = "full"
	// LogsNewOnly shows what the tasks that ran printed; a hit's log is not replayed.
	LogsNewOnly = "new-only"
	// LogsErrorsOnly shows the output of the tasks that failed, each whole when it ended.
	LogsErrorsOnly = "errors-only"
	// LogsHashOnly shows no task output; each task's line carries its key.
	LogsHashOnly = "hash-only"
	// LogsNone shows no task output.
	LogsNone = "none"
)

// The order task output is shown in (vx run --log-order).
const (
	// OrderStream shows each line as it comes, lines of tasks running at once interleaved.
	OrderStream = "stream"
	// OrderGrouped shows each task's output together when it ends.
	OrderGrouped = "grouped"
)

// logModes are the --output-logs values; logOrders the --log-order values (auto is stream).
var (
	logModes  = []string{LogsFull, LogsNewOnly, LogsErrorsOnly, LogsHashOnly, LogsNone}
	logOrders = []string{"auto", OrderStream, OrderGrouped}
)

// LogOptions say which task output a run shows, in what order, and whether in colour. The zero
// value shows all of it as it comes, without colour.
type LogOptions struct {
	// Show is an --output-logs value (full, new-only, errors-only, hash-only, none); "" is LogsFull.
	Show string
	// Grouped holds each task's output until it ends, then shows it together (a persistent
	// task's streams: it does not end while it serves).
	Grouped bool
	// Color puts ANSI colours on the task prefixes and status lines.
	Color bool
	// GitHub folds each task's output that passed in a `::group::ID` … `::endgroup::` of GitHub
	// Actions, after holding it until the task ends; a failure's output stays outside any fold.
	GitHub bool
	// Agent is the compact output for an agent host (vx run --agent): no task output but each
	// failure's first and last lines with a pointer to its whole log, the hits one line in all.
	Agent bool
}

// CheckLogOptions refuses an --output-logs or --log-order value that is none of the words.
func CheckLogOptions(show, order string) error {
	if show != "" && !slices.Contains(logModes, show) {
		return vxerr.Usagef("--output-logs=%s: want full, new-only, errors-only, hash-only or none", show)
	}
	if order != "" && !slices.Contains(logOrders, order) {
		return vxerr.Usagef("--log-order=%s: want stream, grouped or auto", order)
	}
	return nil
}

// drops reports whether no task output is shown at all.
func (l LogOptions) drops() bool { return l.Show == LogsNone || l.Show == LogsHashOnly }

// holds reports whether a task's output waits until the task ends.
func (l LogOptions) holds(persistent bool) bool {
	return l.Show == LogsErrorsOnly || (l.Grouped || l.GitHub || l.Agent) && !persistent
}

// showsHeld reports whether the output held for a task that ended with status is shown.
func (l LogOptions) showsHeld(status store.Status) bool {
	if l.Show == LogsErrorsOnly || l.Agent {
		return status == store.StatusFailed || status == store.StatusTimedOut
	}
	return true
}

// replaysHits reports whether a hit's cached log is shown.
func (l LogOptions) replaysHits() bool { return !l.Agent && (l.Show == "" || l.Show == LogsFull) }

// The ANSI colours of a run's lines. Text is escaped (logtext.Escape) before it is coloured, so
// that a colour is always vx's own.
const (
	ansiReset  = "\x1b[0m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiDim    = "\x1b[2m"
)

// prefixColors are the colours task prefixes take, one per task id, as Turborepo gives each
// package its own.
var prefixColors = []string{"\x1b[36m", "\x1b[35m", "\x1b[34m", "\x1b[33m", "\x1b[32m", "\x1b[96m", "\x1b[95m", "\x1b[94m"}

// paint wraps escaped text in color when colours are on.
func (l LogOptions) paint(color, escaped string) string {
	if !l.Color || color == "" {
		return escaped
	}
	return color + escaped + ansiReset
}

// prefixColor is the colour of a task's prefix: the same for the same id in every run.
func prefixColor(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return prefixColors[h.Sum32()%uint32(len(prefixColors))]
}

// statusColor is the colour of a task's status line: red for what failed, yellow for what did
// not run, dim for a hit.
func statusColor(status store.Status) string {
	switch status {
	case store.StatusFailed, store.StatusTimedOut:
		return ansiRed
	case store.StatusBlocked, store.StatusSkipped, store.StatusCancelled:
		return ansiYellow
	case store.StatusHit:
		return ansiDim
	case store.StatusMiss:
		return ansiGreen
	}
	return ""
}
