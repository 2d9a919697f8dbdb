package watch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Limits is what the OS allows a watcher, against what this workspace needs: `vx info` and
// getWorkspaceInfo report it, and name the fix when it is too low.
type Limits struct {
	// Backend is the OS's file event API fsnotify uses here.
	Backend string `json:"backend"`
	// Folders is how many folders a watcher of this workspace watches (node_modules, .git, the
	// state folder and nested repositories left out); Files how many files they hold.
	Folders int `json:"folders"`
	Files   int `json:"files"`
	// Needed is how many watches (inotify) or open files (kqueue) that takes; Limit what the OS
	// allows (-1 when vx cannot tell), LimitName where that limit is set.
	Needed    int    `json:"needed"`
	Limit     int    `json:"limit"`
	LimitName string `json:"limitName"`
	// Instances is, on Linux, fs.inotify.max_user_instances (-1 elsewhere): each watching vx
	// (vx mcp, vx watch) takes one.
	Instances int `json:"instances"`
	// OK is false when Needed is above Limit: a watcher then cannot vouch for the file state, and
	// every run scans; Fix says how to raise it.
	OK  bool   `json:"ok"`
	Fix string `json:"fix,omitempty"`
}

// Summary renders the limits on one line.
func (l Limits) Summary() string {
	limit := "unknown"
	if l.Limit >= 0 {
		limit = strconv.Itoa(l.Limit)
	}
	line := fmt.Sprintf("%s: %d folders need %d of %s %s", l.Backend, l.Folders, l.Needed, limit, l.LimitName)
	if !l.OK {
		line += ": too low; " + l.Fix
	}
	return line
}

// CheckLimits counts the folders (and files) a watcher of the workspace at root would watch and
// compares them with the OS's limit.
func CheckLimits(root, stateDir string) Limits {
	folders, files := count(root, stateDir)
	l := Limits{Folders: folders, Files: files, Limit: -1, Instances: -1, OK: true}
	switch runtime.GOOS {
	case "linux":
		l.Backend, l.LimitName, l.Needed = "inotify", "fs.inotify.max_user_watches", folders+2
		l.Limit = readInt("/proc/sys/fs/inotify/max_user_watches")
		l.Instances = readInt("/proc/sys/fs/inotify/max_user_instances")
		if l.Limit >= 0 && l.Needed > l.Limit {
			l.OK = false
			l.Fix = fmt.Sprintf("sudo sysctl fs.inotify.max_user_watches=%d (and the same line in /etc/sysctl.conf to keep it)", raise(l.Needed, l.Limit))
		}
	case "windows":
		l.Backend, l.LimitName, l.Needed = "ReadDirectoryChangesW", "none", folders
	default:
		// kqueue holds an open file for each folder and each file it watches.
		l.Backend, l.LimitName, l.Needed = "kqueue", "open files (ulimit -n)", folders+files+2
		l.Limit = openFileLimit()
		if l.Limit >= 0 && l.Needed > l.Limit {
			l.OK = false
			l.Fix = fmt.Sprintf("ulimit -n %d in the shell that starts vx (and sudo sysctl kern.maxfilesperproc=%d on macOS if that is lower)", raise(l.Needed, l.Limit), raise(l.Needed, l.Limit))
		}
	}
	return l
}

// raise answers a limit to advise: twice need, and never less than twice the current limit
// (where the limit is reached below need, other processes hold the rest), rounded up to a
// multiple of 65,536; current is -1 when not known.
func raise(need, current int) int {
	const step = 65536
	want := max(2*need, 2*current, 1)
	return (want + step - 1) / step * step
}

func readInt(path string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return -1
	}
	return n
}

// count counts the folders and files a watcher would watch.
func count(root, stateDir string) (folders, files int) {
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() {
			files++
			return nil
		}
		if p != root {
			if d.Name() == "node_modules" || d.Name() == ".git" || p == stateDir {
				return filepath.SkipDir
			}
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				return filepath.SkipDir
			}
		}
		folders++
		return nil
	})
	return folders, files
}

// limitError names the limit a failed watch ran into, and the fix, where it is one (ENOSPC:
// inotify's watches; EMFILE: its instances, or kqueue's open files); folders is how many the
// watcher had watched (0 when it had not begun).
func limitError(err error, folders int) error {
	switch {
	case errors.Is(err, syscall.ENOSPC) && runtime.GOOS == "linux":
		limit := readInt("/proc/sys/fs/inotify/max_user_watches")
		return fmt.Errorf("%w: the inotify watch limit (fs.inotify.max_user_watches=%d) is reached after %d folders; raise it: sudo sysctl fs.inotify.max_user_watches=%d",
			err, limit, folders, raise(max(folders, 1)*2, limit))
	case errors.Is(err, syscall.EMFILE) && runtime.GOOS == "linux":
		return fmt.Errorf("%w: the inotify instance limit (fs.inotify.max_user_instances=%d) is reached; raise it: sudo sysctl fs.inotify.max_user_instances=%d",
			err, readInt("/proc/sys/fs/inotify/max_user_instances"), max(512, readInt("/proc/sys/fs/inotify/max_user_instances")*2))
	case errors.Is(err, syscall.EMFILE):
		return fmt.Errorf("%w: the open-file limit is reached after %d folders (kqueue holds a file open for each folder and file); raise it: ulimit -n %d",
			err, folders, raise(max(folders, 1)*20, openFileLimit()))
	}
	return err
}

// Report is the watcher's section of `vx info`: the limits, and whether a vx watches the
// workspace now.
type Report struct {
	Limits
	// Serving is true when a vx (vx mcp, vx watch) watches the workspace and answers a run's
	// question for the file state on the socket under the state folder.
	Serving bool `json:"serving"`
}

// Summary renders the report on one line.
func (r Report) Summary() string {
	line := r.Limits.Summary()
	if r.Serving {
		return line + "; a vx watches this workspace now"
	}
	return line + "; no vx watches this workspace now"
}
