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
// file fails here rather than on a user's Mac. With the shared build cache warm each platform
// takes seconds, and a cold one minutes: under -short it runs only where npm/build.sh has just
// built every platform (VX_NPM_DIST set, as .ci/run does), which leaves that cache warm. `go vet`
// on each platform, which type-checks the tests too, is stress/crossvet.sh.
func TestCrossBuild(t *testing.T) {
	if testing.Short() && os.Getenv("VX_NPM_DIST") == "" {
		t.Skip("-short without VX_NPM_DIST: the cross builds' cache is cold here (minutes a platform); .ci/run builds every platform first")
	}
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
