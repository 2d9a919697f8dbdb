package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/vzn/vx/engine/vxerr"
)

// The colours vx's own words take in text output (the runner colours its lines itself).
const (
	ansiReset = "\x1b[0m"
	ansiRed   = "\x1b[31m"
	ansiGreen = "\x1b[32m"
)

// registerColor declares --color[=WHEN] and its Turborepo spelling --no-color.
func (a *app) registerColor(pf *pflag.FlagSet) {
	pf.StringVar(&a.color, "color", "auto", "colour the text output: `WHEN` is auto (on a terminal, unless NO_COLOR is set), always or never")
	pf.Lookup("color").NoOptDefVal = "always"
	pf.BoolVar(&a.noColor, "no-color", false, "no colour: --color=never")
	_ = pf.MarkHidden("no-color")
}

// checkColor refuses a --color that is none of the words.
func (a *app) checkColor() error {
	switch a.color {
	case "auto", "always", "never":
		return nil
	}
	return vxerr.Usagef("--color=%s: want auto, always or never", a.color)
}

// colorOn reports whether text written to w is coloured: --color=always; or, under auto (the
// default), w is a terminal, NO_COLOR is unset or empty (no-color.org) and TERM is not dumb.
func (a *app) colorOn(w io.Writer) bool {
	switch {
	case a.noColor || a.color == "never":
		return false
	case a.color == "always":
		return true
	}
	if c, ok := w.(*countingWriter); ok {
		w = c.w
	}
	return isTerminal(w) && a.getenv("NO_COLOR") == "" && a.getenv("TERM") != "dumb"
}

// paint wraps text, already escaped for a terminal, in color where text to w is coloured.
func (a *app) paint(w io.Writer, color, text string) string {
	if !a.colorOn(w) {
		return text
	}
	return color + text + ansiReset
}
