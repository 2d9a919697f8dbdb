// Package vxerr holds the kinds of error the engine answers with, each with the exit status the CLI
// ends on: a usage error (2), a config error (2), and a failure answer (1).
package vxerr

import (
	"errors"
	"fmt"
)

// Exit statuses of the vx command.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// Coder is an error that knows the exit status it ends the CLI with.
type Coder interface {
	error
	Code() int
}

// UsageError is a request the engine cannot answer as asked: an unknown task, a bad filter, a bad flag.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Code is ExitUsage.
func (e *UsageError) Code() int { return ExitUsage }

// Usagef returns a *UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ConfigError is a config that does not load: a syntax error, a throw, an unknown field, a cycle.
// File is relative to the workspace root; Line and Col are 1-based and zero when unknown.
type ConfigError struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e *ConfigError) Error() string {
	switch {
	case e.File == "":
		return e.Msg
	case e.Line == 0:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	case e.Col == 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
}

// Code is ExitUsage: a bad config is bad input.
func (e *ConfigError) Code() int { return ExitUsage }

// FailureError is an answer that is itself a failure (a failed task, lock drift). The document was
// still printed; the error only sets the exit status.
type FailureError struct{ Msg string }

func (e *FailureError) Error() string { return e.Msg }

// Code is ExitFailure.
func (e *FailureError) Code() int { return ExitFailure }

// ExitCode maps an error to the CLI exit status: 0 for nil, the Coder's code, else 1.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var c Coder
	if errors.As(err, &c) {
		return c.Code()
	}
	return ExitFailure
}
