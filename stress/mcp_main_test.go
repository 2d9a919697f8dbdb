// Package stress holds the stress, soak and fault tests of vx and its benchmarks.
// The MCP ones (mcp_*) drive the server core as a real child process: this test
// binary, re-executed as an MCP server by actortest.MaybeServe.
package stress

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/vzn/vx/actor/actortest"
	"github.com/vzn/vx/internal/testkit"
)

// TestMain turns the binary into the MCP test server when re-executed so, and
// otherwise checks that no test leaves a goroutine behind. Other suites of this
// package share it: there can be only one TestMain.
func TestMain(m *testing.M) {
	actortest.MaybeServe()
	cleanup := testkit.IsolateCacheHome()
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { cleanup(); os.Exit(code) }))
}
