package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/sourcegraph/conc"

	"github.com/vzn/vx/engine/store"
)

// bazel is a bazel-remote server (github.com/buchgr/bazel-remote), through its HTTP API: blobs
// under /cas/<sha256>, a task's entry under /ac/<key> as a REAPI ActionResult whose output files
// are the entry's Meta document and its outputs archive, and whose stdout is its log; each of the
// three inline in the ActionResult where it fits (inlineBudget), a blob otherwise.
type bazel struct{ h *httpClient }

// maxActionResultBytes bounds the ActionResult a server may answer.
const maxActionResultBytes = 1 << 20

func (b *bazel) Fetch(ctx context.Context, key string, cas *store.CAS) (Meta, bool, error) {
	if !isDigest(key) {
		return Meta{}, false, nil
	}
	acData, ok, err := b.getSmall(ctx, "/ac/"+key, maxActionResultBytes)
	if err != nil || !ok {
		return Meta{}, false, err
	}
	ar, err := decodeActionResult(acData)
	if err != nil {
		return Meta{}, false, fmt.Errorf("%w: action result of %s: %v", ErrCorrupt, key[:12], err)
	}
	metaDigest, ok := ar.files[arMetaPath]
	if !ok || ar.exitCode != 0 {
		return Meta{}, false, nil // another client's action under this key: not a vx entry
	}
	if metaDigest.size > maxMetaBytes {
		return Meta{}, false, fmt.Errorf("%w: entry document of %d bytes", ErrCorrupt, metaDigest.size)
	}
	if ar.stdoutRaw != nil {
		// An inline log is named by the entry document alone (metaOf checks the two agree).
		sum := sha256.Sum256(ar.stdoutRaw)
		d := digest{hex.EncodeToString(sum[:]), int64(len(ar.stdoutRaw))}
		if ar.stdout != nil && *ar.stdout != d {
			return Meta{}, false, fmt.Errorf("%w: inline log does not match its digest", ErrCorrupt)
		}
		ar.stdout = &d
	}
	// The ActionResult names the outputs archive and the log as well as the entry document: those
	// not inline are fetched while the document is, one round trip for the three rather than
	// three. What they fetch is only ever taken as the document then names it (getBlob below finds
	// it in the blob store, checked by its digest); a failure here is met again, and reported,
	// there.
	var early conc.WaitGroup
	for _, d := range ar.blobs() {
		early.Go(func() { _, _ = b.getBlob(ctx, d, cas) })
	}
	metaData, ok := ar.inline[arMetaPath]
	if ok {
		err = nil
	} else {
		metaData, ok, err = b.getSmall(ctx, "/cas/"+metaDigest.hash, metaDigest.size)
	}
	early.Wait()
	if err != nil || !ok {
		return Meta{}, false, err
	}
	if sum := sha256.Sum256(metaData); hex.EncodeToString(sum[:]) != metaDigest.hash || int64(len(metaData)) != metaDigest.size {
		return Meta{}, false, fmt.Errorf("%w: blob %s does not match its digest", ErrCorrupt, metaDigest.hash[:12])
	}
	m, err := metaOf(ar, metaData)
	if err != nil {
		return Meta{}, false, err
	}
	inline := map[string][]byte{m.OutputsBlob: ar.inline[arOutputsPath], m.LogBlob: ar.stdoutRaw}
	for _, d := range []digest{{m.OutputsBlob, m.OutputsSize}, {m.LogBlob, m.LogSize}} {
		if c := inline[d.hash]; c != nil && d.size > 0 {
			if err := putInline(d, c, cas); err != nil {
				return Meta{}, false, err
			}
			continue
		}
		if ok, err := b.getBlob(ctx, d, cas); err != nil || !ok {
			return Meta{}, false, err
		}
	}
	return m, true, nil
}

// putInline keeps a blob the ActionResult held inline in the local blob store, checked against the
// digest the entry document names.
func putInline(d digest, contents []byte, cas *store.CAS) error {
	if cas.Has(d.hash) {
		return nil // checked again when the runner reads it, as a fetched blob is
	}
	if err := cas.PutStream(d.hash, d.size, bytes.NewReader(contents)); err != nil {
		if errors.Is(err, store.ErrBlobMismatch) {
			return fmt.Errorf("%w: inline %v", ErrCorrupt, err)
		}
		return fmt.Errorf("keep inline blob %s: %w", d.hash[:12], err)
	}
	return nil
}

// getSmall reads a small resource whole, at most max bytes; ok is false for a 404.
func (b *bazel) getSmall(ctx context.Context, p string, max int64) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, b.h.timeout)
	defer cancel()
	u := b.h.url(p, nil)
	resp, err := b.h.do(ctx, http.MethodGet, u, nil, 0, nil)
	if err != nil {
		return nil, false, err
	}
	defer drain(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, false, nil
	default:
		return nil, false, status(http.MethodGet, u, resp)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return nil, false, fmt.Errorf("%w: GET %s: %v", ErrUnavailable, RedactURL(u), b.h.redactErr(err))
	}
	if int64(len(data)) > max {
		return nil, false, fmt.Errorf("%w: %s is larger than %d bytes", ErrCorrupt, p, max)
	}
	return data, true, nil
}

// getBlob streams one blob into the local blob store, checked; ok is false when the server lacks it.
func (b *bazel) getBlob(ctx context.Context, d digest, cas *store.CAS) (bool, error) {
	if d.hash == "" {
		return true, nil
	}
	if d.size == 0 {
		if d.hash != emptyDigest {
			return false, fmt.Errorf("%w: empty blob named %s", ErrCorrupt, d.hash[:12])
		}
		_, err := cas.Put(nil)
		return err == nil, err
	}
	if cas.Has(d.hash) {
		// Checked again when the runner reads it: a damaged local blob is a miss there.
		return true, nil
	}
	ctx, watch := b.h.watch(ctx)
	defer watch.stop()
	watch.sized(d.size)
	u := b.h.url("/cas/"+d.hash, nil)
	resp, err := b.h.do(ctx, http.MethodGet, u, nil, 0, nil)
	if err != nil {
		return false, err
	}
	defer drain(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return false, nil
	default:
		return false, status(http.MethodGet, u, resp)
	}
	if err := cas.PutStream(d.hash, d.size, watch.reader(resp.Body)); err != nil {
		if errors.Is(err, store.ErrBlobMismatch) {
			return false, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		if ctx.Err() != nil {
			return false, fmt.Errorf("%w: GET %s: %v", ErrUnavailable, RedactURL(u), cause(ctx, ctx.Err()))
		}
		return false, fmt.Errorf("%w: GET %s: %v", ErrUnavailable, RedactURL(u), b.h.redactErr(err))
	}
	return true, nil
}

// inlineBudget bounds the bytes an entry's ActionResult holds inline: the entry document, the log
// and the outputs archive, each inline in that order while the sum stays within it. A small entry
// is then one request each way, as a Turborepo artifact is, and one object the server keeps or
// evicts whole; a larger blob goes to the CAS, where its transfer is sized and watched.
const inlineBudget = 64 << 10

func (b *bazel) Store(ctx context.Context, key string, m Meta, cas *store.CAS) error {
	if !isDigest(key) {
		return nil
	}
	metaData, err := json.Marshal(m)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(metaData)
	metaDigest := digest{hex.EncodeToString(sum[:]), int64(len(metaData))}
	ar := actionResult{files: map[string]digest{arMetaPath: metaDigest}, inline: map[string][]byte{}}
	left := int64(inlineBudget)
	// inline answers the blob's bytes where it fits in what is left of the budget.
	inline := func(d digest, data []byte) []byte {
		if d.size > left {
			return nil
		}
		if data == nil {
			var err error
			if data, err = cas.GetBounded(d.hash, d.size); err != nil || int64(len(data)) != d.size {
				return nil // uploaded from the store below, which reports what is wrong with it
			}
		}
		left -= d.size
		return data
	}
	if c := inline(metaDigest, metaData); c != nil {
		ar.inline[arMetaPath] = c
	} else if err := b.putBlob(ctx, metaDigest, func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(metaData)), nil }); err != nil {
		return err
	}
	for _, d := range []digest{{m.LogBlob, m.LogSize}, {m.OutputsBlob, m.OutputsSize}} {
		if d.hash == "" || d.size == 0 {
			continue
		}
		if c := inline(d, nil); c != nil {
			if d.hash == m.LogBlob {
				ar.stdoutRaw = c
			}
			if d.hash == m.OutputsBlob {
				ar.inline[arOutputsPath] = c
			}
			continue
		}
		open := func() (io.ReadCloser, error) {
			f, size, err := cas.Open(d.hash)
			if err == nil && size != d.size {
				f.Close()
				err = fmt.Errorf("local blob %s changed size", d.hash[:12])
			}
			return f, err
		}
		if err := b.putBlob(ctx, d, open); err != nil {
			return err
		}
	}
	if m.OutputsBlob != "" {
		ar.files[arOutputsPath] = digest{m.OutputsBlob, m.OutputsSize}
	}
	if m.LogSize > 0 && ar.stdoutRaw == nil {
		ar.stdout = &digest{m.LogBlob, m.LogSize}
	}
	acData := ar.encode([]string{arMetaPath, arOutputsPath})
	return b.put(ctx, "/ac/"+key, int64(len(acData)), func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(acData)), nil
	})
}

// putBlob uploads one blob unless the server already holds it (HEAD first).
func (b *bazel) putBlob(ctx context.Context, d digest, open func() (io.ReadCloser, error)) error {
	hctx, cancel := context.WithTimeout(ctx, b.h.timeout)
	u := b.h.url("/cas/"+d.hash, nil)
	resp, err := b.h.do(hctx, http.MethodHead, u, nil, 0, nil)
	if err != nil {
		cancel()
		return err
	}
	drain(resp.Body)
	cancel()
	if resp.StatusCode == http.StatusOK {
		return nil
	}
	return b.put(ctx, "/cas/"+d.hash, d.size, open)
}

// put streams one PUT of size bytes.
func (b *bazel) put(ctx context.Context, p string, size int64, open func() (io.ReadCloser, error)) error {
	body, err := open()
	if err != nil {
		return err
	}
	defer body.Close()
	ctx, watch := b.h.watch(ctx)
	defer watch.stop()
	watch.sized(size)
	u := b.h.url(p, nil)
	resp, err := b.h.do(ctx, http.MethodPut, u, watch.reader(body), size, http.Header{"Content-Type": {"application/octet-stream"}})
	return putDone(u, resp, err)
}

func (b *bazel) Check(ctx context.Context) error {
	return b.h.probe(ctx, b.h.url("/cas/"+emptyDigest, nil))
}

// Close drops the client's idle connections.
func (b *bazel) Close() { b.h.close() }
