package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"vx": func() { os.Exit(main1()) }})
}

// TestScripts runs every testdata/script/*.txtar as a script against the real vx binary.
// Each script gets a git identity, no inherited VX_ variables, and a `gitinit` command that makes
// the work folder a git repository with one commit of everything in it.
func TestScripts(t *testing.T) {
	t.Parallel()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("VX_UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("GIT_AUTHOR_NAME", "vx")
			env.Setenv("GIT_AUTHOR_EMAIL", "vx@example.com")
			env.Setenv("GIT_COMMITTER_NAME", "vx")
			env.Setenv("GIT_COMMITTER_EMAIL", "vx@example.com")
			env.Setenv("GIT_CONFIG_NOSYSTEM", "1")
			env.Setenv("HOME", env.WorkDir)
			if p, err := exec.LookPath("git"); err == nil {
				env.Setenv("PATH", filepath.Dir(p)+string(os.PathListSeparator)+env.Getenv("PATH"))
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"gitinit": func(ts *testscript.TestScript, neg bool, args []string) {
				for _, argv := range [][]string{
					{"init", "-q", "-b", "main"},
					{"add", "-A"},
					{"commit", "-q", "-m", "initial"},
				} {
					ts.Exec("git", argv...)
				}
			},
		},
	})
}
