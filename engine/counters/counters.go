// Package counters counts what a run costs in operations rather than time: the processes it
// spawns, the SQLite statements it executes, the files it opens to read and the stat calls it
// makes. A benchmark's timing drifts with the machine; these counts do not, so a test can hold
// them (stress/counts_test.go).
//
// A run's Counters travel in its context (With, From). Every method is safe on a nil *Counters,
// which counts nothing, so that a counting point is one line and costs nothing when no one counts.
package counters

import (
	"context"
	"sync/atomic"
)

// Counters are a run's operation counts. The zero value is ready; its methods are safe for
// concurrent use and on a nil receiver.
type Counters struct {
	spawned, statements, opened, statted atomic.Int64
}

// Counts is a snapshot of Counters, also their JSON document.
type Counts struct {
	// ProcessesSpawned is the child processes started (task commands, git).
	ProcessesSpawned int64 `json:"processesSpawned"`
	// SQLiteStatements is the statements executed on the index and the shared store.
	SQLiteStatements int64 `json:"sqliteStatements"`
	// FilesOpened is the input files opened to be read and hashed.
	FilesOpened int64 `json:"filesOpened"`
	// StatCalls is the lstat calls on workspace files and folders.
	StatCalls int64 `json:"statCalls"`
}

// Spawn counts one child process started.
func (c *Counters) Spawn() {
	if c != nil {
		c.spawned.Add(1)
	}
}

// Statement counts one SQLite statement executed.
func (c *Counters) Statement() {
	if c != nil {
		c.statements.Add(1)
	}
}

// Open counts one file opened to be read.
func (c *Counters) Open() {
	if c != nil {
		c.opened.Add(1)
	}
}

// Stat counts one stat call.
func (c *Counters) Stat() {
	if c != nil {
		c.statted.Add(1)
	}
}

// Counts answers the counts so far; the zero Counts for a nil receiver.
func (c *Counters) Counts() Counts {
	if c == nil {
		return Counts{}
	}
	return Counts{ProcessesSpawned: c.spawned.Load(), SQLiteStatements: c.statements.Load(),
		FilesOpened: c.opened.Load(), StatCalls: c.statted.Load()}
}

// key is the context key of a run's Counters.
type key struct{}

// With answers ctx carrying c.
func With(ctx context.Context, c *Counters) context.Context {
	return context.WithValue(ctx, key{}, c)
}

// From answers the Counters ctx carries, nil (which counts nothing) when none.
func From(ctx context.Context) *Counters {
	c, _ := ctx.Value(key{}).(*Counters)
	return c
}
