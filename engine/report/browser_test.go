package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// markdownIt is the CommonMark renderer the report is tried with: markdown-it from npm (GitHub's
// own renderer is not reachable from a test), installed once under the user's cache folder.
const markdownIt = "markdown-it@14.1.0"

// renderer answers the folder markdown-it is installed in, installing it the first time; the test
// is skipped, saying why, only where npm or node cannot.
func renderer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("installs " + markdownIt + " from npm: not in -short")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the report is not rendered", tool)
		}
	}
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "vx-test", strings.ReplaceAll(markdownIt, "@", "-"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "markdown-it", "package.json")); err == nil {
		return dir
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, markdownIt)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm cannot install %s here (%v)\n%s", markdownIt, err, out)
	}
	return dir
}

// render turns markdown into HTML with markdown-it's default (CommonMark and GFM tables, raw
// HTML not passed through, as GitHub does not pass a script or a <b> of a log through).
func render(t *testing.T, dir string, markdown []byte) string {
	t.Helper()
	cmd := exec.Command("node", "-e", `const md = require(process.argv[1])();
let s = ''; process.stdin.on('data', d => s += d).on('end', () => process.stdout.write(md.render(s)));`,
		filepath.Join(dir, "node_modules", "markdown-it"))
	cmd.Stdin = strings.NewReader(string(markdown))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("render with markdown-it: %v", err)
	}
	return string(out)
}

// The golden reports render in a real browser with nothing of their markup left as text: the
// headings, the table, the code blocks and the list are elements, and what a log printed (a
// fence, a tag, a heading sign) reads as itself.
func TestReportRendersInBrowser(t *testing.T) {
	dir := renderer(t)
	chromium := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			chromium = p
			break
		}
	}
	if chromium == "" {
		t.Skip("chromium is not installed: the report is not tried in a browser")
	}
	profile := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(profile), chromedp.Flag("proxy-server", "127.0.0.1:9"), chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelTimeout()
	for _, name := range []string{"failed.md", "passed.md"} {
		md, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		page := filepath.Join(t.TempDir(), "report.html")
		html := "<!doctype html><meta charset=utf-8><title>report</title><body>" + render(t, dir, md) + "</body>"
		if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
			t.Fatalf("open %s in the browser: %v", name, err)
		}
		text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		if err != nil {
			t.Fatal(err)
		}
		counts, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]int](
			`Object.fromEntries(['h2','h3','h4','table','pre','li','b','script'].map(s => [s, document.querySelectorAll(s).length]))`))
		if err != nil {
			t.Fatal(err)
		}
		// Markup left as text outside the code blocks is what did not render.
		prose, err := chromedp.Run(ctx, chromedp.Evaluate[string](
			`(() => { const b = document.body.cloneNode(true); b.querySelectorAll('pre').forEach(p => p.remove()); return b.innerText })()`))
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range []string{"##", "**", "```", "| ---", "---:", `\|`, "](", "&amp;", "&lt;"} {
			if strings.Contains(prose, raw) {
				t.Errorf("%s: %q is left as text in the rendered report:\n%s", name, raw, text)
			}
		}
		if counts["h2"] != 1 || counts["table"] < 1 || counts["b"] != 0 || counts["script"] != 0 {
			t.Errorf("%s rendered to %v", name, counts)
		}
		if name == "failed.md" {
			if counts["h4"] != 2 || counts["pre"] != 2 || counts["li"] < 2 {
				t.Errorf("failed.md rendered to %v", counts)
			}
			for _, want := range []string{"AssertionError: expected 3 to be 4 ``` <b>bold</b>", "step ** # not a heading", "job=test | 1/2",
				"packages/lib/src/sum.test.ts:6:17", "vx last --log api#e2e", "```\n## not a heading\n ❯ src/sum.test.ts:6:17"} {
				if !strings.Contains(text, want) {
					t.Errorf("failed.md: the page does not read %q:\n%s", want, text)
				}
			}
		}
	}
}
