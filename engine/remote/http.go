package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// httpClient is what both protocols share: the base URL, the token, and timeouts that keep a slow
// server from stalling a run.
type httpClient struct {
	base    *url.URL
	token   string
	basic   bool // the token is user:password, sent as HTTP basic auth (bazel-remote's htpasswd)
	timeout time.Duration
	client  *http.Client
}

func newHTTP(s Settings) *httpClient {
	base, _ := url.Parse(strings.TrimRight(s.URL, "/"))
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: s.Timeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   s.Timeout,
		ResponseHeaderTimeout: s.Timeout,
		ExpectContinueTimeout: time.Second,
		// Above the lookups a run keeps in flight (runner's aheadFetches, 16): a connection
		// finished with stays for the next lookup instead of being closed and dialled again.
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     30 * time.Second,
		// A blob is already compressed (or checked byte for byte): never let the transport
		// decompress behind the digest check.
		DisableCompression: true,
	}
	h := &httpClient{base: base, token: s.Token, timeout: s.Timeout, client: &http.Client{Transport: tr, CheckRedirect: checkRedirect}}
	if s.Protocol == ProtocolBazel && strings.Contains(s.Token, ":") {
		h.basic = true
	}
	return h
}

// maxRedirects is how many redirects a request follows, as Go's default policy does.
const maxRedirects = 10

// checkRedirect is the redirect policy: a redirect to another origin (scheme://host:port) is
// followed without the Authorization header, Bearer or Basic, which Go itself drops only when the
// host name differs (a redirect to another port of the same host kept the token); a redirect from
// https to http is refused, since what follows it, and the answer, would travel in the clear.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0].URL
	for _, v := range via {
		if v.URL.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("a redirect from https to %s refused", req.URL.Scheme)
		}
	}
	if origin(req.URL) != origin(first) {
		req.Header.Del("Authorization")
	}
	return nil
}

// origin is a URL's scheme://host:port, with the scheme's default port made explicit.
func origin(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}

// close drops idle connections, so that no transport goroutine outlives the run.
func (h *httpClient) close() { h.client.CloseIdleConnections() }

// url is the base URL joined with p and the query.
func (h *httpClient) url(p string, q url.Values) string {
	u := *h.base
	u.Path = strings.TrimRight(u.Path, "/") + p
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// do sends one request; the caller closes the body. A transport failure, a 5xx and a refused
// token are ErrUnavailable; the response of any other status is answered.
func (h *httpClient) do(ctx context.Context, method, u string, body io.Reader, size int64, hdr http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = size
		if size == 0 {
			req.Body = http.NoBody
		}
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	switch {
	case h.token == "":
	case h.basic:
		user, pass, _ := strings.Cut(h.token, ":")
		req.SetBasicAuth(user, pass)
	default:
		req.Header.Set("Authorization", "Bearer "+h.token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: %v", ErrUnavailable, method, h.redact(u), h.redactErr(cause(ctx, err)))
	}
	switch {
	case resp.StatusCode >= 500:
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s %s: %s", ErrUnavailable, method, h.redact(u), resp.Status)
	case method == http.MethodPut && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		// A server that serves reads and refuses this upload holds a read-only credential's rule.
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s %s: %s", ErrWriteRefused, method, h.redact(u), resp.Status)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		resp.Body.Close()
		return nil, fmt.Errorf("%w: %s %s: %s (is the token right?)", ErrUnavailable, method, h.redact(u), resp.Status)
	}
	return resp, nil
}

// redact is a URL as it may be shown: the base's path, never a credential.
// probe is a server's check: a HEAD of the empty blob, which no one stores, within the client's
// timeout. 200 or 404 says the server answers and takes the token; anything else is
// ErrUnavailable.
func (h *httpClient) probe(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	resp, err := h.do(ctx, http.MethodHead, u, nil, 0, nil)
	if err != nil {
		return err
	}
	drain(resp.Body)
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
		return fmt.Errorf("%w: HEAD %s: %s", ErrUnavailable, RedactURL(u), resp.Status)
	}
	return nil
}

func (h *httpClient) redact(u string) string { return RedactURL(u) }

// redactErr is an error's text with the token masked (a transport error may quote a URL).
func (h *httpClient) redactErr(err error) string {
	s := err.Error()
	if h.token != "" {
		s = strings.ReplaceAll(s, h.token, "***")
	}
	return trimErr(s)
}

// bytesPerSecond is the slowest rate a transfer of known size is allowed on average.
const bytesPerSecond = 1 << 20

// watch answers ctx bounded for one transfer, and the watch that bounds it: until the transfer's
// size is known (sized) the whole of it must end within the client's timeout; after that within
// 2 × timeout + size ÷ 1 MiB/s of its start. Beside that deadline, a transfer that moves no byte
// for the timeout ends (a stall): a server that trickles cannot hold a run, and one that is slow
// but moving keeps to a bound that grows with what it sends. Every body, signed or not, is read
// (or sent) through the watch's reader; stop releases it.
func (h *httpClient) watch(ctx context.Context) (context.Context, *transferWatch) {
	return watchTransfer(ctx, h.timeout)
}

// watchTransfer answers ctx bounded for one transfer by timeout, as httpClient.watch says.
func watchTransfer(ctx context.Context, timeout time.Duration) (context.Context, *transferWatch) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &transferWatch{timeout: timeout, start: time.Now(), cancel: cancel}
	w.stall = time.AfterFunc(timeout, func() {
		cancel(fmt.Errorf("no byte moved for %s", timeout))
	})
	w.deadline = time.AfterFunc(timeout, func() {
		cancel(fmt.Errorf("not done within %s", timeout))
	})
	return ctx, w
}

// transferWatch bounds one transfer in time: a deadline, and a stall timer that every byte resets.
type transferWatch struct {
	timeout         time.Duration
	start           time.Time
	stall, deadline *time.Timer
	cancel          context.CancelCauseFunc
}

// sized sets the transfer's deadline from its size: 2 × timeout + size ÷ 1 MiB/s from its start.
func (w *transferWatch) sized(size int64) {
	bound := 2*w.timeout + time.Duration(float64(max(size, 0))/bytesPerSecond*float64(time.Second))
	left := time.Until(w.start.Add(bound))
	w.deadline.Stop()
	w.deadline = time.AfterFunc(max(left, 0), func() {
		w.cancel(fmt.Errorf("a transfer of %d bytes not done within %s", size, bound.Round(time.Millisecond)))
	})
}

func (w *transferWatch) reader(r io.Reader) io.Reader { return &watchedReader{r: r, w: w} }

// moved says that bytes moved: the stall timer starts again.
func (w *transferWatch) moved() { w.stall.Reset(w.timeout) }

func (w *transferWatch) stop() {
	w.stall.Stop()
	w.deadline.Stop()
	w.cancel(nil)
}

type watchedReader struct {
	r io.Reader
	w *transferWatch
}

func (r *watchedReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.stall.Reset(r.w.timeout)
	}
	return n, err
}

// cause is the reason a watched transfer ended early, else err itself.
func cause(ctx context.Context, err error) error {
	if c := context.Cause(ctx); c != nil && ctx.Err() != nil && !errors.Is(c, context.Canceled) {
		return c
	}
	return err
}

// drain reads what is left of a body (bounded) so that the connection can be reused, and closes it.
func drain(r io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r, 64<<10))
	r.Close()
}

// putDone ends a PUT: the request's error, or the answer's unless it is a success.
func putDone(u string, resp *http.Response, err error) error {
	if err != nil {
		return err
	}
	defer drain(resp.Body)
	if resp.StatusCode/100 != 2 {
		return status(http.MethodPut, u, resp)
	}
	return nil
}

// status is an unexpected answer.
func status(method, u string, resp *http.Response) error {
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("%w: %s %s: %s %s", ErrUnavailable, method, RedactURL(u), resp.Status, trimErr(string(msg)))
}
