package main

import (
	"fmt"
	"io"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal and answers its terminal end.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// On a terminal vx colours unless NO_COLOR is set, TERM is dumb or --color=never says so; on a
// pipe only --color=always colours.
func TestColorOnATerminal(t *testing.T) {
	tty := openPTY(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		to      io.Writer
		color   string
		noColor bool
		env     map[string]string
		want    bool
	}{
		{tty, "auto", false, nil, true},
		{tty, "auto", false, map[string]string{"NO_COLOR": "1"}, false},
		{tty, "auto", false, map[string]string{"NO_COLOR": ""}, true},
		{tty, "auto", false, map[string]string{"TERM": "dumb"}, false},
		{tty, "never", false, nil, false},
		{tty, "auto", true, nil, false},
		{tty, "always", false, map[string]string{"NO_COLOR": "1"}, true},
		{w, "auto", false, nil, false},
		{w, "always", false, nil, true},
	} {
		a := newApp(io.Discard, io.Discard, func(k string) string { return tc.env[k] })
		a.color, a.noColor = tc.color, tc.noColor
		if got := a.colorOn(tc.to); got != tc.want {
			t.Errorf("colorOn(terminal %v, --color=%s, --no-color %v, %v) = %v, want %v", tc.to == tty, tc.color, tc.noColor, tc.env, got, tc.want)
		}
	}
}
