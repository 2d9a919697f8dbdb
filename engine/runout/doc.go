// Package runout is what a run shows and streams as it goes: the terminal display (each task's
// output prefixed and masked, the status line, a line per finished task), which task output is
// shown and in what order (LogOptions), and the events stream `vx run --events-fd` writes and
// runTasks reads (Event).
package runout
