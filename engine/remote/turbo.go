package remote

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/vzn/vx/engine/store"
)

// turbo is a server of the Turborepo remote cache API (/v8/artifacts/{hash}): Vercel's, or
// ducktors/turborepo-remote-cache. A vx entry is one artifact: a magic line, the Meta document on
// one line, the outputs archive and the log. With a signature key, each artifact carries turbo's
// x-artifact-tag (base64 HMAC-SHA256 of the hash, the team id and the body), and one whose tag does
// not verify is a miss.
type turbo struct {
	h          *httpClient
	team, slug string
	key        []byte
}

// artifactMagic starts every artifact vx writes; an artifact without it (turbo's own tar.zst) is
// not a vx entry and is a miss.
const artifactMagic = "vx-remote-entry 1\n"

func (t *turbo) query() url.Values {
	q := url.Values{}
	if t.team != "" {
		q.Set("teamId", t.team)
	}
	if t.slug != "" {
		q.Set("slug", t.slug)
	}
	return q
}

// tagger answers the HMAC of an artifact's body so far, primed with its hash and team id as turbo
// primes it; nil without a key.
func (t *turbo) tagger(key string) hash.Hash {
	if len(t.key) == 0 {
		return nil
	}
	mac := hmac.New(sha256.New, t.key)
	mac.Write([]byte(key))
	mac.Write([]byte(t.team))
	return mac
}

func (t *turbo) Fetch(ctx context.Context, key string, cas *store.CAS) (Meta, bool, error) {
	ctx, watch := t.h.watch(ctx)
	defer watch.stop()
	u := t.h.url("/v8/artifacts/"+url.PathEscape(key), t.query())
	// A transfer cut short by its bounds is the server's fault, whatever was being read.
	slow := func(err error) error {
		if ctx.Err() != nil {
			return fmt.Errorf("%w: GET %s: %v", ErrUnavailable, RedactURL(u), t.h.redactErr(cause(ctx, ctx.Err())))
		}
		return err
	}
	resp, err := t.h.do(ctx, http.MethodGet, u, nil, 0, nil)
	if err != nil {
		return Meta{}, false, err
	}
	defer drain(resp.Body)
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return Meta{}, false, nil
	default:
		return Meta{}, false, status(http.MethodGet, u, resp)
	}
	mac := t.tagger(key)
	var want []byte
	if mac != nil {
		if want, err = base64.StdEncoding.DecodeString(resp.Header.Get("x-artifact-tag")); err != nil || len(want) == 0 {
			return Meta{}, false, fmt.Errorf("%w: artifact %s has no valid signature", ErrCorrupt, key[:min(12, len(key))])
		}
	}
	if resp.ContentLength > 0 {
		watch.sized(resp.ContentLength)
	}
	// Everything read is hashed; the body's blobs reach the local store only checked, and the
	// entry is answered (made reachable) only once the whole body's signature verified. Signed or
	// not, the body is read through the watch.
	src := watch.reader(resp.Body)
	if mac != nil {
		src = io.TeeReader(src, mac)
	}
	br := bufio.NewReaderSize(src, 64<<10)
	magic := make([]byte, len(artifactMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != artifactMagic {
		return Meta{}, false, slow(nil) // not a vx entry: turbo's own artifact, or nothing
	}
	line, err := readLine(br, maxMetaBytes)
	if err != nil {
		return Meta{}, false, slow(fmt.Errorf("%w: artifact %s: %v", ErrCorrupt, key[:min(12, len(key))], err))
	}
	var m Meta
	if err := json.Unmarshal(line, &m); err != nil {
		return Meta{}, false, fmt.Errorf("%w: entry document: %v", ErrCorrupt, err)
	}
	if err := m.check(); err != nil {
		return Meta{}, false, err
	}
	if resp.ContentLength <= 0 {
		watch.sized(int64(len(artifactMagic)+len(line)+1) + m.OutputsSize + m.LogSize)
	}
	for _, d := range []digest{{m.OutputsBlob, m.OutputsSize}, {m.LogBlob, m.LogSize}} {
		if d.hash == "" {
			continue
		}
		if err := cas.PutStream(d.hash, d.size, io.LimitReader(br, d.size)); err != nil {
			if ctx.Err() != nil {
				return Meta{}, false, slow(err)
			}
			if errors.Is(err, store.ErrBlobMismatch) {
				return Meta{}, false, fmt.Errorf("%w: %v", ErrCorrupt, err)
			}
			return Meta{}, false, fmt.Errorf("%w: GET %s: %v", ErrUnavailable, RedactURL(u), t.h.redactErr(err))
		}
	}
	if n, _ := io.Copy(io.Discard, io.LimitReader(br, 1)); n != 0 {
		return Meta{}, false, fmt.Errorf("%w: artifact %s is longer than it says", ErrCorrupt, key[:min(12, len(key))])
	}
	if mac != nil && !hmac.Equal(mac.Sum(nil), want) {
		return Meta{}, false, fmt.Errorf("%w: artifact %s: its signature does not verify", ErrCorrupt, key[:min(12, len(key))])
	}
	return m, true, nil
}

// readLine reads one line of at most max bytes, without its newline.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max+1 {
			return nil, errors.New("entry document too large")
		}
		if err == nil {
			return line[:len(line)-1], nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

func (t *turbo) Store(ctx context.Context, key string, m Meta, cas *store.CAS) error {
	metaData, err := json.Marshal(m)
	if err != nil {
		return err
	}
	head := append([]byte(artifactMagic), metaData...)
	head = append(head, '\n')
	size := int64(len(head))
	var blobs []digest
	for _, d := range []digest{{m.OutputsBlob, m.OutputsSize}, {m.LogBlob, m.LogSize}} {
		if d.hash != "" {
			blobs = append(blobs, d)
			size += d.size
		}
	}
	// body opens the artifact as a stream: the head, then each blob from the local store.
	body := func() (io.Reader, func(), error) {
		readers := []io.Reader{bytes.NewReader(head)}
		var files []io.Closer
		closeAll := func() {
			for _, f := range files {
				f.Close()
			}
		}
		for _, d := range blobs {
			f, n, err := cas.Open(d.hash)
			if err == nil && n != d.size {
				f.Close()
				err = fmt.Errorf("local blob %s changed size", d.hash[:12])
			}
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			files = append(files, f)
			readers = append(readers, io.LimitReader(f, d.size))
		}
		return io.MultiReader(readers...), closeAll, nil
	}
	hdr := http.Header{"Content-Type": {"application/octet-stream"},
		"X-Artifact-Duration": {strconv.FormatInt(m.DurationMs, 10)}}
	if mac := t.tagger(key); mac != nil {
		// The tag covers the whole body: read it once to sign, once to send, never all in memory.
		r, done, err := body()
		if err != nil {
			return err
		}
		_, err = io.Copy(mac, r)
		done()
		if err != nil {
			return err
		}
		hdr.Set("X-Artifact-Tag", base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	r, done, err := body()
	if err != nil {
		return err
	}
	defer done()
	ctx, watch := t.h.watch(ctx)
	defer watch.stop()
	watch.sized(size)
	u := t.h.url("/v8/artifacts/"+url.PathEscape(key), t.query())
	resp, err := t.h.do(ctx, http.MethodPut, u, watch.reader(r), size, hdr)
	return putDone(u, resp, err)
}

func (t *turbo) Check(ctx context.Context) error {
	return t.h.probe(ctx, t.h.url("/v8/artifacts/"+emptyDigest, t.query()))
}

// Close drops the client's idle connections.
func (t *turbo) Close() { t.h.close() }
