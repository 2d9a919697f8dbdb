package stress

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sdkServer builds the bare Go SDK server of testdata/sdkserver once and returns a command
// running it, or skips when it cannot be built here.
func sdkServer(b *testing.B) func() *exec.Cmd {
	b.Helper()
	exe := filepath.Join(b.TempDir(), "sdkserver")
	build := exec.Command("go", "build", "-o", exe, "./testdata/sdkserver")
	if out, err := build.CombinedOutput(); err != nil {
		b.Skipf("building the SDK server: %v\n%s", err, out)
	}
	return func() *exec.Cmd { return exec.Command(exe) }
}

// execToInitialize is the time from exec to the initialize reply of one server process. Then, as
// a client does, it sends notifications/initialized (vx mcp starts evaluating the config on it)
// and a ping, and closes.
func execToInitialize(b *testing.B, cmd *exec.Cmd) time.Duration {
	b.Helper()
	start := time.Now()
	p := startRaw(b, cmd)
	reply := p.call(b, initializeLine)
	took := time.Since(start)
	if !strings.Contains(reply, `"result"`) || !strings.Contains(reply, `"protocolVersion"`) {
		b.Fatalf("initialize: %s", reply)
	}
	p.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if pong := p.call(b, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); !strings.Contains(pong, `"result"`) {
		b.Fatalf("ping: %s", pong)
	}
	p.close(b)
	return took
}

// BenchmarkMCPInitializeVersusSDK measures exec → initialize reply of `vx mcp` (in a one-project
// workspace that declares the plugin) against a bare MCP Go SDK server, alternating one exec of
// each per iteration so that both see the same machine; it reports both medians and their ratio.
// Run it with -benchtime 100x for the figure docs/performance.md gives.
func BenchmarkMCPInitializeVersusSDK(b *testing.B) {
	vx, sdk := vxServer(b), sdkServer(b)
	var vxTimes, sdkTimes []time.Duration
	for b.Loop() {
		vxTimes = append(vxTimes, execToInitialize(b, vx()))
		sdkTimes = append(sdkTimes, execToInitialize(b, sdk()))
	}
	vxMedian, sdkMedian := median(vxTimes), median(sdkTimes)
	b.ReportMetric(float64(vxMedian.Microseconds()), "vx-median-µs")
	b.ReportMetric(float64(sdkMedian.Microseconds()), "sdk-median-µs")
	b.ReportMetric(float64(vxMedian)/float64(sdkMedian), "vx/sdk")
}
