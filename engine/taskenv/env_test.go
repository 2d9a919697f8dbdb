package taskenv

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

func TestEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/me", "LC_ALL=C", "npm_config_cache=/c", "UNDECLARED=x",
		"DECLARED=d", "PT_ONE=1", "PT_SECRETISH=s", "GLOBAL=g", "GLOBAL_PT=gp", "OVER=environ"}
	ws := &graph.Workspace{Env: []string{"GLOBAL"}, PassThroughEnv: []string{"GLOBAL_PT"}}
	task := &graph.Task{Env: []string{"DECLARED"}, PassThroughEnv: []string{"PT_*", "!PT_SECRETISH"},
		ExecEnv: map[string]graph.EnvValue{"OVER": {Value: "exec"}, "TOKEN": {Secret: "DEPLOY_TOKEN"}}}
	getenv := func(k string) string { return map[string]string{"DEPLOY_TOKEN": "t0k"}[k] }

	got := Env(ws, task, environ, getenv)
	want := []string{"PATH=/bin", "HOME=/home/me", "LC_ALL=C", "npm_config_cache=/c", "DECLARED=d", "PT_ONE=1",
		"GLOBAL=g", "GLOBAL_PT=gp", "OVER=exec", "TOKEN=t0k"}
	if !slices.Equal(got, want) {
		t.Errorf("strict env:\n got %v\nwant %v", got, want)
	}

	task.EnvMode = Loose
	got = Env(ws, task, environ, getenv)
	// PT_SECRETISH reads as a credential: a loose task gets it only if it names it.
	if !slices.Contains(got, "UNDECLARED=x") || slices.Contains(got, "PT_SECRETISH=s") || !slices.Contains(got, "OVER=exec") ||
		slices.Contains(got, "OVER=environ") {
		t.Errorf("loose env: %v", got)
	}
	task.EnvMode = ""
	ws.EnvMode = Loose
	if got := Env(ws, task, environ, getenv); !slices.Contains(got, "UNDECLARED=x") {
		t.Errorf("workspace loose: %v", got)
	}
}

func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, name string
		want          bool
	}{
		{"PATH", "PATH", true}, {"PATH", "PATHX", false}, {"LC_*", "LC_ALL", true}, {"LC_*", "LANG", false},
		{"*_TOKEN", "NPM_TOKEN", true}, {"A*B*C", "AxxBxxC", true}, {"A*B*C", "AxxC", false}, {"*", "ANY", true},
		{"ProgramFiles(x86)", "ProgramFiles(x86)", true},
	} {
		if got := wildcardMatch(tc.pattern, tc.name); got != tc.want {
			t.Errorf("wildcardMatch(%q, %q) = %v", tc.pattern, tc.name, got)
		}
	}
}

// The base holds Turborepo's list and what the issue names besides: the temporary folder, the
// locale, the package managers' settings, proxies and certificates, and vx's own test hooks.
func TestBaseEnv(t *testing.T) {
	var m envMatcher
	m.add(Base()...)
	for _, name := range []string{"PATH", "HOME", "SHELL", "TERM", "LANG", "SYSTEMROOT", "COREPACK_HOME", "GITHUB_ACTIONS",
		"TMPDIR", "LC_ALL", "npm_config_cache", "HTTPS_PROXY", "no_proxy", "SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS",
		"VX_CONCURRENCY", "GOCOVERDIR", "GITLAB_CI"} {
		if !m.match(name) {
			t.Errorf("%s is not in the base", name)
		}
	}
	for _, name := range []string{"AWS_SECRET_ACCESS_KEY", "NPM_TOKEN", "CI_JOB_TOKEN", "BUILDKITE_AGENT_ACCESS_TOKEN", "NODE_ENV"} {
		if m.match(name) {
			t.Errorf("%s is in the base", name)
		}
	}
}

// BenchmarkEnv is one task's environment in strict mode from a CI runner's environment of 60
// variables, what each task of a cold run pays.
func BenchmarkEnv(b *testing.B) {
	environ := []string{"PATH=/usr/bin:/bin", "HOME=/home/ci", "LANG=C.UTF-8", "TERM=xterm", "CI=true", "USER=ci"}
	for i := range 54 {
		environ = append(environ, fmt.Sprintf("RUNNER_VAR_%d=value", i))
	}
	ws := &graph.Workspace{}
	t := &graph.Task{ID: "p#build", Env: []string{"NODE_ENV"}, PassThroughEnv: []string{"AWS_*"}}
	b.ReportAllocs()
	for b.Loop() {
		Env(ws, t, environ, func(string) string { return "" })
	}
}
