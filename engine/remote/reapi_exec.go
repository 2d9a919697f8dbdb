package remote

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/vzn/vx/engine/store"
)

// REAPI is a connection to a REAPI engine for remote execution: its CAS, through the same bounded
// and checked transfers as the cache's (FindMissingBlobs first, batches under the engine's limit,
// ByteStream past it), and the connection and headers the Execution service is called with.
type REAPI struct{ c *reapiCache }

// Blob is one blob to put in an engine's CAS: its SHA-256 and size, and its content, Data or the
// file at Path (absolute) whose content it was hashed from.
type Blob struct {
	Hash string
	Size int64
	Data []byte
	Path string
}

// DialREAPI answers a connection to the reapi server of s; an error when s is not one, or its
// TLS files cannot be read.
func DialREAPI(s Settings) (*REAPI, error) {
	if s.Protocol != ProtocolREAPI {
		return nil, fmt.Errorf("remote execution needs a grpc:// or grpcs:// server, not %s", RedactURL(s.URL))
	}
	c := newREAPI(s)
	if c.setupErr != nil {
		return nil, c.setupErr
	}
	return &REAPI{c: c}, nil
}

// Conn is the gRPC connection, for the Execution and Operations services.
func (r *REAPI) Conn() grpc.ClientConnInterface { return r.c.conn }

// Metadata are the headers of every call: the configured ones and the credentials.
func (r *REAPI) Metadata() metadata.MD { return r.c.md.Copy() }

// Instance is the instance name every call names.
func (r *REAPI) Instance() string { return r.c.instance }

// Upload puts the blobs the engine lacks into its CAS. A blob read from a file is checked against
// its digest before a batch sends it; one streamed is checked by the engine as it commits it. A
// blob with neither Data nor Path is one only the engine holds (an output that stayed remote):
// one it lacks is ErrBlobMissing.
func (r *REAPI) Upload(ctx context.Context, blobs []Blob) error {
	in := make([]blob, 0, len(blobs))
	var held []blob
	seen := map[string]bool{}
	for _, b := range blobs {
		if b.Size == 0 || seen[b.Hash] {
			continue // the empty blob is in every CAS
		}
		if !isDigest(b.Hash) || b.Size < 0 {
			return fmt.Errorf("blob %q of %d bytes is no digest", b.Hash, b.Size)
		}
		seen[b.Hash] = true
		if b.Data == nil && b.Path == "" {
			held = append(held, blob{d: digest{b.Hash, b.Size}})
			continue
		}
		in = append(in, blob{d: digest{b.Hash, b.Size}, data: b.Data, path: b.Path})
	}
	if err := r.holds(ctx, held); err != nil {
		return err
	}
	if len(in) == 0 {
		return nil
	}
	return r.c.upload(ctx, nil, in)
}

// ErrBlobMissing is a blob the engine's CAS does not hold.
var ErrBlobMissing = errors.New("the engine's CAS lacks a blob")

// Download brings the blobs named (Hash and Size) from the engine's CAS into the local blob
// store cas, each checked against its digest as it is written: small ones in batches under the
// engine's limit, larger ones through ByteStream. A blob the engine lacks is ErrBlobMissing.
func (r *REAPI) Download(ctx context.Context, cas *store.CAS, blobs []Blob) error {
	ds := make([]digest, 0, len(blobs))
	for _, b := range blobs {
		if !isDigest(b.Hash) || b.Size < 0 {
			return fmt.Errorf("blob %q of %d bytes is no digest", b.Hash, b.Size)
		}
		ds = append(ds, digest{b.Hash, b.Size})
	}
	ok, err := r.c.download(ctx, cas, ds)
	if err != nil {
		return err
	}
	if !ok {
		return ErrBlobMissing
	}
	return nil
}

// ClientWritesActionCache reports whether the engine lets this client write its Action Cache, as
// its capabilities say (action_cache_update_capabilities.update_enabled, asked once per
// connection): where it does not, only its workers write results there, under the digest of the
// Action they executed, and vx's own keys cannot be kept there.
func (r *REAPI) ClientWritesActionCache(ctx context.Context) (bool, error) {
	limits, err := r.c.casLimits(ctx)
	if err != nil {
		return false, err
	}
	return limits.acUpdate, nil
}

// Close ends the connection.
func (r *REAPI) Close() { r.c.Close() }

// holds checks that the engine's CAS holds blobs of which no content is here.
func (r *REAPI) holds(ctx context.Context, blobs []blob) error {
	if len(blobs) == 0 {
		return nil
	}
	missing, err := r.c.findMissing(ctx, blobs)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %d blobs of outputs that stayed remote", ErrBlobMissing, len(missing))
	}
	return nil
}
