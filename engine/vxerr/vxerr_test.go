package vxerr

import (
	"errors"
	"fmt"
	"testing"
)

func TestConfigErrorText(t *testing.T) {
	for _, c := range []struct {
		err  ConfigError
		want string
	}{
		{ConfigError{Msg: "no vx.workspace.ts"}, "no vx.workspace.ts"},
		{ConfigError{File: "vx.workspace.ts", Msg: "boom"}, "vx.workspace.ts: boom"},
		{ConfigError{File: "vx.workspace.ts", Line: 3, Msg: "boom"}, "vx.workspace.ts:3: boom"},
		{ConfigError{File: "a/vx.project.ts", Line: 3, Col: 7, Msg: "boom"}, "a/vx.project.ts:3:7: boom"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.err, got, c.want)
		}
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("plain"), ExitFailure},
		{Usagef("unknown task %q", "bild"), ExitUsage},
		{&ConfigError{Msg: "x"}, ExitUsage},
		{&FailureError{Msg: "1 task failed"}, ExitFailure},
		// A wrapped kind keeps its code: the CLI wraps errors with the verb's context.
		{fmt.Errorf("run: %w", Usagef("bad filter")), ExitUsage},
		{fmt.Errorf("load: %w", &ConfigError{File: "f", Msg: "x"}), ExitUsage},
	} {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestUsagefFormats(t *testing.T) {
	err := Usagef("unknown task %q in %s", "bild", "app")
	if err.Error() != `unknown task "bild" in app` {
		t.Fatalf("got %q", err)
	}
	var u *UsageError
	if !errors.As(err, &u) {
		t.Fatal("Usagef does not answer a *UsageError")
	}
}
