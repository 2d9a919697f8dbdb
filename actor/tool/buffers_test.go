package tool

import "testing"

// A slice put back is handed out again for a size it holds, never for a larger one; sizes no
// class keeps are made fresh and not kept.
func TestBuffersBySize(t *testing.T) {
	var b Buffers
	for _, n := range []int{100, 9 << 10, 16 << 10, 16<<10 + 1, 40 << 10, 95 << 10, 1 << 20, 1<<20 + 1, 8 << 20} {
		for range 3 {
			buf := b.Get(n)
			if len(buf) != 0 || cap(buf) < n {
				t.Fatalf("Get(%d) = len %d cap %d", n, len(buf), cap(buf))
			}
			buf = append(buf, make([]byte, n)...)
			b.Put(buf)
		}
	}
	// A slice of an odd size goes back into the largest class it fills.
	b.Put(make([]byte, 0, 50<<10))
	for range 10 {
		if buf := b.Get(64 << 10); cap(buf) < 64<<10 {
			t.Fatalf("Get(64 KiB) = cap %d", cap(buf))
		}
	}
}
