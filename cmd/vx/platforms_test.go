package main

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// crossPlatforms are the systems vx must build for besides the one the tests run on, pure Go.
var crossPlatforms = []struct{ goos, goarch string }{
	{"darwin", "amd64"},
	{"darwin", "arm64"},
	{"windows", "amd64"},
	{"windows", "arm64"},
	{"linux", "arm64"},
	{"linux", "amd64"},
}

// TestCrossBuild builds vx for every platform, so that Linux-only code outside a build-tagged
// file fails here rather than on a user's Mac. It runs under -short too: with the shared build
// cache warm each platform takes seconds (a cold one is over a minute). `go vet` on each
// platform, which type-checks the tests too, is stress/crossvet.sh.
func TestCrossBuild(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	for _, p := range crossPlatforms {
		t.Run(p.goos+"_"+p.goarch, func(t *testing.T) {
			cmd := exec.Command(gobin, "build", "-o", os.DevNull, ".")
			cmd.Env = append(os.Environ(), "GOOS="+p.goos, "GOARCH="+p.goarch, "CGO_ENABLED=0", "GOFLAGS=")
			began := time.Now()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("GOOS=%s GOARCH=%s go build: %v\n%s", p.goos, p.goarch, err, out)
			}
			t.Logf("built in %s", time.Since(began).Round(time.Millisecond))
		})
	}
}
