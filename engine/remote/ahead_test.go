package remote_test

import (
	"testing"

	"github.com/vzn/vx/internal/testkit"
)

// aheadCheckout writes a one-project workspace whose tasks a run reading a remote cache keys
// ahead of their start: gen writes gen/a.txt (an output nobody ignores), use reads every file of
// the project, gen/ included, without depending on gen, and after depends on gen, which makes gen
// the first task a run of one worker starts. use is ready, and keyed ahead, before gen writes.
func aheadCheckout(t *testing.T, remote string) string {
	t.Helper()
	return testkit.TempRepo(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  ` + remote + `
  tasks: {
    gen: { command: 'sleep 0.3 && mkdir -p gen && cp src/a.txt gen/a.txt', inputs: ['src/**'], outputs: ['gen/**'] },
    use: { command: 'ls -R . > /dev/null' },
    after: { command: 'true', dependsOn: ['gen'] },
  },
})
`,
		"packages/p/package.json": `{"name":"p"}`,
		"packages/p/src/a.txt":    "source\n",
		".gitignore":              ".vx/\n",
	})
}

// crossCheckout writes a two-project workspace where a task writes into another project: q#put's
// outputs are p's put/ ("//" glob), and p#use, which reads every file of p, depends on it. p#use
// is keyed ahead once q#put has a key, before q#put writes.
func crossCheckout(t *testing.T, remote string) string {
	t.Helper()
	return testkit.TempRepo(t, map[string]string{
		"vx.workspace.ts": `import { defineWorkspace } from '@vzn/vx/config'
export default defineWorkspace({
  projects: ['packages/*'],
  ` + remote + `
})
`,
		"packages/q/vx.project.ts": `import { defineProject } from '@vzn/vx/config'
export default defineProject({
  tasks: {
    put: { command: 'sleep 0.3 && mkdir -p ../p/put && cp src/a.txt ../p/put/b.txt', inputs: ['src/**'], outputs: ['//packages/p/put/**'] },
  },
})
`,
		"packages/p/vx.project.ts": `import { defineProject } from '@vzn/vx/config'
export default defineProject({
  tasks: {
    use: { command: 'ls -R . > /dev/null', dependsOn: ['q#put'] },
  },
})
`,
		"packages/p/package.json": `{"name":"p"}`,
		"packages/p/src/a.txt":    "p source\n",
		"packages/q/package.json": `{"name":"q"}`,
		"packages/q/src/a.txt":    "q source\n",
		".gitignore":              ".vx/\n",
	})
}

// runExpecting runs vx run args in dir and fails the test unless it passed with every one of its
// n tasks from source ("run", "local", "remote"); why says what another answer would mean.
func runExpecting(t *testing.T, what, dir string, env []string, source string, n int, why string, args ...string) {
	t.Helper()
	r := vxRun(t, dir, env, args...)
	mustPass(t, what, r)
	if got := sources(r); got[source] != n {
		t.Fatalf("%s: want %d tasks %s%s, got %v\n%s", what, n, source, why, got, r.stderr)
	}
}

// TestKeysAheadSeeWritesBeforeTheirTask tries to make a run take a key made ahead from files
// that changed before the task started: gen's command (in A) and gen's restore (in B) write
// gen/a.txt after use was keyed ahead and before use starts. A key taken from before the write
// would leave out gen/a.txt, which the key of every later run holds: the run after misses.
func TestKeysAheadSeeWritesBeforeTheirTask(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	cfg := bazelConfig(srv.URL, "")
	one := []string{"VX_CONCURRENCY=1"}
	a, b := aheadCheckout(t, cfg), aheadCheckout(t, cfg)

	tasks := []string{"gen", "use", "after"}
	runExpecting(t, "A", a, one, "run", 3, "", tasks...)
	runExpecting(t, "A again", a, one, "local", 3, " (use's key from before gen wrote?)", tasks...)
	runExpecting(t, "B", b, one, "remote", 3, " (use's key from before gen's restore?)", tasks...)
	runExpecting(t, "B again", b, one, "local", 3, "", tasks...)
}

// TestKeysAheadSeeWritesFromAnotherProject tries the same with a dependency in another project
// whose outputs lie in the task's: its writes count in the task's folder.
func TestKeysAheadSeeWritesFromAnotherProject(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	cfg := bazelConfig(srv.URL, "")
	a, b := crossCheckout(t, cfg), crossCheckout(t, cfg)
	runExpecting(t, "A", a, nil, "run", 2, "", "p#use")
	runExpecting(t, "A again", a, nil, "local", 2, " (p#use's key from before q#put wrote?)", "p#use")
	runExpecting(t, "B", b, nil, "remote", 2, " (p#use's key from before q#put's restore?)", "p#use")
}
