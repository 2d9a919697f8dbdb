package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"go.uber.org/goleak"

	"github.com/vzn/vx/internal/testkit"
)

func TestMain(m *testing.M) {
	// Go tests start the real vx as this test binary with VX_TEST_MAIN=1 (see vxCommand).
	if os.Getenv("VX_TEST_MAIN") == "1" {
		os.Exit(main1())
	}
	testscript.Main(leakChecked{m}, map[string]func(){"vx": func() { os.Exit(main1()) }, "vxnet": vxnetMain})
}

// leakChecked runs the tests, then fails the package if any goroutine outlived them.
// The tests get a cache home of their own (testkit.IsolateCacheHome), made here: testscript runs
// this only for the tests, never in the vx it starts from this binary. Every vx they start exits
// without the race detector's second of sleep (testkit.ShortenRaceExit; testscript passes GORACE
// on to its scripts).
type leakChecked struct{ m *testing.M }

func (l leakChecked) Run() int {
	testkit.ShortenRaceExit()
	cleanup := testkit.IsolateCacheHome()
	code := l.m.Run()
	cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goroutines outlived the tests: %v\n", err)
			return 1
		}
	}
	return code
}

// TestScripts runs every testdata/script/*.txtar as a script against the real vx binary.
// Each script gets a git identity, no inherited VX_ variables, and a `gitinit` command that makes
// the work folder a git repository with one commit of everything in it.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, scriptParams("testdata/script"))
}

// scriptParams are the script tests' parameters for the scripts in dir: a git identity and a
// home of the script's own, git first on PATH, and the `gitinit` command.
func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("VX_UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("GIT_AUTHOR_NAME", "vx")
			env.Setenv("GIT_AUTHOR_EMAIL", "vx@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "vx")
			env.Setenv("GIT_COMMITTER_EMAIL", "vx@example.com")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("HOME", env.WorkDir)
			// The shared store's default folder, outside the work folder (whose files a script's
			// workspace may hash) and removed with the script.
			cache, err := os.MkdirTemp("", "vx-script-cache-")
			if err != nil {
				return err
			}
			env.Defer(func() { os.RemoveAll(cache) })
			env.Setenv("XDG_CACHE_HOME", cache)
			if p, err := exec.LookPath("git"); err == nil {
				env.Setenv("PATH", filepath.Dir(p)+string(os.PathListSeparator)+env.Getenv("PATH"))
			}
			return nil
		},
		Condition: scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// scrub FILE… replaces what differs from run to run (run ids, durations) with RUNID
			// and DUR in each file, so that a run's output can be compared with a golden file.
			"scrub": scrub,
			"gitinit": func(ts *testscript.TestScript, neg bool, args []string) {
				for _, argv := range [][]string{
					{"init", "-q", "-b", "main"},
					{"add", "-A"},
					{"commit", "-q", "-m", "initial"},
				} {
					ts.Exec("git", argv...)
				}
			},
			"sqlite":      sqliteCmd,
			"legacystate": legacyStateCmd,
		},
	}
}

// scrubbed are the parts of a run's output that differ from run to run, and what scrub puts in
// their place: run ids (26 characters of Crockford's base 32) and durations as Go prints them.
var scrubbed = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b[0-9a-hjkmnp-tv-z]{26}\b`), "RUNID"},
	{regexp.MustCompile(`\b(\d+h)?(\d+m)?\d+(\.\d+)?(ns|µs|us|ms|s|m|h)\b`), "DUR"},
}

// scrub is the script command: scrub FILE….
func scrub(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: scrub FILE…")
	}
	for _, name := range args {
		text := ts.ReadFile(name)
		for _, s := range scrubbed {
			text = s.re.ReplaceAllString(text, s.with)
		}
		if err := os.WriteFile(ts.MkAbs(name), []byte(text), 0o644); err != nil {
			ts.Fatalf("scrub %s: %v", name, err)
		}
	}
}
