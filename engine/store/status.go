package store

import "strings"

// Status is what became of one task in a run, spelled as the run summary, the index, history and
// the MCP tools spell it: the one source of those words. SQL reads them through sqlList and query
// parameters, never as literals of its own.
type Status string

// The statuses of an execution.
const (
	StatusHit       Status = "hit"       // restored from the cache
	StatusMiss      Status = "miss"      // ran and passed
	StatusFailed    Status = "failed"    // ran and exited non-zero (or could not start)
	StatusBlocked   Status = "blocked"   // not run: a task it depends on failed
	StatusSkipped   Status = "skipped"   // not run: the run stopped first (--bail, cancellation)
	StatusTimedOut  Status = "timedOut"  // killed when its timeout ran out
	StatusCancelled Status = "cancelled" // killed when the run was cancelled
	// StatusForced is a miss that ran because the run ignored the cache (--force). The index
	// keeps it as a miss with its forced flag (Execution.Forced), so that every statistic of the
	// runs that passed counts it; the summary, the display and the tools say forced.
	StatusForced Status = "forced"
)

// Reported is the status the summary, the display and the tools give e: forced for a forced miss,
// else its own.
func (e Execution) Reported() Status {
	if e.Forced && e.Status == StatusMiss {
		return StatusForced
	}
	return e.Status
}

// Ran reports whether an execution of that status ran its command to its end (passed or not); a
// summary's forced task did.
func (s Status) Ran() bool {
	return s == StatusMiss || s == StatusForced || s == StatusFailed || s == StatusTimedOut
}

// The statuses as SQL literals, for the queries whose text must match an index's (a partial
// index serves only a query whose WHERE spells its own).
const sqlHit = "'" + string(StatusHit) + "'"

var (
	ranStatuses   = sqlList(StatusMiss, StatusFailed, StatusTimedOut) // ran its command to its end
	failedOrTimed = sqlList(StatusFailed, StatusTimedOut)
)

// sqlList writes statuses as an SQL list: ('hit', 'miss').
func sqlList(statuses ...Status) string {
	parts := make([]string, len(statuses))
	for i, s := range statuses {
		parts[i] = string(s)
	}
	return "('" + strings.Join(parts, "', '") + "')"
}
