//go:build linux

package proc

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// A hard stop (vx's second SIGINT or SIGTERM) ends the grace period of every Run under it at
// once: a child that ignores SIGTERM is killed now, not a minute later.
func TestHardStopEndsGrace(t *testing.T) {
	for _, supervised := range []bool{false, true} {
		t.Run(fmt.Sprintf("supervised=%v", supervised), func(t *testing.T) {
			if supervised && !supervisorSupported {
				t.Skip("no supervisor on this system")
			}
			out := newSyncBuffer("ready")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx, hardStop := WithHardStop(ctx)
			defer hardStop()
			spec := Spec{
				Shell: "trap '' TERM; echo ready; sleep 100", Env: testEnv(), Stdout: out,
				Grace: time.Minute,
			}
			if supervised {
				spec.Supervisor = testSupervisor()
			}
			done := make(chan Result, 1)
			go func() {
				res, _ := Run(ctx, spec)
				done <- res
			}()
			waitReady(t, out)
			cancel() // the first signal: SIGTERM, which the child ignores
			select {
			case res := <-done:
				t.Fatalf("Run returned before the hard stop: %+v", res)
			case <-time.After(100 * time.Millisecond):
			}
			stopped := time.Now()
			hardStop()
			select {
			case res := <-done:
				if !res.Cancelled || res.Signal != "killed" {
					t.Errorf("got %+v, want cancelled and killed", res)
				}
				if took := time.Since(stopped); took > 5*time.Second {
					t.Errorf("Run returned %v after the hard stop", took)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Run did not return after the hard stop")
			}
		})
	}
}

// A hard stop cancels the context too; nested ones stop with the outer one.
func TestWithHardStop(t *testing.T) {
	outer, stopOuter := WithHardStop(context.Background())
	inner, stopInner := WithHardStop(outer)
	defer stopInner()
	if hardStopOf(context.Background()) != nil || isClosed(hardStopOf(inner)) {
		t.Fatal("hard-stopped before any stop")
	}
	stopOuter()
	if inner.Err() == nil || !isClosed(hardStopOf(inner)) || !isClosed(hardStopOf(outer)) {
		t.Errorf("the outer stop did not reach the inner context: err %v", inner.Err())
	}

	ctx, stop := WithHardStop(context.Background())
	stop()
	stop() // twice is fine
	if ctx.Err() == nil || !isClosed(hardStopOf(ctx)) {
		t.Errorf("stop: err %v", ctx.Err())
	}
}
