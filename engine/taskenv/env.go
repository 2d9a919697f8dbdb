package taskenv

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/mask"
)

// Environment modes of a task (envMode in config).
const (
	// Strict gives a task only what it declares, plus Base: the default.
	Strict = "strict"
	// Loose gives a task all of vx's environment, as vx did before envMode.
	Loose = "loose"
)

// turboBuiltinPassThroughEnv is Turborepo's own list of the variables a task sees in strict mode
// without declaring them: BUILTIN_PASS_THROUGH_ENV of crates/turborepo-env/src/lib.rs in
// github.com/vercel/turborepo, read at commit 06818431a025b7393d8d7de057f23d048a3f8d21 (Turborepo
// 2.x). Kept in its order and spelling so that the two can be compared line by line.
var turboBuiltinPassThroughEnv = []string{
	"HOME", "USER", "TZ", "LANG", "SHELL", "PWD",
	"XDG_RUNTIME_DIR", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
	"CI", "NODE_OPTIONS", "COREPACK_*",
	"LD_LIBRARY_PATH", "DYLD_FALLBACK_LIBRARY_PATH", "LIBPATH", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES",
	"COLORTERM", "TERM", "TERM_PROGRAM", "DISPLAY",
	"TMP", "TEMP",
	// Windows
	"WINDIR", "ProgramFiles", "ProgramFiles(x86)",
	// VSCode, Docker, Docker compose, JetBrains
	"VSCODE_*", "ELECTRON_RUN_AS_NODE",
	"DOCKER_*", "BUILDKIT_*",
	"COMPOSE_*",
	"JB_IDE_*", "JB_INTERPRETER", "_JETBRAINS_TEST_RUNNER_RUN_SCOPE_TYPE",
	// Vercel
	"VERCEL", "VERCEL_*", "NEXT_*", "USE_OUTPUT_FOR_EDGE_FUNCTIONS", "NOW_BUILDER",
	"VC_MICROFRONTENDS_CONFIG_FILE_NAME",
	// GitHub Actions
	"GITHUB_*", "RUNNER_*",
	// Command Prompt casing
	"APPDATA", "PATH", "PROGRAMDATA", "SYSTEMROOT", "SYSTEMDRIVE", "USERPROFILE", "HOMEDRIVE", "HOMEPATH",
	"PNPM_HOME", "NPM_CONFIG_STORE_DIR",
}

// vxBasePassThroughEnv is what vx passes besides Turborepo's list: what a shell, a compiler or a
// package manager reads without anyone declaring it, and what vx itself needs in the supervisor
// it starts in front of each task (a race or coverage build of vx re-executes itself there).
var vxBasePassThroughEnv = []string{
	// the temporary folder and the locale, which Turborepo leaves out
	"TMPDIR", "LC_*", "LANGUAGE",
	// CI markers other than CI and GitHub's: the names tools test to know they run in CI, not the
	// whole of each CI's variables (GitLab's CI_* and Buildkite's BUILDKITE_* hold job tokens)
	"BUILDKITE", "CIRCLECI", "GITLAB_CI", "JENKINS_URL", "TF_BUILD", "TEAMCITY_VERSION", "TRAVIS",
	"APPVEYOR", "CODEBUILD_BUILD_ID", "NETLIFY", "BITBUCKET_BUILD_NUMBER", "DRONE",
	// package managers' own settings
	"npm_config_*", "NPM_CONFIG_*", "YARN_*", "BUN_INSTALL",
	// proxies and certificates
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	// Windows needs these to start a process at all
	"COMSPEC", "PATHEXT", "LOCALAPPDATA",
	// vx's own settings (a task that runs vx sees the same ones) and its test builds' hooks
	"VX_*", "GOCOVERDIR", "GORACE",
}

// Base lists the names (a * matches any run of characters) of the variables every task sees in
// strict mode without declaring them: Turborepo's list, then vx's additions.
func Base() []string {
	return append(append([]string(nil), turboBuiltinPassThroughEnv...), vxBasePassThroughEnv...)
}

// envMatcher answers whether a variable name passes: some include pattern matches it and no
// exclude pattern ("!NAME") does.
type envMatcher struct {
	include, exclude []string
}

func (m *envMatcher) add(patterns ...string) {
	for _, p := range patterns {
		if x, ok := strings.CutPrefix(p, "!"); ok {
			m.exclude = append(m.exclude, x)
		} else {
			m.include = append(m.include, p)
		}
	}
}

func (m *envMatcher) match(name string) bool {
	found := false
	for _, p := range m.include {
		if wildcardMatch(p, name) {
			found = true
			break
		}
	}
	if !found {
		return false
	}
	for _, p := range m.exclude {
		if wildcardMatch(p, name) {
			return false
		}
	}
	return true
}

// wildcardMatch matches name against pattern, where * matches any run of characters (names on
// Windows compare without regard to case, as its environment does).
func wildcardMatch(pattern, name string) bool {
	if runtime.GOOS == "windows" {
		pattern, name = strings.ToUpper(pattern), strings.ToUpper(name)
	}
	return mask.MatchStars(pattern, name)
}

// Mode is the mode a task runs in: its own envMode, else the workspace's, else strict.
func Mode(ws *graph.Workspace, t *graph.Task) string {
	switch {
	case t.EnvMode != "":
		return t.EnvMode
	case ws != nil && ws.EnvMode != "":
		return ws.EnvMode
	}
	return Strict
}

// namesCredential reports whether one of patterns names the credential variable name: spelled
// out, or by a pattern that itself reads as a credential (NPM_TOKEN, *_TOKEN). A broader pattern
// (GITHUB_*, *) does not hand a task a credential.
func namesCredential(patterns []string, name string) bool {
	for _, p := range patterns {
		if strings.HasPrefix(p, "!") || !wildcardMatch(p, name) {
			continue
		}
		if !strings.Contains(p, "*") || mask.IsCredentialName(p) {
			return true
		}
	}
	return false
}

// withheld are the variables of vx's environment no task sees unless it names them: the names
// that read as credentials (mask.IsCredentialName) and those the workspace's remoteCache reads its
// token and signature key from.
func withheld(ws *graph.Workspace, name string) bool {
	if mask.IsCredentialName(name) {
		return true
	}
	if ws != nil && ws.RemoteCache != nil {
		rc := ws.RemoteCache
		if (rc.TokenEnv != "" && wildcardMatch(rc.TokenEnv, name)) ||
			(rc.SignatureKeyEnv != "" && wildcardMatch(rc.SignatureKeyEnv, name)) {
			return true
		}
	}
	return false
}

// Env is the environment a task's command starts with, from environ (vx's): in strict mode
// only the variables the task declares (env, passThroughEnv), the workspace's (env,
// passThroughEnv) and Base; in loose mode all of environ. In both, a credential (withheld)
// passes only when one of those declarations names it (namesCredential). exec.env is set over
// either, its secrets read through getenv.
func Env(ws *graph.Workspace, t *graph.Task, environ []string, getenv func(string) string) []string {
	strict := Mode(ws, t) == Strict
	declared := slices.Concat(t.Env, t.PassThroughEnv)
	if ws != nil {
		declared = slices.Concat(ws.Env, ws.PassThroughEnv, declared)
	}
	var m envMatcher
	if strict {
		m.add(Base()...)
		m.add(declared...)
	}
	set := make(map[string]string, len(t.ExecEnv))
	names := make([]string, 0, len(t.ExecEnv))
	for name, v := range t.ExecEnv {
		if v.Secret != "" {
			set[name] = getenv(v.Secret)
		} else {
			set[name] = v.Value
		}
		names = append(names, name)
	}
	sort.Strings(names)
	env := make([]string, 0, len(environ)+len(names))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := set[name]; over {
			continue
		}
		if strict && !m.match(name) {
			continue
		}
		if withheld(ws, name) && !namesCredential(declared, name) {
			continue
		}
		env = append(env, kv)
	}
	for _, name := range names {
		env = append(env, name+"="+set[name])
	}
	return env
}

// Credentials are the entries of environ that no task gets unless it names them (withheld): the
// same for every task of a run, so found once.
func Credentials(ws *graph.Workspace, environ []string) []string {
	var out []string
	for _, kv := range environ {
		if name, v, _ := strings.Cut(kv, "="); v != "" && withheld(ws, name) {
			out = append(out, kv)
		}
	}
	return out
}

// CredentialValues are the values of the credentials (creds, from Credentials) a task names and
// so is given: they are masked like secrets wherever the run could show them (its log, the
// cache's copy). Only creds are matched against the task's names, never the whole environment.
func CredentialValues(ws *graph.Workspace, t *graph.Task, creds []string) []string {
	if len(creds) == 0 {
		return nil
	}
	var vals []string
	for _, kv := range Env(ws, t, creds, func(string) string { return "" }) {
		if name, v, _ := strings.Cut(kv, "="); v != "" && withheld(ws, name) {
			if _, set := t.ExecEnv[name]; !set {
				vals = append(vals, v)
			}
		}
	}
	return vals
}

// Masker answers the masker of every value a run of tasks masks in what it shows: the workspace's
// secrets, those the tasks read (through getenv) and the credentials of environ they are given,
// then extra (the remote cache's credentials). A secret too short to mask is refused, naming
// its task.
func Masker(ws *graph.Workspace, tasks []*graph.Task, environ []string, getenv func(string) string, extra []string) (*mask.Masker, error) {
	secrets := append([]string(nil), ws.Secrets...)
	creds := Credentials(ws, environ)
	for _, t := range tasks {
		for _, name := range t.SecretNames() {
			if err := mask.Check(name, getenv(name)); err != nil {
				return nil, fmt.Errorf("%s: %w", t.ID, err)
			}
			secrets = append(secrets, getenv(name))
		}
		secrets = append(secrets, CredentialValues(ws, t, creds)...)
	}
	return mask.New(append(secrets, extra...)...), nil
}
