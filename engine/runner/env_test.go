package runner

import (
	"strings"
	"testing"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/taskenv"
)

// A task that prints a variable nobody declared prints nothing under the default (strict) mode,
// and its value under envMode: 'loose'.
func TestUndeclaredVariable(t *testing.T) {
	for mode, want := range map[string]string{"": "undeclared=[] declared=[d] path=[set]", taskenv.Loose: "undeclared=[s] declared=[d] path=[set]"} {
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
	const show = `env | grep -E '^(VX_|GITHUB_|NPM_|npm_config_|CACHE_KEY|SIG_KEY|AWS_|GIT_)' | grep -v '^VX_OUTER_' | sort | tr '\n' ' '`
	for _, tc := range []struct {
		mode        string
		passThrough []string
		want        string
	}{
		{"", []string{"GITHUB_*"}, "GITHUB_REF=main VX_LOG=warn npm_config_cache=/c "},
		{taskenv.Loose, nil, "GITHUB_REF=main GIT_AUTHOR_NAME=me VX_LOG=warn npm_config_cache=/c "},
		{"", []string{"NPM_TOKEN", "CACHE_KEY", "*_AUTHTOKEN", "npm_config__auth*"},
			// named, given, and masked as secrets are
			"CACHE_KEY=*** GITHUB_REF=main NPM_TOKEN=*** VX_LOG=warn npm_config__auth=*** npm_config__authToken=*** npm_config_cache=/c "},
		{taskenv.Loose, []string{"SIG_KEY", "GITHUB_TOKEN"},
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
