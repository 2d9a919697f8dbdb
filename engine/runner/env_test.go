package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
)

func TestTaskEnv(t *testing.T) {
	environ := []string{"PATH=/bin", "HOME=/home/me", "LC_ALL=C", "npm_config_cache=/c", "UNDECLARED=x",
		"DECLARED=d", "PT_ONE=1", "PT_SECRETISH=s", "GLOBAL=g", "GLOBAL_PT=gp", "OVER=environ"}
	ws := &graph.Workspace{Env: []string{"GLOBAL"}, PassThroughEnv: []string{"GLOBAL_PT"}}
	task := &graph.Task{Env: []string{"DECLARED"}, PassThroughEnv: []string{"PT_*", "!PT_SECRETISH"},
		ExecEnv: map[string]graph.EnvValue{"OVER": {Value: "exec"}, "TOKEN": {Secret: "DEPLOY_TOKEN"}}}
	getenv := func(k string) string { return map[string]string{"DEPLOY_TOKEN": "t0k"}[k] }

	got := TaskEnv(ws, task, environ, getenv)
	want := []string{"PATH=/bin", "HOME=/home/me", "LC_ALL=C", "npm_config_cache=/c", "DECLARED=d", "PT_ONE=1",
		"GLOBAL=g", "GLOBAL_PT=gp", "OVER=exec", "TOKEN=t0k"}
	if !slices.Equal(got, want) {
		t.Errorf("strict env:\n got %v\nwant %v", got, want)
	}

	task.EnvMode = EnvLoose
	got = TaskEnv(ws, task, environ, getenv)
	// PT_SECRETISH reads as a credential: a loose task gets it only if it names it.
	if !slices.Contains(got, "UNDECLARED=x") || slices.Contains(got, "PT_SECRETISH=s") || !slices.Contains(got, "OVER=exec") ||
		slices.Contains(got, "OVER=environ") {
		t.Errorf("loose env: %v", got)
	}
	task.EnvMode = ""
	ws.EnvMode = EnvLoose
	if got := TaskEnv(ws, task, environ, getenv); !slices.Contains(got, "UNDECLARED=x") {
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

// A task that prints a variable nobody declared prints nothing under the default (strict) mode,
// and its value under envMode: 'loose'.
func TestUndeclaredVariable(t *testing.T) {
	for mode, want := range map[string]string{"": "undeclared=[] declared=[d] path=[set]", EnvLoose: "undeclared=[s] declared=[d] path=[set]"} {
		f := newFixture(t)
		p := f.project("p")
		f.task(p, "show", `echo "undeclared=[$UNDECLARED_VAR] declared=[$DECLARED_ENV] path=[${PATH:+set}]"`, func(t *graph.Task) {
			t.EnvMode, t.Env, t.Cache = mode, []string{"DECLARED_ENV"}, false
		})
		_, out := f.run([]string{"p#show"}, func(o *Options) {
			o.Environ = []string{"PATH=/usr/bin:/bin", "DECLARED_ENV=d", "UNDECLARED_VAR=s"}
		})
		if !strings.Contains(out, want) {
			t.Errorf("envMode %q: output %q, want %q", mode, out, want)
		}
	}
}

// The base holds Turborepo's list and what the issue names besides: the temporary folder, the
// locale, the package managers' settings, proxies and certificates, and vx's own test hooks.
func TestBaseEnv(t *testing.T) {
	var m envMatcher
	m.add(BaseEnv()...)
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

// No task sees vx's own credentials, in strict mode or loose: not VX_REMOTE_CACHE_TOKEN (which
// the VX_* base rule matched), not the variables remoteCache.tokenEnv and signatureKeyEnv name,
// not a base name that reads as a credential (GITHUB_TOKEN through GITHUB_*, npm_config__authToken
// through npm_config_*), not NPM_TOKEN in loose mode. A task whose passThroughEnv names one gets
// it; a broad pattern (GITHUB_*) is not naming it.
func TestTaskNeverSeesCredentials(t *testing.T) {
	environ := []string{"PATH=/usr/bin:/bin", "VX_REMOTE_CACHE_TOKEN=vxtok", "VX_LOG=warn", "GITHUB_TOKEN=ghtok",
		"GITHUB_REF=main", "NPM_TOKEN=npmtok", "npm_config__authToken=authtok", "npm_config__auth=basic",
		"NPM_CONFIG__AUTH=upper", "npm_config_cache=/c", "CACHE_KEY=cachekey", "SIG_KEY=sigkey",
		"AWS_SECRET_ACCESS_KEY=aws", "GIT_AUTHOR_NAME=me"}
	const show = `env | grep -E '^(VX_|GITHUB_|NPM_|npm_config_|CACHE_KEY|SIG_KEY|AWS_|GIT_)' | sort | tr '\n' ' '`
	for _, tc := range []struct {
		mode        string
		passThrough []string
		want        string
	}{
		{"", []string{"GITHUB_*"}, "GITHUB_REF=main VX_LOG=warn npm_config_cache=/c "},
		{EnvLoose, nil, "GITHUB_REF=main GIT_AUTHOR_NAME=me VX_LOG=warn npm_config_cache=/c "},
		{"", []string{"NPM_TOKEN", "CACHE_KEY", "*_AUTHTOKEN", "npm_config__auth*"},
			// named, given, and masked as secrets are
			"CACHE_KEY=*** GITHUB_REF=main NPM_TOKEN=*** VX_LOG=warn npm_config__auth=*** npm_config__authToken=*** npm_config_cache=/c "},
		{EnvLoose, []string{"SIG_KEY", "GITHUB_TOKEN"},
			"GITHUB_REF=main GITHUB_TOKEN=*** GIT_AUTHOR_NAME=me SIG_KEY=*** VX_LOG=warn npm_config_cache=/c "},
	} {
		f := newFixture(t)
		f.ws.RemoteCache = &graph.RemoteCache{TokenEnv: "CACHE_KEY", SignatureKeyEnv: "SIG_KEY"}
		p := f.project("p")
		f.task(p, "show", show, func(t *graph.Task) {
			t.EnvMode, t.PassThroughEnv, t.Cache = tc.mode, tc.passThrough, false
		})
		_, out := f.run([]string{"p#show"}, func(o *Options) { o.Environ = environ })
		if !strings.Contains(out, tc.want) {
			t.Errorf("envMode %q, passThroughEnv %q: task saw\n%s\nwant %q", tc.mode, tc.passThrough, out, tc.want)
		}
	}
}

// A credential a task names is given to it, and masked in what the run shows and keeps of its
// output, as a secret is.
func TestNamedCredentialMasked(t *testing.T) {
	f := newFixture(t)
	p := f.project("p")
	f.task(p, "publish", `echo "npm [$NPM_TOKEN] ref [$GITHUB_REF]"`, func(t *graph.Task) {
		t.PassThroughEnv = []string{"NPM_TOKEN", "GITHUB_*"}
	})
	_, out := f.run([]string{"p#publish"}, func(o *Options) {
		o.Environ = []string{"PATH=/usr/bin:/bin", "NPM_TOKEN=npm-tok-7f3a", "GITHUB_REF=main"}
	})
	if !strings.Contains(out, "npm [***] ref [main]") || strings.Contains(out, "npm-tok-7f3a") {
		t.Errorf("output %q, want the token masked", out)
	}
}
