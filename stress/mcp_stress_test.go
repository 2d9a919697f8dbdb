package stress

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vzn/vx/actor/actortest"
)

// stressWorkers is the pool size of the server under stress.
const stressWorkers = 8

// TestMCPStress sends a mix of calls, cancellations and random batches through a
// real server process and accounts for every line it writes: each request not
// cancelled is answered exactly once, a cancelled one at most once (its reply may
// cross the cancel), and one still running when its cancel is read never. Then it
// measures ping round trips while every worker is busy. Figures are printed, not
// asserted. -short runs 2,000 calls with 200 cancellations; the full run 10,000
// with 1,000.
func TestMCPStress(t *testing.T) {
	calls, cancels, pings := 10_000, 1_000, 1_000
	if testing.Short() {
		calls, cancels, pings = 2_000, 200, 200
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d (set VX_STRESS_SEED to replay)", seed)
	if s := envSeed(); s != 0 {
		seed = s
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))

	c := newMCPClient(t, fmt.Sprintf("%s=%d", actortest.EnvWorkers, stressWorkers))
	c.roundTrip(t, "init", `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stress","version":"1"}}}`)
	c.send(t, []string{`{"jsonrpc":"2.0","method":"notifications/initialized"}`})

	plan := planCalls(rng, calls, cancels)
	frames := plan.frames(rng)
	start := time.Now()
	for len(frames) > 0 { // in chunks, so that cancels meet calls queued, running and finishing
		n := min(len(frames), 50+rng.IntN(100))
		c.send(t, frames[:n])
		frames = frames[n:]
		// Jitter, not synchronisation: a pause of 0 or 1 ms between chunks lets the server
		// drain some of them, so that cancels meet calls in every state.
		time.Sleep(time.Duration(rng.IntN(2)) * time.Millisecond)
	}
	c.waitAnswered(t, plan.mustAnswer, 2*time.Minute)
	elapsed := time.Since(start)
	// A wait for something not to happen: a wrong late reply to a cancelled call would show up
	// within this bound (every call's work is a few milliseconds).
	time.Sleep(300 * time.Millisecond)

	// Ping round trips with every worker busy and more work queued behind them.
	var busy []string
	for i := range 2 * stressWorkers {
		busy = append(busy, busyCall(i))
	}
	c.send(t, busy)
	// Every worker is busy once as many busy calls as workers have reported their start.
	c.waitProgress(t, busyToken, stressWorkers, time.Minute)
	var rtts latencies
	for i := range pings {
		id := fmt.Sprintf("ping%d", i)
		rtts = append(rtts, c.roundTrip(t, id, `{"jsonrpc":"2.0","id":"`+id+`","method":"ping"}`))
	}
	var cancelBusy []string
	for i := range 2 * stressWorkers {
		cancelBusy = append(cancelBusy, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"busy%d"}}`, i))
	}
	c.send(t, cancelBusy)
	c.closeAndWait(t)

	// Account for every line.
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.badLines) > 0 {
		t.Errorf("%d lines on the reply stream are not JSON-RPC, first %q", len(c.badLines), c.badLines[0])
	}
	for _, id := range plan.mustAnswer {
		if n := c.replies[id]; n != 1 {
			t.Errorf("%s answered %d times, want exactly once", id, n)
		}
	}
	crossed := 0
	for _, id := range plan.racing {
		switch n := c.replies[id]; {
		case n > 1:
			t.Errorf("cancelled %s answered %d times", id, n)
		case n == 1:
			crossed++
		}
	}
	for _, id := range plan.mustNot {
		if n := c.replies[id]; n != 0 {
			t.Errorf("%s answered %d times although it was still running when its cancel was read", id, n)
		}
	}
	for i := range 2 * stressWorkers {
		if n := c.replies[fmt.Sprintf("busy%d", i)]; n != 0 {
			t.Errorf("cancelled busy%d answered", i)
		}
	}
	for id, code := range c.errors {
		if want, ok := plan.wantError[id]; !ok || want != code {
			t.Errorf("%s: error %d, want %d", id, code, want)
		}
	}
	for tok, values := range c.progress {
		for i := 1; i < len(values); i++ {
			if values[i] <= values[i-1] {
				t.Errorf("progress of %s not strictly increasing: %v", tok, values)
				break
			}
		}
	}
	if len(c.lateNotify) > 0 {
		t.Errorf("progress after the reply for %v", c.lateNotify)
	}
	known := len(plan.mustAnswer) + len(plan.racing) + len(plan.mustNot) + 2*stressWorkers + pings + 1
	if len(c.replies) > known {
		t.Errorf("replies to %d ids, only %d were asked", len(c.replies), known)
	}

	t.Logf("%d calls (%d cancelled: %d still running when cancelled, %d racing their reply, %d of those answered first) in %d frames, %d batches answered as arrays",
		plan.calls, len(plan.racing)+len(plan.mustNot), len(plan.mustNot), len(plan.racing), crossed, plan.frameCount, c.arrays)
	t.Logf("mixed load: %v, %.0f calls/s with %d workers", elapsed.Round(time.Millisecond), float64(plan.calls)/elapsed.Seconds(), stressWorkers)
	t.Logf("ping round trip with %d workers busy and %d calls queued: %v", stressWorkers, stressWorkers, rtts)
}

// busyToken prefixes the progress tokens of the calls that keep every worker busy.
const busyToken = "busy-"

// busyCall is a call that reports its start (progress 1) and then runs until cancelled.
func busyCall(i int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"busy%d","method":"tools/call","params":{"name":"run","arguments":{"ms":600000},"_meta":{"progressToken":"%s%d"}}}`, i, busyToken, i)
}

// callPlan is the generated workload and what each request must get.
type callPlan struct {
	calls      int
	requests   []string         // one frame per call, in order
	cancelOf   map[int]string   // call index → its cancel frame
	cancelLag  map[int]int      // call index → requests between the call and its cancel
	mustAnswer []string         // exactly one reply
	racing     []string         // cancelled right away: at most one reply
	mustNot    []string         // still running when cancelled: no reply
	wantError  map[string]int64 // id → the error code its reply must carry
	frameCount int
}

func planCalls(rng *rand.Rand, calls, cancels int) *callPlan {
	p := &callPlan{calls: calls, cancelOf: map[int]string{}, cancelLag: map[int]int{}, wantError: map[string]int64{}}
	cancelled := map[int]bool{}
	for len(cancelled) < cancels {
		cancelled[rng.IntN(calls)] = true
	}
	for i := range calls {
		id := fmt.Sprintf("c%d", i)
		var params, method = "", "tools/call"
		long := cancelled[i] && rng.IntN(2) == 0
		switch r := rng.IntN(100); {
		case long:
			params = `{"name":"sleep","arguments":{"ms":2000}}`
			if rng.IntN(50) == 0 { // a tool deaf to its context still gets no reply
				params = `{"name":"sleep","arguments":{"ms":1000,"ignoreCancel":true}}`
			}
		case r < 15:
			method, params = "ping", ""
		case r < 25:
			method, params = "tools/list", `{}`
		case r < 45:
			params = fmt.Sprintf(`{"name":"echo","arguments":{"i":%d,"s":%q}}`, i, strings.Repeat("e", rng.IntN(200)))
		case r < 70:
			params = fmt.Sprintf(`{"name":"sleep","arguments":{"ms":%d}}`, rng.IntN(4))
		case r < 80:
			params = fmt.Sprintf(`{"name":"progress","arguments":{"steps":3,"ms":1},"_meta":{"progressToken":"tok%d"}}`, i)
		case r < 88:
			params = `{"name":"refuse"}`
		case r < 94:
			params = `{"name":"nope"}`
			p.wantError[id] = -32602
		default:
			params = `{"name":"panic"}`
			p.wantError[id] = -32603
		}
		frame := `{"jsonrpc":"2.0","id":"` + id + `","method":"` + method + `"`
		if params != "" {
			frame += `,"params":` + params
		}
		p.requests = append(p.requests, frame+"}")
		switch {
		case !cancelled[i]:
			p.mustAnswer = append(p.mustAnswer, id)
		case long:
			p.mustNot = append(p.mustNot, id)
			p.cancelLag[i] = rng.IntN(20)
		default:
			p.racing = append(p.racing, id)
			p.cancelLag[i] = rng.IntN(3)
		}
		if cancelled[i] {
			p.cancelOf[i] = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"` + id + `","reason":"stress"}}`
		}
	}
	return p
}

// frames lays the plan out as lines: each cancel a few requests after its call,
// and runs of messages grouped into random batches.
func (p *callPlan) frames(rng *rand.Rand) []string {
	type pending struct {
		frame string
		left  int
	}
	var msgs []string
	var waiting []pending
	for i, req := range p.requests {
		msgs = append(msgs, req)
		if c, ok := p.cancelOf[i]; ok {
			waiting = append(waiting, pending{c, p.cancelLag[i]})
		}
		kept := waiting[:0]
		for _, w := range waiting {
			if w.left == 0 {
				msgs = append(msgs, w.frame)
				continue
			}
			w.left--
			kept = append(kept, w)
		}
		waiting = kept
	}
	for _, w := range waiting {
		msgs = append(msgs, w.frame)
	}
	var frames []string
	for len(msgs) > 0 {
		n := 1
		if rng.IntN(100) < 15 {
			n = min(len(msgs), 2+rng.IntN(7))
		}
		if n == 1 {
			frames = append(frames, msgs[0])
		} else {
			frames = append(frames, "["+strings.Join(msgs[:n], ",")+"]")
		}
		msgs = msgs[n:]
	}
	p.frameCount = len(frames)
	return frames
}

// envSeed returns VX_STRESS_SEED, or 0 when unset.
func envSeed() uint64 {
	n, _ := strconv.ParseUint(os.Getenv("VX_STRESS_SEED"), 10, 64)
	return n
}
