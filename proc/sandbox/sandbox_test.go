package sandbox

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/vzn/vx/proc"
)

func TestMain(m *testing.M) {
	// This binary is also the supervisor of the tests' sandboxed children, as vx-sandbox is.
	if len(os.Args) > 1 && os.Args[1] == proc.SuperviseArg {
		syscall.Exit(Main(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}

func TestParsePolicy(t *testing.T) {
	p := Policy{Write: []string{"/w"}, NarrowRead: true, Read: []string{"/r"}}
	args := Args(p)
	if args[0] != policyFlag {
		t.Fatalf("Args = %q", args)
	}
	got, err := parsePolicy(args[1])
	if err != nil || got.Write[0] != "/w" || !got.NarrowRead || got.Read[0] != "/r" || got.Network {
		t.Errorf("parsePolicy(%s) = %+v, %v", args[1], got, err)
	}
	if _, err := parsePolicy(`{"write":["dist"]}`); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("a relative path: %v", err)
	}
	if code := Main([]string{policyFlag}); code != 125 {
		t.Errorf("Main without a policy = %d, want 125", code)
	}
}

func TestVerdictSummary(t *testing.T) {
	none := Verdict{OS: "darwin", NotEnforced: []string{"filesystem: needs Linux", "network: needs Linux"}}
	if s := none.Summary(); !strings.HasPrefix(s, "not enforced (no Landlock): filesystem: needs Linux") {
		t.Errorf("Summary = %q", s)
	}
	if m := none.Missing(true); m != "filesystem: needs Linux" {
		t.Errorf("Missing(network) = %q", m)
	}
	if m := none.Missing(false); m != "filesystem: needs Linux; network: needs Linux" {
		t.Errorf("Missing(no network) = %q", m)
	}
	all := Verdict{OS: "linux", LandlockABI: 7, UserNamespaces: true, Namespace: "user",
		Enforced: Enforced{Filesystem: true, TCP: true, Network: true}}
	if s := all.Summary(); s != "enforced: filesystem, TCP, all network (Landlock ABI 7, user namespaces yes)" {
		t.Errorf("Summary = %q", s)
	}
	if m := all.Missing(false); m != "" {
		t.Errorf("Missing = %q", m)
	}
}
