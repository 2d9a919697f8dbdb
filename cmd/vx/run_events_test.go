//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/runout"
)

// runWithEvents runs vx run args with --events-fd 3 in dir and answers its events and exit code.
func runWithEvents(t *testing.T, dir string, env []string, args ...string) ([]runout.Event, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := vxCommand(t, dir, append([]string{"run", "--events-fd", "3"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	cmd.ExtraFiles = []*os.File{w}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	var events []runout.Event
	runout.ReadEvents(r, func(ev runout.Event) { events = append(events, ev) })
	_ = cmd.Wait()
	if cmd.ProcessState == nil {
		t.Fatalf("vx run %s did not run:\n%s", strings.Join(args, " "), stderr.String())
	}
	return events, cmd.ProcessState.ExitCode()
}

// vx run writes the message it ends on as an error event, secrets masked, where its summary does
// not say it; a run whose tasks ran, passed or failed, has none.
func TestRunErrorEvent(t *testing.T) {
	t.Parallel()
	dir := writeWorkspace(t, runToolsWorkspace(""))
	const secret = "s3cr3t-token-value"
	env := []string{"DEPLOY_TOKEN=" + secret}

	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"nope"}, 2, `unknown task "nope": no project declares it`},
		{[]string{secret}, 2, `unknown task "***": no project declares it`},
		{[]string{"--all", "--filter", "nothing-is-called-this"}, 2, ""},
		{[]string{}, 2, "name the tasks to run, or --all"},
		{[]string{"--concurrency", "-1", "build"}, 2, "--concurrency -1: want a positive number of tasks, or a share of the CPUs such as 50%"},
		{[]string{"--concurrency", "0", "build"}, 2, "--concurrency 0: want a positive number of tasks, or a share of the CPUs such as 50%"},
		{[]string{"--dry=yaml", "build"}, 2, "--dry=yaml: want json or text"},
	} {
		events, code := runWithEvents(t, dir, env, tc.args...)
		if code != tc.code || len(events) != 1 || events[0].Type != runout.EventError ||
			(tc.msg != "" && events[0].Message != tc.msg) || events[0].Message == "" || strings.Contains(events[0].Message, secret) {
			t.Errorf("vx run %s: exit %d, events %+v; want exit %d and one error event %q", strings.Join(tc.args, " "), code, events, tc.code, tc.msg)
		}
	}

	for _, tc := range []struct {
		task string
		code int
	}{{"build", 0}, {"fail", 1}} {
		events, code := runWithEvents(t, dir, env, "--filter", "app", tc.task)
		types := make([]string, len(events))
		for i, ev := range events {
			types[i] = ev.Type
		}
		if code != tc.code || len(events) < 3 || types[0] != runout.EventStart || types[len(types)-1] != runout.EventEnd ||
			strings.Contains(strings.Join(types, " "), runout.EventError) {
			t.Errorf("vx run %s: exit %d, events %v; want exit %d, start … end and no error", tc.task, code, types, tc.code)
		}
	}
}
