//go:build unix

package filestate

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The socket: a watcher's process listens on <state folder>/watch.sock, owner-only, while it
// holds watch.lock beside it (so that one process serves a workspace at a time and a stale socket
// is told from a live one). A request is one line, "VXFS2 <root>\n". A server that takes it says
// so at once with one byte (answerWorking), then answers when its snapshot is made: a status byte
// (answerOK, else answerRefused with a reason), the payload's length (8 bytes, big-endian) and the
// payload: the snapshot's wire form, or the reason. A refusal may come instead of answerWorking.
// The asker gives a silent server a few milliseconds (the wait), and a working one answerWait:
// after an edit the watcher hashes what changed and encodes its snapshot again, which can take
// longer than the wait, and the asker would scan for ten times as long.
const (
	socketName   = "watch.sock"
	lockName     = "watch.lock"
	requestMagic = "VXFS2 "

	answerOK      = 0
	answerRefused = 1
	answerWorking = 2

	// maxAnswer bounds the answer a client reads, whatever the workspace (see answerLimit).
	maxAnswer = 1 << 30
	// maxRequest bounds a request line: the magic, a root path (PATH_MAX) and its newline.
	maxRequest = len(requestMagic) + 4096 + 1
	// requestWait is how long a connection may take to send its request line.
	requestWait = time.Second
	// connWait bounds a connection's whole life on the server: the answer's making and sending.
	connWait = 5 * time.Second
	// maxConns bounds the connections served at once; more wait in the listen backlog (the
	// kernel's, bounded), and an asker that waits too long scans.
	maxConns = 16
	// bodyWait is how long the answer's payload may take to arrive once its header has.
	bodyWait = 500 * time.Millisecond
	// answerWait is how long a server that said answerWorking may take to answer.
	answerWait = time.Second
)

// ErrServed says that another live process serves the workspace's socket.
var ErrServed = errors.New("another vx serves this workspace's file state")

// ErrNoServer says that no process serves the workspace's socket: the asker scans.
var ErrNoServer = errors.New("no vx watches this workspace")

// SocketPath answers the socket's path under the state folder.
func SocketPath(stateDir string) string { return filepath.Join(stateDir, socketName) }

// Provider answers the snapshot a request gets, or why there is none (the watcher overflowed,
// it is still taking its first look).
type Provider func(ctx context.Context) (*Snapshot, error)

// Server answers the socket's requests. Close ends it.
type Server struct {
	root    string
	path    string
	ln      net.Listener
	lock    *os.File
	provide Provider

	// slots holds one token per connection being served (maxConns).
	slots chan struct{}

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
}

// Listen serves the file state of the workspace at root on its socket under stateDir, which must
// exist. It answers ErrServed when another live process serves it, and an error when the socket's
// path is longer than the OS allows.
func Listen(stateDir, root string, provide Provider) (*Server, error) {
	path := SocketPath(stateDir)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("file state socket %s: %d bytes, more than the %d a socket path may have here", path, len(path), maxSocketPath)
	}
	lock, err := openLock(filepath.Join(stateDir, lockName))
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, ErrServed
		}
		return nil, fmt.Errorf("file state socket: lock %s: %w", lock.Name(), err)
	}
	ln, err := listenPrivate(stateDir, path)
	if err != nil {
		lock.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{root: root, path: path, ln: ln, lock: lock, provide: provide, slots: make(chan struct{}, maxConns),
		conns: map[net.Conn]bool{}, ctx: ctx, cancel: cancel}
	s.wg.Go(s.accept)
	return s, nil
}

// openLock opens (creating it, owner-only) the lock file at path without following a symlink: a
// link planted there is refused by name, never made to create or lock what it points at.
func openLock(path string) (*os.File, error) {
	lock, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o600)
	if err == nil {
		fi, statErr := lock.Stat()
		if statErr == nil && fi.Mode().IsRegular() {
			return lock, nil
		}
		lock.Close()
		return nil, fmt.Errorf("file state socket: %s is not a regular file: refused", path)
	}
	if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("file state socket: %s is a symlink: refused (remove it)", path)
	}
	return nil, fmt.Errorf("file state socket: %w", err)
}

// listenPrivate binds the socket owner-only: in a folder of its own (mode 0700) first, chmod 0600
// there, then renamed into place over a stale one, so that no one else can connect in between.
func listenPrivate(stateDir, path string) (net.Listener, error) {
	tmp, err := os.MkdirTemp(stateDir, ".watch-")
	if err != nil {
		return nil, fmt.Errorf("file state socket: %w", err)
	}
	defer os.RemoveAll(tmp)
	bound := filepath.Join(tmp, socketName)
	ln, err := net.Listen("unix", bound)
	if err != nil {
		return nil, fmt.Errorf("file state socket: %w", err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := os.Chmod(bound, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("file state socket: %w", err)
	}
	if err := os.Rename(bound, path); err != nil {
		ln.Close()
		return nil, fmt.Errorf("file state socket: %w", err)
	}
	return ln, nil
}

// Close stops serving: the socket is removed, open connections closed, and every goroutine of
// the server has ended when it returns.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.cancel()
	// The socket goes first: a client that finds it afterwards gets no answer and scans.
	_ = os.Remove(s.path)
	err := s.ln.Close()
	s.wg.Wait()
	s.lock.Close()
	return err
}

// accept serves each connection in a goroutine of its own, at most maxConns at once: a slot is
// taken before the next connection is accepted, so that those beyond wait in the kernel's backlog
// and cost this process nothing.
func (s *Server) accept() {
	for {
		select {
		case s.slots <- struct{}{}:
		case <-s.ctx.Done():
			return
		}
		c, err := s.ln.Accept()
		if err != nil {
			<-s.slots
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			<-s.slots
			return
		}
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
				<-s.slots
			}()
			s.answer(c)
		})
	}
}

// answer answers one connection's request: only from this user, never from a sandboxed task,
// only for this root. Every read is bounded in size and time.
func (s *Server) answer(c net.Conn) {
	start := time.Now()
	_ = c.SetDeadline(start.Add(connWait))
	_ = c.SetReadDeadline(start.Add(requestWait))
	if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
		return // another user: no answer at all
	}
	root, ok := readRequest(c)
	if !ok {
		return
	}
	if why, err := peerConfined(c); err != nil || why != "" {
		if err != nil {
			why = "cannot tell whether the asking process is sandboxed: " + err.Error()
		}
		writeAnswer(c, answerRefused, []byte("a sandboxed task gets no file state: "+why))
		return
	}
	if root != s.root {
		writeAnswer(c, answerRefused, []byte("this socket serves "+s.root))
		return
	}
	if _, err := c.Write([]byte{answerWorking}); err != nil {
		return
	}
	snap, err := s.provide(s.ctx)
	if err != nil {
		writeAnswer(c, answerRefused, []byte(err.Error()))
		return
	}
	writeAnswer(c, answerOK, snap.Encoded())
}

// readRequest reads a request line, at most maxRequest bytes, and answers its root; ok is false
// for a line that is too long, cut short, late or not a request.
func readRequest(c net.Conn) (root string, ok bool) {
	line, err := bufio.NewReaderSize(io.LimitReader(c, int64(maxRequest)), maxRequest).ReadSlice('\n')
	if err != nil {
		return "", false
	}
	return strings.CutPrefix(strings.TrimSuffix(string(line), "\n"), requestMagic)
}

func writeAnswer(w io.Writer, status byte, payload []byte) {
	var head [9]byte
	head[0] = status
	binary.BigEndian.PutUint64(head[1:], uint64(len(payload)))
	if _, err := w.Write(head[:]); err == nil {
		_, _ = w.Write(payload)
	}
}

// Ask asks the process serving the workspace at root (its socket under stateDir) for its file
// state. Any doubt is an error, and the asker scans: no socket, one that is not this user's alone
// or is served by another user, a path longer than the OS allows, no answer within wait, a
// refusal (the watcher overflowed), an answer that does not decode or is of another root.
func Ask(ctx context.Context, stateDir, root string, wait time.Duration) (*Snapshot, error) {
	path := SocketPath(stateDir)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("%s: longer than a socket path may be here", path)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, ErrNoServer
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if fi.Mode()&os.ModeSocket == 0 || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s: not a socket of this user's alone", path)
	}
	dialer := net.Dialer{Timeout: wait}
	c, err := dialer.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, ErrNoServer // a stale socket: its process is gone
	}
	defer c.Close()
	if uid, err := peerUID(c); err != nil || uid != os.Getuid() {
		return nil, fmt.Errorf("%s: served by another user", path)
	}
	_ = c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, requestMagic+root+"\n"); err != nil {
		return nil, fmt.Errorf("ask %s: %w", path, err)
	}
	var head [9]byte
	if _, err := io.ReadFull(c, head[:1]); err != nil {
		return nil, fmt.Errorf("ask %s: no answer within %s: %w", path, wait, err)
	}
	if head[0] == answerWorking { // the server took the question: its answer follows
		_ = c.SetDeadline(time.Now().Add(answerWait))
		if _, err := io.ReadFull(c, head[:1]); err != nil {
			return nil, fmt.Errorf("ask %s: the watcher took the question and gave no answer within %s: %w", path, answerWait, err)
		}
	}
	if _, err := io.ReadFull(c, head[1:]); err != nil {
		return nil, fmt.Errorf("ask %s: %w", path, err)
	}
	n := binary.BigEndian.Uint64(head[1:])
	if limit := answerLimit(root); n > uint64(limit) {
		return nil, fmt.Errorf("ask %s: an answer of %d bytes, more than the %d this workspace's file state can take", path, n, limit)
	}
	_ = c.SetDeadline(time.Now().Add(bodyWait))
	// Read as it arrives, never allocated up front: a length the server does not send costs
	// nothing.
	payload, err := io.ReadAll(io.LimitReader(c, int64(n)))
	if err != nil {
		return nil, fmt.Errorf("ask %s: %w", path, err)
	}
	if uint64(len(payload)) != n {
		return nil, fmt.Errorf("ask %s: an answer cut short at %d of %d bytes", path, len(payload), n)
	}
	if head[0] != answerOK {
		return nil, fmt.Errorf("the watcher: %s", payload)
	}
	snap, err := Decode(payload)
	if err != nil {
		return nil, err
	}
	if snap.root != root {
		return nil, fmt.Errorf("ask %s: the file state of %s", path, snap.root)
	}
	return snap, nil
}
