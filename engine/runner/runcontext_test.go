package runner

import (
	"runtime"
	"testing"
)

// runContext names the CI service from the variable its runners set, counts a bare CI=true as
// CI with no provider, and nothing as a laptop; outside git the commit and branch stay empty.
func TestRunContextNamesTheCI(t *testing.T) {
	for _, c := range []struct {
		env      map[string]string
		ci       bool
		provider string
	}{
		{map[string]string{}, false, ""},
		{map[string]string{"CI": "false"}, false, ""},
		{map[string]string{"CI": "true"}, true, ""},
		{map[string]string{"CI": "true", "GITHUB_ACTIONS": "true"}, true, "github-actions"},
		{map[string]string{"GITLAB_CI": "true"}, true, "gitlab"},
		{map[string]string{"BUILDKITE": "true", "CI": "true"}, true, "buildkite"},
	} {
		rc := runContext(t.TempDir(), "1.2.3", func(k string) string { return c.env[k] })
		if rc.CI != c.ci || rc.CIProvider != c.provider {
			t.Errorf("env %v: ci %v provider %q, want %v %q", c.env, rc.CI, rc.CIProvider, c.ci, c.provider)
		}
		if rc.OS != runtime.GOOS || rc.Arch != runtime.GOARCH || rc.VxVersion != "1.2.3" || rc.CommitSHA != "" || rc.Branch != "" {
			t.Errorf("env %v: %+v", c.env, rc)
		}
	}
}
