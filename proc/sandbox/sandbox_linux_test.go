package sandbox

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vzn/vx/proc"
)

// run runs script under a supervisor (this test binary) applying p, with the namespaces v allows.
func run(t *testing.T, p Policy, v Verdict, script string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	sup := &proc.Supervisor{Path: "/proc/self/exe", Name: "sandbox.test", Args: Args(p), Attr: Attr(p, v)}
	res, err := proc.Run(context.Background(), proc.Spec{Shell: script, Env: []string{"PATH=" + os.Getenv("PATH")},
		Stdout: &out, Stderr: &out, Supervisor: sup})
	if err != nil {
		t.Fatalf("run %q: %v\n%s", script, err, out.String())
	}
	return out.String(), res.ExitCode
}

func TestRestrictWrites(t *testing.T) {
	t.Parallel()
	v := Probe()
	if !v.Enforced.Filesystem {
		t.Skip("this host has no Landlock")
	}
	allowed, other := t.TempDir(), t.TempDir()
	out, code := run(t, Policy{Write: []string{allowed}, Network: true}, v,
		`echo a > "`+allowed+`/in.txt" && mkdir "`+allowed+`/sub" && echo b > /dev/null && cat /etc/hostname >/dev/null && `+
			`if echo c > "`+other+`/out.txt"; then exit 3; fi`)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("the denied write printed no EACCES:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(other, "out.txt")); err == nil {
		t.Errorf("a write outside the policy got through")
	}
	if data, err := os.ReadFile(filepath.Join(allowed, "in.txt")); err != nil || string(data) != "a\n" {
		t.Errorf("the allowed write: %q %v", data, err)
	}
}

func TestRestrictReads(t *testing.T) {
	t.Parallel()
	v := Probe()
	if !v.Enforced.Filesystem {
		t.Skip("this host has no Landlock")
	}
	readable, hidden := t.TempDir(), t.TempDir()
	for _, dir := range []string{readable, hidden} {
		if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := Policy{Write: []string{t.TempDir()}, NarrowRead: true, Read: append([]string{readable}, systemReadDirs...), Network: true}
	out, code := run(t, p, v, `cat "`+readable+`/f.txt" && if cat "`+hidden+`/f.txt"; then exit 3; fi`)
	if code != 0 || !strings.Contains(out, "Permission denied") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// Without network, the task has a network namespace of its own: only a loopback, down. With a
// user namespace (as an unprivileged vx makes it), its user is itself.
func TestNetworkNamespace(t *testing.T) {
	t.Parallel()
	v := Probe()
	for _, ns := range []string{"user", "net"} {
		if ns == "user" && !v.UserNamespaces || ns == "net" && v.Namespace != "net" {
			continue
		}
		vv := v
		vv.Namespace = ns
		out, code := run(t, Policy{Write: []string{t.TempDir()}}, vv, `cat /proc/self/net/dev; id -u`)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if code != 0 || len(lines) != 4 || !strings.HasPrefix(strings.TrimSpace(lines[2]), "lo:") {
			t.Errorf("%s namespace: exit %d, want only lo:\n%s", ns, code, out)
		} else if lines[3] != strconv.Itoa(os.Getuid()) {
			t.Errorf("%s namespace: uid %s inside, want %d", ns, lines[3], os.Getuid())
		}
	}
	out, _ := run(t, Policy{Write: []string{t.TempDir()}, Network: true}, v, `cat /proc/self/net/dev`)
	if strings.Count(out, "\n") < 3 && v.Namespace != "" {
		// A host with only a loopback cannot tell; one with an interface must show it.
		t.Logf("network: true shows only %q", out)
	}
}
