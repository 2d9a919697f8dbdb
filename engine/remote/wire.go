package remote

import (
	"encoding/binary"
	"errors"
	"math"
)

// The protocol buffers wire format, as far as an ActionResult needs it: tags, varints and
// length-delimited fields written, and every wire type but groups read or skipped. It is written
// here rather than imported from google.golang.org/protobuf, whose package initialisation (a
// hash of the vx binary read at start) every vx process paid, vx mcp's initialize included.

// wireNumber is a field number; wireType a field's wire type.
type (
	wireNumber int32
	wireType   int8
)

// The wire types.
const (
	varintType  wireType = 0
	fixed64Type wireType = 1
	bytesType   wireType = 2
	fixed32Type wireType = 5
)

// errWire is the error of a message that does not parse: truncated, an overlong varint, a bad
// field number, or a group (which no field of an ActionResult is).
var errWire = errors.New("malformed protocol buffer")

func appendTag(b []byte, num wireNumber, typ wireType) []byte {
	return binary.AppendUvarint(b, uint64(num)<<3|uint64(typ))
}

func appendVarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

func appendString(b []byte, v string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// consumeVarint answers the varint at the start of b and its length, or an error.
func consumeVarint(b []byte) (uint64, int, error) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, 0, errWire
	}
	return v, n, nil
}

// consumeTag answers the tag at the start of b and its length, or an error.
func consumeTag(b []byte) (wireNumber, wireType, int, error) {
	v, n, err := consumeVarint(b)
	if err != nil {
		return 0, 0, 0, err
	}
	num := v >> 3
	if num < 1 || num > math.MaxInt32 {
		return 0, 0, 0, errWire
	}
	return wireNumber(num), wireType(v & 7), n, nil
}

// consumeValue answers, for a field of type typ at the start of b, its content (the bytes of a
// length-delimited field), its value (a varint's), and its length; or an error.
func consumeValue(typ wireType, b []byte) (content []byte, value uint64, n int, err error) {
	switch typ {
	case varintType:
		value, n, err = consumeVarint(b)
		return nil, value, n, err
	case bytesType:
		size, m, err := consumeVarint(b)
		if err != nil || size > uint64(len(b)-m) {
			return nil, 0, 0, errWire
		}
		return b[m : m+int(size)], 0, m + int(size), nil
	case fixed64Type, fixed32Type:
		n = 8
		if typ == fixed32Type {
			n = 4
		}
		if len(b) < n {
			return nil, 0, 0, errWire
		}
		return nil, 0, n, nil
	}
	return nil, 0, 0, errWire
}
