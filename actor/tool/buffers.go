package tool

import (
	"math/bits"
	"sync"
)

// Buffers keeps the byte slices of large answers for the next ones: a server that pages a long
// log writes some 40 kB of answer and 90 kB of reply a page, and a heap of a few MB would be
// collected every few pages for that garbage. Handlers take one with Call.Buffer; the server puts
// back each answer once its reply is built, and each reply once it is written. Slices are kept by
// size class (powers of two), so that a Get finds one large enough; small ones are not kept (they
// cost the collector little), nor huge ones (they would stay in memory). The zero value is ready;
// it is safe for concurrent use.
type Buffers struct {
	classes [classes]sync.Pool
}

const (
	minKeptShift = 14 // 16 KiB
	classes      = 7  // up to 1 MiB
)

// class answers the size class whose slices all hold at least n bytes, false when n is kept by
// none.
func class(n int) (int, bool) {
	if n > 1<<(minKeptShift+classes-1) {
		return 0, false
	}
	if n <= 1<<minKeptShift {
		return 0, n >= 1<<(minKeptShift-1) // half of the smallest class and up: worth keeping
	}
	return bits.Len(uint(n-1)) - minKeptShift, true
}

// Get answers an empty slice with room for n bytes.
func (b *Buffers) Get(n int) []byte {
	c, ok := class(n)
	if !ok {
		return make([]byte, 0, n)
	}
	if p, ok := b.classes[c].Get().(*[]byte); ok {
		return (*p)[:0]
	}
	return make([]byte, 0, 1<<(minKeptShift+c))
}

// Put gives buf back for a later Get; its owner must not use it after.
func (b *Buffers) Put(buf []byte) {
	size := cap(buf)
	if size < 1<<minKeptShift || size > 1<<(minKeptShift+classes-1) {
		return
	}
	c := bits.Len(uint(size)) - 1 - minKeptShift // the largest class it fills
	buf = buf[:0]
	b.classes[c].Put(&buf)
}
