package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sourcegraph/conc"
)

// BenchmarkEntryLookups1000 looks up the entries of an all-hit run of 1,000 tasks (each listing
// 20 outputs) one by one, as a full hit does, from one goroutine and from four:
//
//	go test -run '^$' -bench EntryLookups -benchtime 20x ./engine/store
func BenchmarkEntryLookups1000(b *testing.B) {
	ctx := context.Background()
	st, err := Open(ctx, b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	now := time.Now()
	hashes := make([]string, 1000)
	for i := range hashes {
		hashes[i] = fmt.Sprintf("%064x", i*7919)
		outs := make([]OutputFile, 20)
		for k := range outs {
			outs[k] = OutputFile{Path: fmt.Sprintf("dist/f%02d.js", k), Size: 1000, Mode: 0o644, Hash: fmt.Sprintf("%064x", k)}
		}
		e := Entry{Hash: hashes[i], TaskID: fmt.Sprintf("p%04d#build", i), Project: fmt.Sprintf("p%04d", i), Command: "build",
			OutputsBlob: fmt.Sprintf("%064x", i), Outputs: outs, LogBlob: fmt.Sprintf("%064x", i+1), Created: now, LastUsed: now}
		if err := st.PutEntry(ctx, e); err != nil {
			b.Fatal(err)
		}
	}
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			for b.Loop() {
				var wg conc.WaitGroup
				for w := range workers {
					wg.Go(func() {
						for i := w; i < len(hashes); i += workers {
							if _, ok, err := st.Entry(ctx, hashes[i]); err != nil || !ok {
								b.Errorf("entry %d: %v %v", i, ok, err)
							}
						}
					})
				}
				wg.Wait()
			}
		})
	}
}
