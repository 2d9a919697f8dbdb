// Package history answers questions about recorded runs: the last run's summary, a task's log, why
// a task's key changed, per-task statistics, cache statistics, and the flaky tasks. Every answer is
// a Go value whose JSON encoding is the matching `--format json` document, so that the CLI and the
// MCP tools answer the same bytes from one code path. Readers open the index with
// store.OpenReadOnly: nothing here writes.
package history
