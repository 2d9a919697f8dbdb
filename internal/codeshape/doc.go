// Package codeshape holds the test that keeps the module's functions small enough to read: no
// non-test function over 100 lines, and none in engine/runner (the scheduler) or the packages that
// came out of it (engine/taskenv, engine/runout, engine/resources, engine/planmemo,
// engine/runrequest, engine/executor) over 80 lines or of cyclomatic complexity over 20. It has no code of its own.
package codeshape
