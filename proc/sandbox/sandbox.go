// Package sandbox confines a task: its filesystem writes to its declared outputs (Landlock), its
// reads where it declares `read`, and its network to nothing (Landlock's TCP rules and a network
// namespace of its own), unprivileged, on Linux.
//
// A sandbox is applied by the task's supervisor (proc.Supervisor), the last process of vx before
// the task's shell: it restricts the thread that forks the task and leaves itself free to reap and
// report. That supervisor is a small program of its own, cmd/vx-sandbox, found next to the vx
// executable (Main is all of it), or vx itself (`vx __supervise`) where the helper is absent.
// The network namespace is made when the supervisor is started (Attr), by vx, which can still
// write the new user namespace's id maps.
//
// Probe answers what the host can enforce. Elsewhere than Linux nothing is enforced: Probe says
// so, and the runner warns (or refuses a sandbox declared required).
package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vzn/vx/proc"
)

// HelperName is the file name of the sandbox helper program, next to the vx executable.
const HelperName = "vx-sandbox"

// HelperFor answers the supervisor program vx starts its tasks under: helper when set (vx's
// VX_SANDBOX_HELPER), else vx-sandbox next to the running executable when it is there, else ""
// (vx itself then: `vx __supervise`, which costs a start of the whole of vx per task).
func HelperFor(helper string) string {
	if helper != "" {
		return helper
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	p := filepath.Join(filepath.Dir(exe), HelperName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// policyFlag is the supervisor option that carries a Policy, as JSON.
const policyFlag = "--sandbox"

// Policy is what one sandboxed task may do: absolute paths, resolved by the runner.
type Policy struct {
	// Write lists the folders (everything beneath them) and files the task may write, create and
	// remove: its outputs' folders, its `write` folders, its TMPDIR.
	Write []string `json:"write"`
	// NarrowRead makes reads allowed only beneath Read (and Write); otherwise the task reads
	// everywhere, as it would unsandboxed.
	NarrowRead bool     `json:"narrowRead,omitempty"`
	Read       []string `json:"read,omitempty"`
	// Network leaves the network open; otherwise TCP bind and connect are denied (Landlock ABI
	// 4+), abstract unix sockets outside the sandbox cannot be reached (ABI 6+), and Attr puts
	// the task in a network namespace of its own where the host allows one.
	Network bool `json:"network,omitempty"`
}

// Args are the supervisor options that carry p (proc.Supervisor.Args).
func Args(p Policy) []string {
	data, _ := json.Marshal(p) // a struct of strings and booleans always encodes
	return []string{policyFlag, string(data)}
}

// devices are the device files every sandboxed task may write (and use ioctls on): the null and
// zero sinks, the terminal.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/ptmx", "/dev/pts"}

// systemReadDirs are the folders a task that narrows its reads may still read and execute from:
// the system's toolchains, libraries and configuration.
var systemReadDirs = []string{"/bin", "/sbin", "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	"/nix", "/snap", "/proc", "/sys", "/dev", "/run", "/var/lib", "/usr/local"}

// Main is the supervisor program's main, given what follows proc.SuperviseArg on its command line:
// `[--sandbox POLICY] [--report-fd N] -- PROGRAM [ARGS…]`. It returns the exit status (see
// proc.Supervise). Both cmd/vx-sandbox and `vx __supervise` are this.
func Main(args []string) int {
	var opts proc.SuperviseOptions
	if len(args) > 0 && args[0] == policyFlag {
		if len(args) < 2 {
			fmt.Fprintf(os.Stderr, "vx %s: %s needs a policy\n", proc.SuperviseArg, policyFlag)
			return 125
		}
		p, err := parsePolicy(args[1])
		if err != nil {
			fmt.Fprintf(os.Stderr, "vx %s: %v\n", proc.SuperviseArg, err)
			return 125
		}
		opts.Restrict = func() error { return restrict(p) }
		args = args[2:]
	}
	return proc.SuperviseWith(args, opts)
}

func parsePolicy(s string) (Policy, error) {
	var p Policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, fmt.Errorf("%s: %w", policyFlag, err)
	}
	for _, path := range append(append([]string{}, p.Write...), p.Read...) {
		if !strings.HasPrefix(path, "/") {
			return p, fmt.Errorf("%s: %q is not an absolute path", policyFlag, path)
		}
	}
	return p, nil
}

// Verdict is what this host enforces of a sandbox, as `vx info` reports it.
type Verdict struct {
	// OS is runtime.GOOS.
	OS string `json:"os"`
	// LandlockABI is the kernel's Landlock ABI version; 0 for none (or not Linux).
	LandlockABI int `json:"landlockAbi"`
	// UserNamespaces reports that an unprivileged process can make a user namespace (and in it a
	// network namespace).
	UserNamespaces bool `json:"userNamespaces"`
	// Namespace is how a task gets a network namespace of its own: "user" (a user namespace
	// with it, unprivileged), "net" (vx is privileged: no user namespace, so a task keeps its
	// powers over files), or "" (none).
	Namespace string `json:"namespace"`
	// Enforced says what is enforced: writes (and narrowed reads), TCP bind and connect, and all
	// network (UDP and DNS too, through the namespace).
	Enforced Enforced `json:"enforced"`
	// NotEnforced says, for each part that is not, why.
	NotEnforced []string `json:"notEnforced"`
}

// Enforced is the parts of a sandbox a host enforces.
type Enforced struct {
	Filesystem bool `json:"filesystem"`
	TCP        bool `json:"tcp"`
	Network    bool `json:"network"`
}

// Summary is the verdict in one line.
func (v Verdict) Summary() string {
	var on []string
	if v.Enforced.Filesystem {
		on = append(on, "filesystem")
	}
	if v.Enforced.TCP {
		on = append(on, "TCP")
	}
	if v.Enforced.Network {
		on = append(on, "all network")
	}
	s := fmt.Sprintf("Landlock ABI %d, user namespaces %s", v.LandlockABI, yesNo(v.UserNamespaces))
	if v.LandlockABI == 0 {
		s = "no Landlock"
	}
	if len(on) == 0 {
		return "not enforced (" + s + "): " + strings.Join(v.NotEnforced, "; ")
	}
	s = "enforced: " + strings.Join(on, ", ") + " (" + s + ")"
	if len(v.NotEnforced) > 0 {
		s += "; not enforced: " + strings.Join(v.NotEnforced, "; ")
	}
	return s
}

// Missing says why a sandbox that declares network as given cannot be enforced whole here; ""
// when it can.
func (v Verdict) Missing(network bool) string {
	var why []string
	if !v.Enforced.Filesystem {
		why = append(why, v.reason("filesystem"))
	}
	if !network && !v.Enforced.TCP && !v.Enforced.Network {
		why = append(why, v.reason("network"))
	}
	return strings.Join(why, "; ")
}

// reason is the NotEnforced line about part.
func (v Verdict) reason(part string) string {
	for _, r := range v.NotEnforced {
		if strings.HasPrefix(r, part) {
			return r
		}
	}
	return part + ": not enforced"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Devices answers the device files every sandboxed task may write (see devices); the list is the
// caller's.
func Devices() []string { return slices.Clone(devices) }

// SystemReadDirs answers the folders a task that narrows its reads may still read and execute from
// (see systemReadDirs); the list is the caller's.
func SystemReadDirs() []string { return slices.Clone(systemReadDirs) }
