package remote_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// aheadCheckout writes a one-project workspace whose tasks a run reading a remote cache keys
// ahead of their start: gen writes gen/a.txt (an output nobody ignores), use reads every file of
// the project, gen/ included, without depending on gen, and after depends on gen, which makes gen
// the first task a run of one worker starts. use is ready, and keyed ahead, before gen writes.
func aheadCheckout(t *testing.T, remote string) string {
	t.Helper()
	return writeCheckout(t, map[string]string{
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
	return writeCheckout(t, map[string]string{
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

// writeCheckout writes files into a new folder and commits them, as a git checkout.
func writeCheckout(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// TestKeysAheadSeeWritesFromAnotherProject tries the same with a dependency in another project
// whose outputs lie in the task's: its writes count in the task's folder.
func TestKeysAheadSeeWritesFromAnotherProject(t *testing.T) {
	srv := startBazelRemote(t, "", "")
	cfg := bazelConfig(srv.URL, "")
	a, b := crossCheckout(t, cfg), crossCheckout(t, cfg)
	ra := vxRun(t, a, nil, "p#use")
	mustPass(t, "A", ra)
	if got := sources(ra); got["run"] != 2 {
		t.Fatalf("A: want 2 tasks run, got %v\n%s", got, ra.stderr)
	}
	ra2 := vxRun(t, a, nil, "p#use")
	mustPass(t, "A again", ra2)
	if got := sources(ra2); got["local"] != 2 {
		t.Fatalf("A again: want 2 local hits (p#use's key from before q#put wrote?), got %v\n%s", got, ra2.stderr)
	}
	rb := vxRun(t, b, nil, "p#use")
	mustPass(t, "B", rb)
	if got := sources(rb); got["remote"] != 2 {
		t.Fatalf("B: want 2 remote hits (p#use's key from before q#put's restore?), got %v\n%s", got, rb.stderr)
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

	ra := vxRun(t, a, one, "gen", "use", "after")
	mustPass(t, "A", ra)
	if got := sources(ra); got["run"] != 3 {
		t.Fatalf("A: want 3 tasks run, got %v\n%s", got, ra.stderr)
	}
	ra2 := vxRun(t, a, one, "gen", "use", "after")
	mustPass(t, "A again", ra2)
	if got := sources(ra2); got["local"] != 3 {
		t.Fatalf("A again: want 3 local hits (use's key from before gen wrote?), got %v\n%s", got, ra2.stderr)
	}

	rb := vxRun(t, b, one, "gen", "use", "after")
	mustPass(t, "B", rb)
	if got := sources(rb); got["remote"] != 3 {
		t.Fatalf("B: want 3 remote hits (use's key from before gen's restore?), got %v\n%s", got, rb.stderr)
	}
	rb2 := vxRun(t, b, one, "gen", "use", "after")
	mustPass(t, "B again", rb2)
	if got := sources(rb2); got["local"] != 3 {
		t.Fatalf("B again: want 3 local hits, got %v\n%s", got, rb2.stderr)
	}
}
