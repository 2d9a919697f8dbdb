package workspace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// memoryCgroup is a memory cgroup made for one config evaluation: the kernel counts the memory of
// every process in it (heap, stacks, the runtime's own, and the page cache it fills) and kills the
// child when the count passes the limit. It is made under vx's own cgroup, in the memory
// hierarchy of cgroup v1 or, where its parent delegates the memory controller, of cgroup v2.
type memoryCgroup struct {
	dir string
	v2  bool
}

// newMemoryCgroup makes a memory cgroup limited to limit bytes (swap none), or answers nil where
// none can be made: no memory controller, no permission, a v2 parent that does not delegate it.
func newMemoryCgroup(limit uint64) *memoryCgroup {
	parent, v2, ok := ownMemoryCgroup()
	if !ok {
		return nil
	}
	if v2 {
		ctl, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
		if err != nil || !strings.Contains(" "+strings.TrimSpace(string(ctl))+" ", " memory ") {
			return nil
		}
	}
	dir, err := os.MkdirTemp(parent, "vx-config-")
	if err != nil {
		return nil
	}
	cg := &memoryCgroup{dir: dir, v2: v2}
	n := strconv.FormatUint(limit, 10)
	limitFile, swapFile, swap := "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", n
	if v2 {
		limitFile, swapFile, swap = "memory.max", "memory.swap.max", "0"
	}
	if cg.write(limitFile, n) != nil {
		cg.remove()
		return nil
	}
	_ = cg.write(swapFile, swap) // absent without swap accounting: then there is nothing to bound
	return cg
}

func (cg *memoryCgroup) write(name, value string) error {
	return os.WriteFile(filepath.Join(cg.dir, name), []byte(value), 0)
}

// procsFile is the file a process writes its pid to, to join the cgroup.
func (cg *memoryCgroup) procsFile() string { return filepath.Join(cg.dir, "cgroup.procs") }

// oomKilled reports whether the kernel killed a process of the cgroup for passing its limit.
func (cg *memoryCgroup) oomKilled() bool {
	name := "memory.oom_control"
	if cg.v2 {
		name = "memory.events"
	}
	data, err := os.ReadFile(filepath.Join(cg.dir, name))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// remove deletes the cgroup once the kernel has let its last process go (a killed process leaves
// its cgroup a moment after it was reaped).
func (cg *memoryCgroup) remove() {
	for range 200 {
		if err := os.Remove(cg.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ownMemoryCgroup answers the folder of this process's memory cgroup and whether it is cgroup
// v2's, from /proc/self/cgroup and the mount table.
func ownMemoryCgroup() (dir string, v2, ok bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", false, false
	}
	var v1Path, v2Path string
	hasV2 := false
	for line := range strings.Lines(string(data)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2Path, hasV2 = f[2], true
			continue
		}
		for _, c := range strings.Split(f[1], ",") {
			if c == "memory" {
				v1Path = f[2]
			}
		}
	}
	if v1Path != "" {
		mnt, root, found := cgroupMount(func(fstype, opts string) bool {
			return fstype == "cgroup" && strings.Contains(","+opts+",", ",memory,")
		})
		return underMount(mnt, root, v1Path), false, found
	}
	if !hasV2 {
		return "", false, false
	}
	mnt, root, found := cgroupMount(func(fstype, _ string) bool { return fstype == "cgroup2" })
	return underMount(mnt, root, v2Path), true, found
}

// underMount is the folder of cgroup path p in a hierarchy mounted at mnt from its root.
func underMount(mnt, root, p string) string {
	if root != "/" {
		p = strings.TrimPrefix(p, root)
	}
	return filepath.Join(mnt, filepath.FromSlash(p))
}

// cgroupMount finds the first mount that match accepts, from /proc/self/mountinfo: its mount
// point and the folder of the hierarchy it shows.
func cgroupMount(match func(fstype, superOpts string) bool) (mnt, root string, ok bool) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		left, right, found := strings.Cut(sc.Text(), " - ")
		if !found {
			continue
		}
		l, r := strings.Fields(left), strings.Fields(right)
		if len(l) < 5 || len(r) < 3 || !match(r[0], r[2]) {
			continue
		}
		return l[4], l[3], true
	}
	return "", "", false
}

// applyMemoryBound puts the child under its request's memory bound before it evaluates anything:
// it joins the cgroup made for it, or else (none made, or joining it refused) sets its own
// RLIMIT_AS to its address space so far plus the bound.
func applyMemoryBound(req evalRequest) error {
	if req.Cgroup != "" && os.WriteFile(req.Cgroup, []byte(strconv.Itoa(os.Getpid())), 0) == nil {
		return nil
	}
	if req.AddressSpace == 0 { // a race-enabled child: its own heap watch is all there is
		return nil
	}
	now, err := addressSpace()
	if err != nil {
		return err
	}
	lim := syscall.Rlimit{Cur: now + req.AddressSpace, Max: now + req.AddressSpace}
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
		return fmt.Errorf("set RLIMIT_AS: %w", err)
	}
	return nil
}

// addressSpace is this process's virtual memory size (VmSize), in bytes.
func addressSpace() (uint64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, fmt.Errorf("read address space: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		if rest, ok := strings.CutPrefix(line, "VmSize:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseUint(f[0], 10, 64)
				if err == nil {
					return kb << 10, nil
				}
			}
		}
	}
	return 0, errors.New("read address space: no VmSize in /proc/self/status")
}
