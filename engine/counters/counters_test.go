package counters

import (
	"context"
	"sync"
	"testing"
)

func TestCountsTravelInTheContext(t *testing.T) {
	c := &Counters{}
	ctx := With(context.Background(), c)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			From(ctx).Spawn()
			From(ctx).Statement()
			From(ctx).Statement()
			From(ctx).Open()
			From(ctx).Stat()
		})
	}
	wg.Wait()
	want := Counts{ProcessesSpawned: 8, SQLiteStatements: 16, FilesOpened: 8, StatCalls: 8}
	if got := c.Counts(); got != want {
		t.Fatalf("counts = %+v, want %+v", got, want)
	}
}

func TestNoCountersCountNothing(t *testing.T) {
	c := From(context.Background())
	c.Spawn()
	c.Statement()
	c.Open()
	c.Stat()
	if got := c.Counts(); got != (Counts{}) {
		t.Fatalf("counts = %+v, want none", got)
	}
}
