package graphview_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium is the browser the pages are tried in: Debian's chromium (.ci/run installs it).
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it): the pages are not tried in a browser")
	return ""
}

// browser starts a headless chromium for the test: no sandbox (CI runs as root), no GPU, every
// connection but to the loopback sent to a closed port, a profile of its own. It answers the
// browser's context; the browser ends with the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	profile, err := os.MkdirTemp("", "vx-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 800),
		chromedp.UserDataDir(profile),
		chromedp.Flag("proxy-server", "127.0.0.1:9"), chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("allow-file-access-from-files", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		for range 50 { // the browser's children may still write there a moment
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", chromium(t), err)
	}
	return ctx
}

// page is a page open in the browser, with what it said on its console and what it asked of the
// network.
type page struct {
	ctx      context.Context
	mu       sync.Mutex
	problems []string // console errors, exceptions, the browser log's errors and warnings
	requests []string
}

// open opens the file at path from file:// with the network emulated offline, and waits until
// its script says it has drawn; it answers how long that took from the navigation.
func open(t *testing.T, ctx context.Context, path string) (*page, time.Duration) {
	t.Helper()
	p := &page{ctx: ctx}
	err := chromedp.Listen(ctx, func(ev any) {
		p.mu.Lock()
		defer p.mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				p.problems = append(p.problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			text := d.Text
			if d.Exception != nil {
				text += " " + d.Exception.Description
			}
			p.problems = append(p.problems, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber+1, d.ColumnNumber+1, text))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
				p.problems = append(p.problems, fmt.Sprintf("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			p.requests = append(p.requests, ev.Request.URL)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	offline := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
			MatchedNetworkConditions: []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}})
		return err
	})
	began := time.Now()
	if err := chromedp.Do(ctx, offline, chromedp.Navigate("file://"+path), chromedp.WaitReady(chromedp.CSS("body[data-ready]"))); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	return p, time.Since(began)
}

// check fails the test for every problem the page reported and every request it made that was not
// for a file: (its own), data: or about: URL.
func (p *page) check(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.problems {
		t.Errorf("the page reported %s", m)
	}
	for _, u := range p.requests {
		if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "about:") {
			t.Errorf("the page asked the network for %s", u)
		}
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, p *page, expr string) T {
	t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// do runs browser actions on the page.
func (p *page) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// screenshot saves the page as name.png in $VX_SCREENSHOTS, when set (docs/img is refreshed so).
func (p *page) screenshot(t *testing.T, name string) {
	t.Helper()
	dir := os.Getenv("VX_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
