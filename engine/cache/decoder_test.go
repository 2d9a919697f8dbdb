package cache

import (
	"bytes"
	"errors"
	"io"
	"math/bits"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// streamed compresses data as one streamed frame whose header asks for a window of window bytes (a
// power of two from 1 KiB), as a forged archive may whatever it holds: the encoder's own header,
// which asks for no more than the data needs, has its window descriptor set.
func streamed(t *testing.T, data []byte, window int) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc, err := zstd.NewWriter(&buf, zstd.WithSingleSegment(false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	frame := buf.Bytes()
	if frame[4]&0x20 != 0 {
		t.Fatal("a single-segment frame has no window descriptor")
	}
	frame[5] = byte(bits.Len(uint(window))-1-10) << 3
	var h zstd.Header
	if err := h.Decode(frame); err != nil || h.WindowSize != uint64(window) {
		t.Fatalf("forged header: window %d, %v", h.WindowSize, err)
	}
	return frame
}

// A small archive is read through a pooled decoder that still refuses a frame asking for a window
// past pooledWindow (what a forged entry would make it allocate), reads the next archive right
// after a refused or a finished one, and a large archive gets a decoder bounded by what it lists.
func TestDecodersBoundedAndReused(t *testing.T) {
	read := func(budget int64, blob []byte) ([]byte, error) {
		dec, release, err := decoderFor(budget, blob)
		if err != nil {
			return nil, err
		}
		defer release()
		return io.ReadAll(dec)
	}
	small := []byte("the outputs of a small task\n")
	if got, err := read(1<<10, streamed(t, small, 1<<20)); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("a small archive: %q, %v", got, err)
	}
	if _, err := read(1<<10, streamed(t, small, 64<<20)); !errors.Is(err, zstd.ErrWindowSizeExceeded) {
		t.Fatalf("a small entry's frame asking for a 64 MiB window: %v, want it refused", err)
	}
	for i := range 3 {
		other := bytes.Repeat([]byte{byte('a' + i)}, 5000)
		if got, err := read(8<<10, streamed(t, other, 1<<20)); err != nil || !bytes.Equal(got, other) {
			t.Fatalf("archive %d after others: %d bytes, %v", i, len(got), err)
		}
	}
	if got, err := read(100<<20, streamed(t, small, 64<<20)); err != nil || !bytes.Equal(got, small) {
		t.Fatalf("a large entry's frame within what it lists: %q, %v", got, err)
	}
	if _, err := read(20<<20, streamed(t, small, 64<<20)); !errors.Is(err, zstd.ErrWindowSizeExceeded) {
		t.Fatalf("a 20 MiB entry's frame asking for a 64 MiB window: %v, want it refused", err)
	}
}

// BenchmarkSmallArchiveRead reads a small task's archive as a restore does: through a pooled
// decoder, against one made for it (docs/performance.md, "One request a hit").
func BenchmarkSmallArchiveRead(b *testing.B) {
	enc, _ := zstd.NewWriter(nil)
	blob := enc.EncodeAll(bytes.Repeat([]byte("exports.f = function () { return 42 }\n"), 300), nil)
	enc.Close()
	b.Run("pooled", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dec, release, err := decoderFor(16<<10, blob)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, dec)
			release()
		}
	})
	b.Run("made", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			dec, err := zstd.NewReader(bytes.NewReader(blob), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(16<<10+(1<<20)))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, dec)
			dec.Close()
		}
	})
}
