package remote_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/remote"
	"github.com/vzn/vx/engine/store"
)

// TestREAPIActionCacheCapability: a server whose capabilities say clients may not write its
// Action Cache (update_enabled false) is sent no key of vx's: Store answers
// ErrActionCacheReadOnly without an UpdateActionResult call or an upload, a Fetch still asks (an
// entry a writer allowed to write left), and the engine connection says so; one that lets
// clients write is written to.
func TestREAPIActionCacheCapability(t *testing.T) {
	ctx := context.Background()
	for _, workersOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("workersOnly=%v", workersOnly), func(t *testing.T) {
			f := startFaultREAPI(t, 1<<20)
			f.workersOnlyAC.Store(workersOnly)
			s, err := remote.Resolve(&graph.RemoteCache{URL: f.url()}, func(string) string { return "" }, "")
			if err != nil {
				t.Fatal(err)
			}
			engine, err := remote.DialREAPI(s)
			if err != nil {
				t.Fatal(err)
			}
			defer engine.Close()
			if writes, err := engine.ClientWritesActionCache(ctx); err != nil || writes == workersOnly {
				t.Fatalf("ClientWritesActionCache = %v, %v", writes, err)
			}
			c := reapiClient(t, &graph.RemoteCache{URL: f.url()}, nil)
			m, local := testEntry(t, 1<<10)
			err = c.Store(ctx, testKey, m, local)
			_, found := f.blob(m.OutputsBlob)
			switch {
			case workersOnly && (!errors.Is(err, remote.ErrActionCacheReadOnly) || f.updates.Load() != 0 || found):
				t.Fatalf("store on a workers-only server: %v, %d updates, outputs uploaded %v", err, f.updates.Load(), found)
			case !workersOnly && (err != nil || f.updates.Load() != 1 || !found):
				t.Fatalf("store: %v, %d updates, outputs uploaded %v", err, f.updates.Load(), found)
			}
			_, ok, err := c.Fetch(ctx, testKey, store.NewCAS(t.TempDir()))
			if err != nil || ok == workersOnly {
				t.Fatalf("fetch: ok=%v err=%v", ok, err)
			}
		})
	}
}

// TestREAPIWorkersOnlyRun: a run against a server that lets only its workers write its Action
// Cache runs every task, stores nothing there and warns of nothing: it is the deployment's
// setting, not a failure.
func TestREAPIWorkersOnlyRun(t *testing.T) {
	f := startFaultREAPI(t, 1<<20)
	f.workersOnlyAC.Store(true)
	r := vxRun(t, checkout(t, fmt.Sprintf(`remoteCache: { reapi: '%s' },`, f.url()), ""), nil, "build", "test")
	mustPass(t, "workers-only server", r)
	if got := sources(r); got["run"] != 6 || len(warnings(r)) != 0 || f.updates.Load() != 0 {
		t.Fatalf("want every task run, no warning, no update; got %v, %q, %d updates\n%s", got, warnings(r), f.updates.Load(), r.stderr)
	}
	if rc := r.sum.RemoteCache; rc == nil || rc.Errors != 0 || rc.Uploads != 0 || rc.Warning != "" {
		t.Fatalf("remote cache of the run: %+v", rc)
	}
}
