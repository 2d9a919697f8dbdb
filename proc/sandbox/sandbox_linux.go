package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Access rights, Landlock's names: what reading is, what writing is (creating, removing, renaming,
// truncating included), and the part of each that applies to a file rather than a folder.
const (
	readRights  = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	writeRights = ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeChar |
		ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeBlock |
		ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	fileRights   = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	deviceRights = ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
)

// restrict applies p to the calling thread (locked by the caller): no_new_privs, then a Landlock
// domain, best effort for the kernel's ABI. The thread's children inherit both.
func restrict(p Policy) error {
	handled := landlock.AccessFSSet(writeRights)
	if p.NarrowRead {
		handled |= readRights
	}
	cfg := landlock.Config{HandledAccessFS: handled}
	if !p.Network {
		cfg.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
		cfg.Scoped = ll.ScopeAbstractUnixSocket
	}
	var rules []landlock.Rule
	add := func(rights landlock.AccessFSSet, paths []string) {
		for _, path := range paths {
			fi, err := os.Stat(path)
			if err != nil {
				continue // nothing there to allow
			}
			r := rights & handled
			if !fi.IsDir() {
				r &= fileRights
			}
			if r != 0 {
				rules = append(rules, landlock.PathAccess(r, path).IgnoreIfMissing())
			}
		}
	}
	add(handled, p.Write)
	add(deviceRights|readRights, devices)
	if p.NarrowRead {
		add(readRights, p.Read)
	}
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if fd < 0 {
		return nil // no Landlock here: nothing to apply
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("sandbox: landlock_restrict_self: %w", err)
	}
	return nil
}

// Probe answers what this host enforces. It starts one short process to learn whether a network
// namespace can be made.
func Probe() Verdict {
	v := Verdict{OS: runtime.GOOS, NotEnforced: []string{}}
	if abi, err := ll.LandlockGetABIVersion(); err == nil && abi > 0 {
		v.LandlockABI = abi
	}
	v.UserNamespaces = canClone(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET)
	switch {
	case os.Geteuid() == 0 && canClone(syscall.CLONE_NEWNET):
		v.Namespace = "net"
	case v.UserNamespaces:
		v.Namespace = "user"
	}
	v.Enforced.Filesystem = v.LandlockABI >= 1
	v.Enforced.TCP = v.LandlockABI >= 4
	v.Enforced.Network = v.Namespace != ""
	if !v.Enforced.Filesystem {
		v.NotEnforced = append(v.NotEnforced, "filesystem: this kernel has no Landlock (not built in, or not in the lsm= boot list)")
	}
	if !v.Enforced.TCP {
		v.NotEnforced = append(v.NotEnforced, fmt.Sprintf("network (TCP): Landlock ABI %d < 4 has no network rules", v.LandlockABI))
	}
	if !v.Enforced.Network {
		v.NotEnforced = append(v.NotEnforced, "network (UDP, DNS): no network namespace: unprivileged user namespaces are not allowed here "+
			"(kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor restriction)")
	}
	return v
}

// canClone reports whether a child can be started in new namespaces of the given kinds (with the
// id maps a user namespace needs).
func canClone(flags uintptr) bool {
	path := "/bin/true"
	if _, err := os.Stat(path); err != nil {
		path = "/usr/bin/true"
	}
	attr := &syscall.SysProcAttr{Cloneflags: flags}
	if flags&syscall.CLONE_NEWUSER != 0 {
		mapIDs(attr)
	}
	pid, err := syscall.ForkExec(path, []string{"true"}, &syscall.ProcAttr{Sys: attr})
	if err != nil {
		return false
	}
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err != syscall.EINTR {
			return err == nil && ws.Exited() && ws.ExitStatus() == 0
		}
	}
}

// mapIDs maps the caller's own user and group in the new user namespace to themselves: files keep
// their owner, and `id` says the same inside as outside.
func mapIDs(attr *syscall.SysProcAttr) {
	uid, gid := os.Getuid(), os.Getgid()
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
}

// Attr answers the proc.Supervisor.Attr that starts the supervisor of a task under p in a network
// namespace of its own, where v allows one and p asks for no network; nil otherwise.
func Attr(p Policy, v Verdict) func(*syscall.SysProcAttr) {
	if p.Network || v.Namespace == "" {
		return nil
	}
	user := v.Namespace == "user"
	return func(attr *syscall.SysProcAttr) {
		attr.Cloneflags |= syscall.CLONE_NEWNET
		if user {
			attr.Cloneflags |= syscall.CLONE_NEWUSER
			mapIDs(attr)
		}
	}
}
