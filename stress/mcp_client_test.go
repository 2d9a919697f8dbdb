package stress

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vzn/vx/actor/actortest"
)

// mcpClient speaks raw frames to a child MCP server and accounts for every line
// it answers: replies per id (single or inside a batch array) and progress
// notifications per token.
type mcpClient struct {
	p *actortest.Proc

	mu         sync.Mutex
	replies    map[string]int           // id → number of replies
	errors     map[string]int64         // id → error code of its reply
	progress   map[string][]float64     // progress token → values in arrival order
	lateNotify []string                 // progress tokens notified after their request's reply
	waiters    map[string]chan struct{} // id → closed at its first reply
	badLines   []string
	arrays     int
	lines      int
	readerDone chan struct{}
}

type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProgressToken string  `json:"progressToken"`
		Progress      float64 `json:"progress"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int64 `json:"code"`
	} `json:"error"`
}

func newMCPClient(t *testing.T, env ...string) *mcpClient {
	c := &mcpClient{
		p:          actortest.Start(t, env...),
		replies:    map[string]int{},
		errors:     map[string]int64{},
		progress:   map[string][]float64{},
		waiters:    map[string]chan struct{}{},
		readerDone: make(chan struct{}),
	}
	go c.read()
	return c
}

func (c *mcpClient) read() {
	defer close(c.readerDone)
	for line := range c.p.Lines() {
		var msgs []wireMsg
		var err error
		if len(line) > 0 && line[0] == '[' {
			err = json.Unmarshal(line, &msgs)
			c.mu.Lock()
			c.arrays++
			c.mu.Unlock()
		} else {
			var m wireMsg
			err = json.Unmarshal(line, &m)
			msgs = []wireMsg{m}
		}
		c.mu.Lock()
		c.lines++
		if err != nil {
			c.badLines = append(c.badLines, string(line))
		}
		for _, m := range msgs {
			if m.Method == "notifications/progress" {
				tok := m.Params.ProgressToken
				if !strings.HasPrefix(tok, busyToken) && c.replies[progressID(tok)] > 0 {
					c.lateNotify = append(c.lateNotify, tok)
				}
				c.progress[tok] = append(c.progress[tok], m.Params.Progress)
				continue
			}
			var id string
			if json.Unmarshal(m.ID, &id) != nil {
				c.badLines = append(c.badLines, string(line))
				continue
			}
			c.replies[id]++
			if m.Error != nil {
				c.errors[id] = m.Error.Code
			}
			if w, ok := c.waiters[id]; ok {
				close(w)
				delete(c.waiters, id)
			}
		}
		c.mu.Unlock()
	}
}

// waitProgress waits until n progress tokens starting with prefix have been notified.
func (c *mcpClient) waitProgress(t *testing.T, prefix string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		seen := 0
		for tok := range c.progress {
			if strings.HasPrefix(tok, prefix) {
				seen++
			}
		}
		c.mu.Unlock()
		if seen >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d calls %s* reported their start within %v; stderr:\n%s", seen, n, prefix, timeout, c.p.Stderr())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// progressID is the request id whose progress token is tok (the stress test
// names them alike).
func progressID(tok string) string { return "c" + tok[len("tok"):] }

// send writes frames, one line each.
func (c *mcpClient) send(t *testing.T, frames []string) {
	t.Helper()
	var b []byte
	for _, f := range frames {
		b = append(append(b, f...), '\n')
	}
	if err := c.p.Write(b); err != nil {
		t.Fatalf("writing to the server: %v", err)
	}
}

// roundTrip sends one request with id and waits for its reply.
func (c *mcpClient) roundTrip(t *testing.T, id, line string) time.Duration {
	t.Helper()
	w := make(chan struct{})
	c.mu.Lock()
	c.waiters[id] = w
	c.mu.Unlock()
	start := time.Now()
	c.send(t, []string{line})
	select {
	case <-w:
		return time.Since(start)
	case <-time.After(30 * time.Second):
		t.Fatalf("no reply to %s within 30s; stderr:\n%s", id, c.p.Stderr())
	}
	return 0
}

// waitAnswered waits until every id in ids has a reply.
func (c *mcpClient) waitAnswered(t *testing.T, ids []string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		c.mu.Lock()
		missing := 0
		first := ""
		for _, id := range ids {
			if c.replies[id] == 0 {
				if missing == 0 {
					first = id
				}
				missing++
			}
		}
		c.mu.Unlock()
		if missing == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d requests unanswered after %v (first %s); stderr:\n%s", missing, timeout, first, c.p.Stderr())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// closeAndWait closes the server's stdin, waits for it to exit cleanly and for
// every line it wrote to be accounted for.
func (c *mcpClient) closeAndWait(t *testing.T) {
	t.Helper()
	if err := c.p.CloseStdin(); err != nil {
		t.Fatal(err)
	}
	if err := c.p.Wait(t, 30*time.Second); err != nil {
		t.Fatalf("server exit: %v; stderr:\n%s", err, c.p.Stderr())
	}
	<-c.readerDone
}

// latencies summarises durations.
type latencies []time.Duration

func (l latencies) quantile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(q * float64(len(s)-1))
	return s[i]
}

func (l latencies) String() string {
	return fmt.Sprintf("p50 %v, p99 %v, max %v (n=%d)", l.quantile(0.5), l.quantile(0.99), l.quantile(1), len(l))
}
