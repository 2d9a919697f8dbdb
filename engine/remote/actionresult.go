package remote

import (
	"encoding/json"
	"fmt"
	"slices"
)

// The few fields of REAPI v2 (build.bazel.remote.execution.v2) a vx entry uses, written and read
// with the wire format of wire.go rather than the whole generated remote-apis package.
const (
	arOutputFiles  = 2 // ActionResult.output_files: repeated OutputFile
	arExitCode     = 4 // ActionResult.exit_code: int32
	arStdoutRaw    = 5 // ActionResult.stdout_raw: bytes
	arStdoutDigest = 6 // ActionResult.stdout_digest: Digest

	ofPath     = 1 // OutputFile.path
	ofDigest   = 2 // OutputFile.digest
	ofContents = 5 // OutputFile.contents: bytes

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
// digest and the exit code, and the contents held inline: an output file's by its path (a file
// absent from inline is a blob in the CAS), and the log's (stdoutRaw, with stdout its digest).
type actionResult struct {
	files     map[string]digest
	inline    map[string][]byte
	stdout    *digest
	stdoutRaw []byte
	exitCode  int32
}

func appendDigest(b []byte, field wireNumber, d digest) []byte {
	var m []byte
	m = appendTag(m, dgHash, bytesType)
	m = appendString(m, d.hash)
	if d.size != 0 {
		m = appendTag(m, dgSize, varintType)
		m = appendVarint(m, uint64(d.size))
	}
	b = appendTag(b, field, bytesType)
	return appendBytes(b, m)
}

// encode writes the ActionResult: output files in path order, each with its contents where they
// are inline, then the log, inline (stdout_raw, with no digest) or as a digest. A stock
// bazel-remote accepts it with its default AC validation: every digest without contents names a
// blob it holds, and it checks no blob for a file whose contents are inline.
func (a actionResult) encode(paths []string) []byte {
	var b []byte
	for _, p := range paths {
		d, ok := a.files[p]
		if !ok {
			continue
		}
		var f []byte
		f = appendTag(f, ofPath, bytesType)
		f = appendString(f, p)
		f = appendDigest(f, ofDigest, d)
		if c, ok := a.inline[p]; ok {
			f = appendTag(f, ofContents, bytesType)
			f = appendBytes(f, c)
		}
		b = appendTag(b, arOutputFiles, bytesType)
		b = appendBytes(b, f)
	}
	if a.exitCode != 0 {
		b = appendTag(b, arExitCode, varintType)
		b = appendVarint(b, uint64(int64(a.exitCode)))
	}
	switch {
	case a.stdoutRaw != nil:
		b = appendTag(b, arStdoutRaw, bytesType)
		b = appendBytes(b, a.stdoutRaw)
	case a.stdout != nil:
		b = appendDigest(b, arStdoutDigest, *a.stdout)
	}
	return b
}

// decodeActionResult reads an ActionResult, skipping every field vx does not use (the server adds
// execution metadata of its own). Inline contents are taken as they are: the reader checks them
// against their digests (an inline log has none but the entry document's).
func decodeActionResult(b []byte) (actionResult, error) {
	a := actionResult{files: map[string]digest{}, inline: map[string][]byte{}}
	err := eachField(b, func(num wireNumber, typ wireType, v []byte, x uint64) error {
		switch {
		case num == arOutputFiles && typ == bytesType:
			var path string
			var d digest
			var hasDigest bool
			var contents []byte
			err := eachField(v, func(num wireNumber, typ wireType, v []byte, _ uint64) error {
				switch {
				case num == ofPath && typ == bytesType:
					path = string(v)
				case num == ofDigest && typ == bytesType:
					var err error
					d, err = decodeDigest(v)
					hasDigest = true
					return err
				case num == ofContents && typ == bytesType:
					contents = v
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
			delete(a.inline, path)
			if contents != nil {
				a.inline[path] = contents
			}
		case num == arStdoutRaw && typ == bytesType:
			a.stdoutRaw = v
		case num == arExitCode && typ == varintType:
			a.exitCode = int32(x)
		case num == arStdoutDigest && typ == bytesType:
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
	err := eachField(b, func(num wireNumber, typ wireType, v []byte, x uint64) error {
		switch {
		case num == dgHash && typ == bytesType:
			d.hash = string(v)
		case num == dgSize && typ == varintType:
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
// their value; the fixed-size wire types are skipped.
func eachField(b []byte, fn func(num wireNumber, typ wireType, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n, err := consumeTag(b)
		if err != nil {
			return err
		}
		b = b[n:]
		v, x, n, err := consumeValue(typ, b)
		if err != nil {
			return err
		}
		b = b[n:]
		if typ == bytesType || typ == varintType {
			if err := fn(num, typ, v, x); err != nil {
				return err
			}
		}
	}
	return nil
}

// blobs answers the blobs the ActionResult names beside the entry document, the outputs archive
// and the log, where each is a digest within MaxBlobBytes and not inline: what a reader of the
// entry fetches.
func (ar actionResult) blobs() []digest {
	var named []digest
	if out, ok := ar.files[arOutputsPath]; ok && ar.inline[arOutputsPath] == nil {
		named = append(named, out)
	}
	if ar.stdout != nil && ar.stdoutRaw == nil {
		named = append(named, *ar.stdout)
	}
	var blobs []digest
	for _, d := range named {
		if isDigest(d.hash) && d.size > 0 && d.size <= MaxBlobBytes && !slices.Contains(blobs, d) {
			blobs = append(blobs, d)
		}
	}
	return blobs
}

// metaOf decodes an entry's Meta document and checks it against the ActionResult that names it:
// both name the same blobs, or the entry is not one vx wrote.
func metaOf(ar actionResult, metaData []byte) (Meta, error) {
	var m Meta
	if err := json.Unmarshal(metaData, &m); err != nil {
		return Meta{}, fmt.Errorf("%w: entry document: %v", ErrCorrupt, err)
	}
	if err := m.check(); err != nil {
		return Meta{}, err
	}
	out, hasOut := ar.files[arOutputsPath]
	if hasOut != (m.OutputsBlob != "") || (hasOut && (out.hash != m.OutputsBlob || out.size != m.OutputsSize)) {
		return Meta{}, fmt.Errorf("%w: action result and entry document disagree", ErrCorrupt)
	}
	if m.LogSize > 0 && (ar.stdout == nil || ar.stdout.hash != m.LogBlob || ar.stdout.size != m.LogSize) {
		return Meta{}, fmt.Errorf("%w: action result and entry document disagree on the log", ErrCorrupt)
	}
	return m, nil
}
