package stress

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkTaskLogThroughServer reads a failed task's 32 MiB one-line log whole, side by side in
// one run of rounds that alternate the two ways:
//
//		VX_BENCH_ROUNDS=7 go test -run '^$' -bench TaskLogThroughServer -benchtime 1x ./stress/
//
//	  - last-log: `vx last --log app#build --full` as a command, its output read through a pipe;
//	  - pages: a running `vx mcp` asked getTaskLog, then each answer's nextCursor until the last
//	    page, over stdio as a client does (the client reads each reply line and its cursor).
//
// It prints the medians and their ratio, which the trust issue wants within 2×.
func BenchmarkTaskLogThroughServer(b *testing.B) {
	rounds, _ := strconv.Atoi(envOr("VX_BENCH_ROUNDS", "7"))
	bin := b.TempDir()
	root, _ := filepath.Abs("..")
	vx := filepath.Join(bin, "vx")
	for _, pkg := range []string{"vx", "vx-sandbox"} {
		build := exec.Command("go", "build", "-o", filepath.Join(bin, pkg), "./cmd/"+pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			b.Skipf("building %s: %v\n%s", pkg, err, out)
		}
	}
	ws := filepath.Join(b.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(ws, "packages", "app"), 0o755); err != nil {
		b.Fatal(err)
	}
	config := "import { defineWorkspace } from '@vzn/vx/config'\nimport { mcp } from '@vzn/vx-mcp'\n" +
		"export default defineWorkspace({ projects: ['packages/*'], plugins: [mcp()], tasks: { build: {\n" +
		"  command: \"head -c 33554432 /dev/zero | tr '\\\\0' x; exit 1\", outputs: [] } } })\n"
	files := map[string]string{
		"vx.workspace.ts":           config,
		"packages/app/package.json": `{"name":"app"}`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	cmd := func(args ...string) *exec.Cmd {
		c := exec.Command(vx, args...)
		c.Dir = ws
		c.Env = append(crashEnv(), "VX_CACHE_DIR="+filepath.Join(ws, ".cache"))
		if prefix := os.Getenv("VX_BENCH_PROFILE"); prefix != "" { // a CPU profile of each process
			c.Env = append(c.Env, "VX_CPUPROFILE="+prefix+args[0])
		}
		return c
	}
	if out, err := cmd("run", "build").CombinedOutput(); err == nil {
		b.Fatalf("the build passed:\n%.2000s", out)
	}
	time.Sleep(3 * time.Second) // the config older than any stat-cache window, as a day-old one is
	times := map[string][]time.Duration{}
	pages := 0
	for b.Loop() {
		for range rounds {
			// Its output is counted as it comes, not kept: the reader costs what a pager would.
			var out countingWriter
			last := cmd("last", "--log", "app#build", "--full")
			last.Stdout = &out
			start := time.Now()
			err := last.Run()
			times["last-log"] = append(times["last-log"], time.Since(start))
			if err != nil || out.xs != 32<<20 {
				b.Fatalf("vx last --log: %v, %d of its bytes are the log's", err, out.xs)
			}
			p := startRaw(b, cmd("mcp"))
			p.call(b, initializeLine)
			p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			start = time.Now()
			pages = readServerLogPages(b, p)
			times["pages"] = append(times["pages"], time.Since(start))
			p.close(b)
		}
	}
	last, paged := median(times["last-log"]), median(times["pages"])
	fmt.Printf("\n| path | median | ratio |\n| --- | --- | --- |\n| vx last --log | %.1f ms | |\n| getTaskLog, %d pages | %.1f ms | %.2f× |\n",
		float64(last.Microseconds())/1000, pages, float64(paged.Microseconds())/1000, float64(paged)/float64(last))
	b.ReportMetric(float64(last.Microseconds())/1000, "last-log-ms")
	b.ReportMetric(float64(paged.Microseconds())/1000, "pages-ms")
	b.ReportMetric(float64(paged)/float64(last), "ratio")
}

// readServerLogPages pages app#build's log through p's getTaskLog and answers how many pages it
// took; the pages after the first (which is the log cut in the middle) must hold the whole log,
// as their page fields say (total less omitted is a page's own bytes).
func readServerLogPages(b *testing.B, p *rawProc) int {
	key := []byte(`"nextCursor":"`)
	args := `{"taskId":"app#build"}`
	held := 0
	for n := 1; ; n++ {
		p.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"getTaskLog","arguments":%s}}`, n, args))
		// The reply is read in place (it fits the reader's buffer) and only off its ends, as a
		// client that copies nothing it does not keep and decodes only structuredContent's page
		// fields (after its output): what is timed is the server.
		reply, err := p.out.ReadSlice('\n')
		if err != nil {
			b.Fatalf("page %d: %v", n, err)
		}
		head, tail := reply[:min(len(reply), 64)], reply[max(0, len(reply)-64):]
		if !bytes.Contains(head, []byte(`"result"`)) || bytes.Contains(tail, []byte(`"isError":true`)) {
			b.Fatalf("page %d: %.400s", n, reply)
		}
		if n > 1 {
			var total, omitted int
			if _, err := fmt.Sscanf(string(tail[bytes.LastIndex(tail, []byte(`"total"`)):]), `"total":%d,"omitted":%d}`, &total, &omitted); err != nil {
				b.Fatalf("page %d ends %q: %v", n, tail, err)
			}
			held += total - omitted
		}
		i := bytes.LastIndex(reply, key) // structuredContent's (the text's is escaped)
		if i < 0 {
			if held != 32<<20 {
				b.Fatalf("%d pages hold %d bytes, not the log's %d", n, held, 32<<20)
			}
			return n
		}
		rest := reply[i+len(key):]
		cursor := rest[:bytes.IndexByte(rest, '"')]
		args = fmt.Sprintf(`{"taskId":"app#build","cursor":%q}`, cursor)
	}
}

// countingWriter counts the x bytes written to it.
type countingWriter struct{ xs int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.xs += bytes.Count(p, []byte("x"))
	return len(p), nil
}
