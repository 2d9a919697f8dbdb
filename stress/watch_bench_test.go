package stress

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkWatchedWorkspace measures what a watching vx saves, on generated npm-workspaces repos
// (../shared/bench/genmono.py, 20 source files a package, `build` with outputs dist/**, both caches
// warm), each size in one run of rounds that alternate the tools:
//
//	VX_BENCH_SIZES="300 1000" VX_BENCH_ROUNDS=5 go test -run '^$' -bench WatchedWorkspace -benchtime 1x -timeout 60m ./stress/
//
// with VX_TURBO=path/to/turbo (stress/peers/watch.sh installs it from npm into a scratch folder and
// runs this) for Turborepo's full hit beside vx's. Each round starts a fresh `vx mcp` and times:
//
//   - cli-dry, cli-hit: `vx run build --dry=json` and an all-hit `vx run build`, scanning
//     (VX_FILE_STATE=scan: today's speed, no watcher asked);
//   - turbo-hit: `turbo run build --output-logs=none`, all hit;
//   - plan-first, run-first: the server's first planTasks (right after initialize, its watcher
//     still taking its first look) and its first runTasks;
//   - plan-run: planTasks after that run, once the watcher serves (the index changed: the hits
//     are looked up again) and a second later, as an agent's next call comes, the server idle;
//     plan-ready instead, in every other round, the planTasks the moment the watcher first
//     serves (where its first look ended after the runTasks, a plan made from nothing, or
//     waiting for the server's own);
//   - plan-same after nothing changed, and plan-edit after an edit of one package's source (its
//     build then a miss);
//   - run-edit: an all-hit runTasks after a file was written again with the same content;
//   - cli-hit-watched: an all-hit `vx run build` in a terminal beside the server, which asks its
//     watcher over the socket, right after that runTasks (while the server starts its next kept
//     child), and cli-hit-idle the same a second later, the server idle.
//
// It prints a Markdown table of the medians and the ratios the goals name.
func BenchmarkWatchedWorkspace(b *testing.B) {
	gen := os.Getenv("VX_GENMONO")
	if gen == "" {
		gen, _ = filepath.Abs("../../shared/bench/genmono.py")
	}
	if _, err := os.Stat(gen); err != nil {
		b.Skipf("no workspace generator at %s (set VX_GENMONO)", gen)
	}
	sizes := strings.Fields(envOr("VX_BENCH_SIZES", "300 1000"))
	rounds, _ := strconv.Atoi(envOr("VX_BENCH_ROUNDS", "5"))
	bin := b.TempDir()
	root, _ := filepath.Abs("..")
	for _, pkg := range []string{"vx", "vx-sandbox"} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, pkg), "./cmd/"+pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			b.Skipf("building %s: %v\n%s", pkg, err, out)
		}
	}
	var rows []string
	for b.Loop() {
		for _, size := range sizes {
			rows = append(rows, benchWatchedSize(b, gen, filepath.Join(bin, "vx"), size, rounds)...)
		}
	}
	fmt.Printf("\n| packages | path | median | ratio |\n| --- | --- | --- | --- |\n%s\n", strings.Join(rows, "\n"))
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// watchedBench is one size's workspace and the times taken.
type watchedBench struct {
	b     *testing.B
	ws    string
	vx    string
	turbo string
	times map[string][]time.Duration
}

func (w *watchedBench) cmd(name string, args ...string) *exec.Cmd {
	c := exec.Command(name, args...)
	c.Dir = w.ws
	c.Env = append(crashEnv(), "TURBO_TELEMETRY_DISABLED=1", "DO_NOT_TRACK=1", "TURBO_NO_UPDATE_NOTIFIER=1", "CI=true")
	return c
}

// time runs c and records its wall time under label.
func (w *watchedBench) time(label string, c *exec.Cmd) {
	start := time.Now()
	if out, err := c.CombinedOutput(); err != nil {
		w.b.Fatalf("%s: %v\n%s", label, err, out)
	}
	w.times[label] = append(w.times[label], time.Since(start))
}

// call times one tool call on p under label, wanting want in the reply.
func (w *watchedBench) call(p *rawProc, label, tool, args, want string) {
	line := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args)
	start := time.Now()
	reply := p.call(w.b, line)
	w.times[label] = append(w.times[label], time.Since(start))
	if !strings.Contains(reply, want) {
		w.b.Fatalf("%s: %.400s", label, reply)
	}
}

func benchWatchedSize(b *testing.B, gen, vx, size string, rounds int) []string {
	n, _ := strconv.Atoi(size)
	ws := filepath.Join(b.TempDir(), "ws")
	if out, err := exec.Command("python3", gen, ws, size, "--files", "20").CombinedOutput(); err != nil {
		b.Fatalf("genmono: %v\n%s", err, out)
	}
	config := filepath.Join(ws, "vx.workspace.ts")
	text, _ := os.ReadFile(config)
	text = []byte(strings.Replace(strings.Replace(string(text), "projects: ['packages/*'],", "projects: ['packages/*'], plugins: [mcp()],", 1),
		"import { defineWorkspace } from '@vzn/vx/config'", "import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'", 1))
	if err := os.WriteFile(config, text, 0o644); err != nil {
		b.Fatal(err)
	}
	w := &watchedBench{b: b, ws: ws, vx: vx, turbo: os.Getenv("VX_TURBO"), times: map[string][]time.Duration{}}
	for _, args := range [][]string{{"add", "-A"}, {"commit", "-q", "-m", "mcp"}} {
		if out, err := w.cmd("git", args...).CombinedOutput(); err != nil {
			b.Fatalf("git: %v\n%s", err, out)
		}
	}
	for range 2 {
		w.time("warm", w.cmd(vx, "run", "build"))
		if w.turbo != "" {
			w.time("warm", w.cmd(w.turbo, "run", "build", "--output-logs=none"))
		}
	}
	time.Sleep(3 * time.Second) // outputs older than any stat-cache window
	w.time("warm", w.cmd(vx, "run", "build"))
	edited := filepath.Join(ws, fmt.Sprintf("packages/p%04d/src/index.js", n))
	original, err := os.ReadFile(edited)
	if err != nil {
		b.Fatal(err)
	}
	hits := fmt.Sprintf(`\"hits\":%d`, n)
	for r := range rounds {
		scan := func(args ...string) *exec.Cmd {
			c := w.cmd(vx, args...)
			c.Env = append(c.Env, "VX_FILE_STATE=scan")
			return c
		}
		w.time("cli-dry", scan("run", "build", "--dry=json"))
		w.time("cli-hit", scan("run", "build"))
		if w.turbo != "" {
			w.time("turbo-hit", w.cmd(w.turbo, "run", "build", "--output-logs=none"))
		}
		p := startRaw(b, w.cmd(vx, "mcp"))
		p.call(b, initializeLine)
		p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		w.call(p, "plan-first", "planTasks", `{"tasks":["build"]}`, `\"exitCode\":0`)
		w.call(p, "run-first", "runTasks", `{"tasks":["build"]}`, hits)
		w.waitServed()
		if r%2 == 0 {
			time.Sleep(time.Second)
			w.call(p, "plan-run", "planTasks", `{"tasks":["build"]}`, `\"exitCode\":0`)
		} else {
			w.call(p, "plan-ready", "planTasks", `{"tasks":["build"]}`, `\"exitCode\":0`)
		}
		w.call(p, "plan-same", "planTasks", `{"tasks":["build"]}`, `\"exitCode\":0`)
		edit := append(slices.Clone(original), fmt.Sprintf("// edit %d\n", r)...)
		if err := os.WriteFile(edited, edit, 0o644); err != nil {
			b.Fatal(err)
		}
		w.call(p, "plan-edit", "planTasks", `{"tasks":["build"]}`, `\"miss\":1`)
		if err := os.WriteFile(edited, original, 0o644); err != nil {
			b.Fatal(err)
		}
		w.call(p, "run-edit", "runTasks", `{"tasks":["build"]}`, hits)
		w.time("cli-hit-watched", w.cmd(vx, "run", "build"))
		time.Sleep(time.Second)
		w.time("cli-hit-idle", w.cmd(vx, "run", "build"))
		p.close(b)
	}
	return w.rows(size)
}

// waitServed waits until a CLI run of the workspace gets the server's file state, and asks it
// once more so that its answer is made.
func (w *watchedBench) waitServed() {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c := w.cmd(w.vx, "run", "build", "--dry=json", "--log-level", "debug")
		c.Env = append(c.Env, "VX_FILE_STATE_WAIT=2s")
		out, _ := c.CombinedOutput()
		if strings.Contains(string(out), "file state: from the watcher") {
			return
		}
		if time.Now().After(deadline) {
			w.b.Fatalf("the server's watcher never answered:\n%.2000s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// rows answers the size's table rows: each path's median, with the ratios the goals name.
func (w *watchedBench) rows(size string) []string {
	m := func(label string) time.Duration {
		if len(w.times[label]) == 0 {
			return 0
		}
		return median(w.times[label])
	}
	ratio := func(a, b string) string {
		if m(b) == 0 {
			return ""
		}
		return fmt.Sprintf("%.2f× %s", float64(m(a))/float64(m(b)), b)
	}
	var out []string
	for _, r := range [][3]string{
		{"cli-dry", "", ""}, {"cli-hit", "", ""}, {"turbo-hit", "", ""},
		{"plan-first", "cli-dry", ""}, {"plan-run", "cli-dry", ""}, {"plan-ready", "cli-dry", ""}, {"plan-same", "cli-dry", ""}, {"plan-edit", "cli-dry", ""},
		{"run-first", "cli-hit", ""}, {"run-edit", "cli-hit", ""},
		{"cli-hit-watched", "cli-hit", "turbo-hit"},
		{"cli-hit-idle", "cli-hit", "turbo-hit"},
	} {
		if len(w.times[r[0]]) == 0 {
			continue
		}
		ratios := []string{}
		for _, against := range r[1:] {
			if against != "" && len(w.times[against]) > 0 {
				ratios = append(ratios, ratio(r[0], against))
			}
		}
		if r[0] == "cli-hit" && len(w.times["turbo-hit"]) > 0 {
			ratios = append(ratios, ratio("cli-hit", "turbo-hit"))
		}
		out = append(out, fmt.Sprintf("| %s | %s | %.1f ms | %s |", size, r[0], float64(m(r[0]).Microseconds())/1000, strings.Join(ratios, ", ")))
		w.b.ReportMetric(float64(m(r[0]).Microseconds())/1000, size+"-"+r[0]+"-ms")
	}
	return out
}
