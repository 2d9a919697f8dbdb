// Package logging sets up vx's zerolog loggers.
//
// Logs go to the writer the caller passes, which is always stderr: stdout carries command output
// and, under `vx mcp`, the reply stream. The level comes from --log-level, else $VX_LOG, else
// "warn". A terminal gets zerolog's console format; anything else gets one JSON object a line.
// Nothing here touches zerolog's package-level settings.
package logging

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rs/zerolog"
	"golang.org/x/term"
)

// DefaultLevel is the level used when neither --log-level nor $VX_LOG names one.
const DefaultLevel = "warn"

// EnvVar is the environment variable that sets the level when --log-level is not given.
const EnvVar = "VX_LOG"

// ErrUnknownLevel is wrapped by the error for a level name that is not one of the five.
var ErrUnknownLevel = errors.New("unknown log level")

// levelNames lists the accepted levels for error messages.
const levelNames = "debug, info, warn, error or off"

// ParseLevel turns a level name ("debug", "info", "warn", "error", "off"; "" means "warn"; case
// does not matter) into a zerolog level. An unknown name is an error naming it.
func ParseLevel(level string) (zerolog.Level, error) {
	switch strings.ToLower(level) {
	case "":
		return zerolog.WarnLevel, nil
	case "debug":
		return zerolog.DebugLevel, nil
	case "info":
		return zerolog.InfoLevel, nil
	case "warn":
		return zerolog.WarnLevel, nil
	case "error":
		return zerolog.ErrorLevel, nil
	case "off":
		return zerolog.Disabled, nil
	}
	return zerolog.NoLevel, fmt.Errorf("%w %q (want %s)", ErrUnknownLevel, level, levelNames)
}

// New returns a zerolog.Logger writing to w (callers pass os.Stderr; never stdout) at the given
// level ("debug", "info", "warn", "error", "off"; "" = "warn"). Console-friendly output when w is a
// terminal, JSON otherwise. Each event carries a timestamp. The error for an unknown level is
// ParseLevel's, unwrapped, as it already names the level and the accepted ones.
func New(w io.Writer, level string) (zerolog.Logger, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return zerolog.Nop(), err
	}
	out := w
	if isTerminal(w) {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000"}
	}
	return zerolog.New(out).Level(lvl).With().Timestamp().Logger(), nil
}

// LevelFrom picks the log level: flag (--log-level) if non-empty, else getenv("VX_LOG") if
// non-empty, else "warn". It returns where the level came from too: "flag", "env" or "default".
// The level is not checked here; New checks it.
func LevelFrom(flag string, getenv func(string) string) (level, source string) {
	if flag != "" {
		return flag, "flag"
	}
	if getenv != nil {
		if v := getenv(EnvVar); v != "" {
			return v, "env"
		}
	}
	return DefaultLevel, "default"
}

// isTerminal reports whether w is a file open on a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}
