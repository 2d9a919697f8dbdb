package docsearch

import (
	"runtime"
	"strings"
	"testing"
)

// A query longer than MaxQueryChars is refused by name before anything is scanned: a 10 MB query
// once took 400 MB to answer. The refusal is one line that names the argument and the limit, and
// costs next to nothing (judged by the bytes allocated, not by time).
func TestLongQueryRefused(t *testing.T) {
	idx := testIndex(t)
	query := strings.Repeat("cache ", 10<<20/6)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := idx.Search(query, DefaultLimit)
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a 10 MB query was answered")
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || len(msg) > 200 || !strings.Contains(msg, "query") || !strings.Contains(msg, "1000") {
		t.Fatalf("refusal %.300q: want one short line naming query and the limit 1000", msg)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
		t.Fatalf("refusing the query allocated %d bytes", grew)
	}
	// At the limit, a query is answered.
	if _, err := idx.Search(strings.Repeat("é", MaxQueryChars), DefaultLimit); err != nil {
		t.Fatalf("a query of exactly %d characters: %v", MaxQueryChars, err)
	}
	if _, err := idx.Search(strings.Repeat("é", MaxQueryChars+1), DefaultLimit); err == nil {
		t.Fatalf("a query of %d characters was answered", MaxQueryChars+1)
	}
}
