//go:build unix

package filestate

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if askHelper() {
		return
	}
	goleak.VerifyTestMain(m)
}

// sampleSnapshot is a small snapshot: a root with a visible file, an ignored output folder, a
// symlink and node_modules.
func sampleSnapshot(root string) *Snapshot {
	file := func(name string, size int64, visible bool, hash string) Entry {
		return Entry{Name: name, Visible: visible, Info: Info{Mode: 0o644, Size: size, MtimeNs: 1e9, CtimeNs: 2e9, Ino: 7, Hash: hash}}
	}
	dir := func(name string, opaque bool) Entry {
		return Entry{Name: name, Opaque: opaque, Info: Info{Mode: fs.ModeDir | 0o755}}
	}
	hash := strings.Repeat("ab", 32)
	return NewSnapshot(root, filepath.Join(root, ".vx"), map[string]*Dir{
		".": {Entries: []Entry{dir(".vx", true), file("a.js", 3, true, hash), dir("dist", false),
			{Name: "link", Visible: true, Info: Info{Mode: fs.ModeSymlink | 0o777, Link: "a.js"}}, dir("node_modules", true), dir("src", false)}},
		"dist": {Entries: []Entry{file("out.js", 5, false, hash)}},
		"src":  {Entries: []Entry{file("b.js", 1, true, ""), file("c.js", 2, true, "")}},
	})
}

func TestWireRoundTrip(t *testing.T) {
	s := sampleSnapshot("/ws")
	s.dirs["."].Entries[1].Info.Digest = "sha1:" + strings.Repeat("cd", 20) // a.js
	got, err := Decode(s.Encoded())
	if err != nil {
		t.Fatal(err)
	}
	if got.root != "/ws" || got.stateDir != "/ws/.vx" || len(got.dirs) != 3 {
		t.Fatalf("decoded %+v", got)
	}
	for dir, d := range s.dirs {
		if !slices.EqualFunc(d.Entries, got.dirs[dir].Entries, func(a, b Entry) bool { return a == b }) {
			t.Fatalf("folder %s:\n got %+v\nwant %+v", dir, got.dirs[dir].Entries, d.Entries)
		}
	}
	vis, _ := got.Visible(context.Background(), ".")
	if want := []string{"a.js", "link", "src/b.js", "src/c.js"}; !slices.Equal(vis, want) {
		t.Fatalf("visible %q, want %q", vis, want)
	}
	if sub, _ := got.Visible(context.Background(), "src"); !slices.Equal(sub, []string{"b.js", "c.js"}) {
		t.Fatalf("visible under src: %q", sub)
	}
	// Every cut of the answer is refused, never half read.
	data := s.Encoded()
	for n := 0; n < len(data); n++ {
		if _, err := Decode(data[:n]); err == nil {
			t.Fatalf("a cut of %d bytes of %d decoded", n, len(data))
		}
	}
}

// A watcher's next snapshot shares the folders that did not change, whose wire form is kept: the
// snapshot then encodes as one made afresh, with the changed folder's entries and none of the
// last one's, and the last snapshot encodes as it did.
func TestEncodedSharesFolders(t *testing.T) {
	first := sampleSnapshot("/ws")
	before := slices.Clone(first.Encoded())
	dirs := maps.Clone(first.dirs)
	dirs["src"] = &Dir{Entries: []Entry{{Name: "b.js", Visible: true, Info: Info{Mode: 0o644, Size: 9, MtimeNs: 3e9, Ino: 8}}}}
	delete(dirs, "dist")
	next := NewSnapshot("/ws", "/ws/.vx", dirs)
	afresh := map[string]*Dir{}
	for dir, d := range dirs {
		afresh[dir] = &Dir{Entries: slices.Clone(d.Entries)}
	}
	if got, want := next.Encoded(), NewSnapshot("/ws", "/ws/.vx", afresh).Encoded(); !bytes.Equal(got, want) {
		t.Fatalf("the next snapshot encodes as\n%q\none made afresh as\n%q", got, want)
	}
	if !bytes.Equal(first.Encoded(), before) {
		t.Fatal("the first snapshot's wire form changed")
	}
	decoded, err := Decode(next.Encoded())
	if err != nil || len(decoded.dirs) != 2 || len(decoded.dirs["src"].Entries) != 1 || decoded.dirs["src"].Entries[0].Info.Size != 9 {
		t.Fatalf("decoded %+v, %v", decoded, err)
	}
}

func TestSnapshotLstat(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "node_modules/x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "node_modules/x/i.js"), []byte("disk"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := sampleSnapshot(root)
	fi, err := s.Lstat("a.js")
	if err != nil || fi.Size() != 3 || InfoOf(fi).Hash == "" {
		t.Fatalf("a.js: %v %v", fi, err)
	}
	if _, err := s.Lstat("src/gone.js"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
	if _, err := s.Lstat("nothere/x.js"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("under a missing folder: %v", err)
	}
	// node_modules is not watched: the disk answers.
	if fi, err := s.Lstat("node_modules/x/i.js"); err != nil || fi.Size() != 4 {
		t.Fatalf("under node_modules: %v %v", fi, err)
	}
	var walked []string
	if err := s.WalkFiles(".", func(rel string, _ fs.FileMode) { walked = append(walked, rel) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(walked)
	want := []string{"a.js", "dist/out.js", "link", "node_modules/x/i.js", "src/b.js", "src/c.js"}
	if !slices.Equal(walked, want) {
		t.Fatalf("walk: %q, want %q", walked, want)
	}
}

// serve serves snap on a socket under a fresh state folder and answers the folder.
func serve(t *testing.T, root string, provide Provider) string {
	t.Helper()
	state := shortDir(t)
	srv, err := Listen(state, root, provide)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return state
}

// shortDir is a temporary folder with a path short enough for a socket.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestAskAnswers(t *testing.T) {
	snap := sampleSnapshot("/ws")
	state := serve(t, "/ws", func(context.Context) (*Snapshot, error) { return snap, nil })
	fi, err := os.Lstat(SocketPath(state))
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the socket: %v %v", fi, err)
	}
	got, err := Ask(context.Background(), state, "/ws", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if vis, _ := got.Visible(context.Background(), "."); len(vis) != 4 {
		t.Fatalf("visible: %q", vis)
	}
	// Another workspace's question is refused.
	if _, err := Ask(context.Background(), state, "/other", time.Second); err == nil {
		t.Fatal("a socket answered for another root")
	}
	// One process serves a state folder.
	if _, err := Listen(state, "/ws", nil); !errors.Is(err, ErrServed) {
		t.Fatalf("a second server: %v, want ErrServed", err)
	}
}

func TestAskDoubts(t *testing.T) {
	t.Run("no server", func(t *testing.T) {
		if _, err := Ask(context.Background(), shortDir(t), "/ws", time.Second); !errors.Is(err, ErrNoServer) {
			t.Fatalf("%v, want ErrNoServer", err)
		}
	})
	t.Run("a refusal", func(t *testing.T) {
		state := serve(t, "/ws", func(context.Context) (*Snapshot, error) { return nil, errors.New("overflowed") })
		if _, err := Ask(context.Background(), state, "/ws", time.Second); err == nil || !strings.Contains(err.Error(), "overflowed") {
			t.Fatalf("%v, want the refusal", err)
		}
	})
	t.Run("no answer in time", func(t *testing.T) {
		release := make(chan struct{})
		state := serve(t, "/ws", func(ctx context.Context) (*Snapshot, error) {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil, errors.New("late")
		})
		defer close(release)
		start := time.Now()
		if _, err := Ask(context.Background(), state, "/ws", 20*time.Millisecond); err == nil {
			t.Fatal("a late answer was waited for")
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("the asker waited on")
		}
	})
	t.Run("a silent server", func(t *testing.T) {
		// It takes the connection and says nothing: not a watcher at work, and not waited for.
		state := shortDir(t)
		ln, err := net.Listen("unix", SocketPath(state))
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		if err := os.Chmod(SocketPath(state), 0o600); err != nil {
			t.Fatal(err)
		}
		accepted := make(chan net.Conn, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				accepted <- c
			}
			close(accepted)
		}()
		start := time.Now()
		if _, err := Ask(context.Background(), state, "/ws", 20*time.Millisecond); err == nil || errors.Is(err, ErrNoServer) {
			t.Fatalf("%v, want no answer in time", err)
		}
		if waited := time.Since(start); waited > answerWait/2 {
			t.Fatalf("a silent server was waited for %v", waited)
		}
		if c, ok := <-accepted; ok {
			c.Close()
		}
	})
	t.Run("a watcher at work", func(t *testing.T) {
		// It takes the question at once and answers after longer than the wait: the answer is
		// waited for (a watcher that hashes an edit), within answerWait.
		state := serve(t, "/ws", func(context.Context) (*Snapshot, error) {
			time.Sleep(100 * time.Millisecond)
			return sampleSnapshot("/ws"), nil
		})
		if _, err := Ask(context.Background(), state, "/ws", 20*time.Millisecond); err != nil {
			t.Fatalf("a watcher at work was not waited for: %v", err)
		}
	})
	t.Run("a socket others may use", func(t *testing.T) {
		state := serve(t, "/ws", func(context.Context) (*Snapshot, error) { return sampleSnapshot("/ws"), nil })
		if err := os.Chmod(SocketPath(state), 0o666); err != nil {
			t.Fatal(err)
		}
		if _, err := Ask(context.Background(), state, "/ws", time.Second); err == nil || errors.Is(err, ErrNoServer) {
			t.Fatalf("%v, want a refusal of the socket", err)
		}
	})
	t.Run("a stale socket", func(t *testing.T) {
		state := shortDir(t)
		ln, err := net.Listen("unix", SocketPath(state))
		if err != nil {
			t.Fatal(err)
		}
		ln.(*net.UnixListener).SetUnlinkOnClose(false)
		ln.Close()
		if err := os.Chmod(SocketPath(state), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Ask(context.Background(), state, "/ws", time.Second); !errors.Is(err, ErrNoServer) {
			t.Fatalf("%v, want ErrNoServer", err)
		}
		// A new server takes the place of the stale socket.
		srv, err := Listen(state, "/ws", func(context.Context) (*Snapshot, error) { return sampleSnapshot("/ws"), nil })
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		if _, err := Ask(context.Background(), state, "/ws", time.Second); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("a path too long", func(t *testing.T) {
		long := filepath.Join(shortDir(t), strings.Repeat("d", 120))
		if err := os.MkdirAll(long, 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := Listen(long, "/ws", nil); err == nil {
			t.Fatal("a socket path longer than the OS allows was served")
		}
		if _, err := Ask(context.Background(), long, "/ws", time.Second); err == nil || errors.Is(err, ErrNoServer) {
			t.Fatalf("%v, want the path named", err)
		}
	})
}
