package remote

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The few fields of REAPI v2 (build.bazel.remote.execution.v2) a vx entry uses, written and read
// with protowire rather than the whole generated remote-apis package.
const (
	arOutputFiles  = 2 // ActionResult.output_files: repeated OutputFile
	arExitCode     = 4 // ActionResult.exit_code: int32
	arStdoutDigest = 6 // ActionResult.stdout_digest: Digest

	ofPath   = 1 // OutputFile.path
	ofDigest = 2 // OutputFile.digest

	dgHash = 1 // Digest.hash
	dgSize = 2 // Digest.size_bytes
)

// The output file names of a vx entry's ActionResult.
const (
	arMetaPath    = "vx-entry.json"
	arOutputsPath = "outputs.tar.zst"
)

// digest is a REAPI Digest.
type digest struct {
	hash string
	size int64
}

// actionResult is the part of an ActionResult vx reads: its output files by path, the stdout
// digest and the exit code.
type actionResult struct {
	files    map[string]digest
	stdout   *digest
	exitCode int32
}

func appendDigest(b []byte, field protowire.Number, d digest) []byte {
	var m []byte
	m = protowire.AppendTag(m, dgHash, protowire.BytesType)
	m = protowire.AppendString(m, d.hash)
	if d.size != 0 {
		m = protowire.AppendTag(m, dgSize, protowire.VarintType)
		m = protowire.AppendVarint(m, uint64(d.size))
	}
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// encode writes the ActionResult: output files in path order, then the stdout digest. A stock
// bazel-remote accepts it with its default AC validation, since every digest names a blob it holds.
func (a actionResult) encode(paths []string) []byte {
	var b []byte
	for _, p := range paths {
		d, ok := a.files[p]
		if !ok {
			continue
		}
		var f []byte
		f = protowire.AppendTag(f, ofPath, protowire.BytesType)
		f = protowire.AppendString(f, p)
		f = appendDigest(f, ofDigest, d)
		b = protowire.AppendTag(b, arOutputFiles, protowire.BytesType)
		b = protowire.AppendBytes(b, f)
	}
	if a.exitCode != 0 {
		b = protowire.AppendTag(b, arExitCode, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(int64(a.exitCode)))
	}
	if a.stdout != nil {
		b = appendDigest(b, arStdoutDigest, *a.stdout)
	}
	return b
}

// decodeActionResult reads an ActionResult, skipping every field vx does not use (the server adds
// execution metadata of its own).
func decodeActionResult(b []byte) (actionResult, error) {
	a := actionResult{files: map[string]digest{}}
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == arOutputFiles && typ == protowire.BytesType:
			var path string
			var d digest
			var hasDigest bool
			err := eachField(v, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
				switch {
				case num == ofPath && typ == protowire.BytesType:
					path = string(v)
				case num == ofDigest && typ == protowire.BytesType:
					var err error
					d, err = decodeDigest(v)
					hasDigest = true
					return err
				}
				return nil
			})
			if err != nil {
				return err
			}
			if path == "" || !hasDigest {
				return fmt.Errorf("output file without path or digest")
			}
			a.files[path] = d
		case num == arExitCode && typ == protowire.VarintType:
			a.exitCode = int32(x)
		case num == arStdoutDigest && typ == protowire.BytesType:
			d, err := decodeDigest(v)
			if err != nil {
				return err
			}
			a.stdout = &d
		}
		return nil
	})
	return a, err
}

func decodeDigest(b []byte) (digest, error) {
	var d digest
	err := eachField(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == dgHash && typ == protowire.BytesType:
			d.hash = string(v)
		case num == dgSize && typ == protowire.VarintType:
			d.size = int64(x)
		}
		return nil
	})
	if err == nil && (!isDigest(d.hash) || d.size < 0) {
		err = fmt.Errorf("bad digest %q/%d", d.hash, d.size)
	}
	return d, err
}

// eachField calls fn with each field of a message: bytes fields with their content, varints with
// their value; other wire types are skipped.
func eachField(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			if err := fn(num, typ, v, 0); err != nil {
				return err
			}
			b = b[n:]
		case protowire.VarintType:
			x, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			if err := fn(num, typ, nil, x); err != nil {
				return err
			}
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return nil
}
