package remote

import (
	"bytes"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// wire.go writes what protowire writes, and reads what protowire reads: every wire type but
// groups, which it refuses, as it refuses a truncated value.
func TestWireMatchesProtowire(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1 << 31, 1<<63 + 5} {
		if got, want := appendVarint(nil, v), protowire.AppendVarint(nil, v); !bytes.Equal(got, want) {
			t.Errorf("varint %d: % x, protowire % x", v, got, want)
		}
		got, n, err := consumeVarint(protowire.AppendVarint(nil, v))
		if err != nil || got != v || n != protowire.SizeVarint(v) {
			t.Errorf("consume varint %d: %d, %d, %v", v, got, n, err)
		}
	}
	for _, num := range []wireNumber{1, 15, 16, 2047, 1<<29 - 1} {
		if got, want := appendTag(nil, num, bytesType), protowire.AppendTag(nil, protowire.Number(num), protowire.BytesType); !bytes.Equal(got, want) {
			t.Errorf("tag %d: % x, protowire % x", num, got, want)
		}
	}
	long := strings.Repeat("x", 300)
	if got, want := appendString(nil, long), protowire.AppendString(nil, long); !bytes.Equal(got, want) {
		t.Errorf("a 300-byte string: % x…, protowire % x…", got[:4], want[:4])
	}

	// A message with every kind of field the server may add: the fixed ones are skipped.
	var m []byte
	m = protowire.AppendTag(m, 7, protowire.Fixed64Type)
	m = protowire.AppendFixed64(m, 42)
	m = protowire.AppendTag(m, 8, protowire.Fixed32Type)
	m = protowire.AppendFixed32(m, 7)
	m = protowire.AppendTag(m, 4, protowire.VarintType)
	m = protowire.AppendVarint(m, 3)
	m = protowire.AppendTag(m, 9, protowire.BytesType)
	m = protowire.AppendBytes(m, []byte("meta"))
	var seen []string
	err := eachField(m, func(num wireNumber, typ wireType, v []byte, x uint64) error {
		seen = append(seen, string(rune('0'+num))+":"+string(v)+string(rune('0'+x)))
		return nil
	})
	if err != nil || strings.Join(seen, ",") != "4:3,9:meta0" {
		t.Errorf("fields seen: %q, %v", seen, err)
	}
	group := protowire.AppendTag(nil, 3, protowire.StartGroupType)
	for what, b := range map[string][]byte{"a group": group, "a truncated fixed64": m[:5], "a truncated bytes field": m[:len(m)-1],
		"field number 0": {0x02, 0x00}, "an overlong varint": bytes.Repeat([]byte{0xff}, 11)} {
		if err := eachField(b, func(wireNumber, wireType, []byte, uint64) error { return nil }); err == nil {
			t.Errorf("%s parsed", what)
		}
	}
}
