package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkPutFileStatsFresh writes the stat cache a fresh clone's first run of a 300-package
// workspace writes: 21 inputs in each of 300 folders, into an index that holds none:
//
//	go test -run '^$' -bench PutFileStatsFresh -count 5 ./engine/store
func BenchmarkPutFileStatsFresh(b *testing.B) {
	ctx := context.Background()
	stats := map[string]FileStat{}
	for p := range 300 {
		for f := range 21 {
			stats[fmt.Sprintf("packages/p%04d/src/f%02d.js", p, f)] = FileStat{Size: 70, MtimeNs: 1, CtimeNs: 1, Ino: uint64(p*100 + f), Hash: fmt.Sprintf("%040x", p*100+f), RecordedNs: 2}
		}
	}
	for b.Loop() {
		b.StopTimer()
		st, err := Open(ctx, b.TempDir(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := st.PutFileStats(ctx, stats); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
}
