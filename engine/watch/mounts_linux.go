package watch

import (
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// watchMounts hears the mount table: a mount or unmount at or under the root (a bind mount over
// a workspace folder puts another folder's files at its path, which no watch of the old folder
// hears, and no event says so) makes the watcher take everything again, watching what is there
// now. The table is read again when the kernel says it changed (POLLPRI), and every
// mountTableEvery besides, as the kernel does not say so of every mount. It answers the stop of
// its goroutine, which the watcher's wait group owns.
func (w *Watcher) watchMounts() (stop func(), err error) {
	root := w.opts.Root
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	table, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	wakeR, wakeW, err := os.Pipe()
	if err != nil {
		table.Close()
		return nil, err
	}
	cur, err := mountsUnder(table, root)
	if err != nil {
		table.Close()
		wakeR.Close()
		wakeW.Close()
		return nil, err
	}
	w.wg.Go(func() {
		defer table.Close()
		defer wakeR.Close()
		fds := []unix.PollFd{{Fd: int32(table.Fd()), Events: unix.POLLPRI}, {Fd: int32(wakeR.Fd()), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, int(mountTableEvery.Milliseconds())); err != nil {
				if errors.Is(err, unix.EINTR) {
					continue
				}
				return
			}
			if fds[1].Revents != 0 {
				return
			}
			next, err := mountsUnder(table, root)
			if err != nil || maps.Equal(next, cur) {
				continue
			}
			cur = next
			w.opts.Log("a folder of the workspace was mounted or unmounted: the workspace is scanned again")
			w.mu.Lock()
			w.rescan = true
			w.mu.Unlock()
			w.poke()
		}
	})
	return func() { wakeW.Close() }, nil
}

// mountTableEvery is how often the mount table is read again without the kernel's word.
const mountTableEvery = time.Second

// mountsUnder reads the mount table from its start and answers the mount points at or under root,
// each with its mount's id (a mount made again over the same folder is another).
func mountsUnder(table *os.File, root string) (map[string]string, error) {
	if _, err := table.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(table)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for line := range strings.Lines(string(data)) {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		mp := unescapeMount(fields[4])
		if mp == root || strings.HasPrefix(mp, root+"/") {
			out[mp] = fields[0]
		}
	}
	return out, nil
}

// unescapeMount undoes the mount table's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
