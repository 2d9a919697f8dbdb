// Package pkgscript runs a package script without its package manager: a task whose command is
// `npm run build` (or pnpm's, Yarn's or bun's spelling) runs the script's text through `sh -c` as
// the manager would have run it, with the PATH, the npm_* variables, the pre and post scripts and
// the quoted arguments that manager gives it, and so without the manager's own start-up. Where a
// script needs the manager itself (it calls one, reads its config, or the manager would run it
// otherwise than sh would), Resolve says why, and the task's command runs as written.
package pkgscript

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// The values of the workspace's scripts.runner.
const (
	// RunnerDirect runs a package script's text through sh where the manager is not needed: the
	// default.
	RunnerDirect = "direct"
	// RunnerManager runs every package script through its manager, as the command says.
	RunnerManager = "package-manager"
)

// Task is what Resolve reads of one task.
type Task struct {
	// Command is the task's command, with the arguments after `--` of the run appended.
	Command string
	// Dir is the absolute project folder (where the command runs and its package.json is);
	// Root is the absolute workspace root.
	Dir, Root string
	// Env is the task's environment, as name=value: its PATH is where the manager and node are
	// looked up, and what the script's PATH extends.
	Env []string
	// Runner is the workspace's scripts.runner ("" for the default).
	Runner string
}

// Plan is how a package script runs without its manager.
type Plan struct {
	// Manager is the manager the command names: NPM, PNPM, Yarn, Berry or Bun.
	Manager string
	// Script is the script's name.
	Script string
	// Shell is the text `sh -c` runs: the script's text with its arguments, or, with pre and
	// post scripts, each of them run by a sh of its own in turn.
	Shell string
	// Env is the whole environment of that sh.
	Env []string
}

// Resolve answers how t runs without its manager, or, in why, the reason it runs through its
// manager as written ("" when it does not).
func Resolve(t Task) (plan Plan, why string) {
	switch {
	case t.Runner == RunnerManager:
		return Plan{}, "the workspace sets scripts.runner: 'package-manager'"
	case runtime.GOOS == "windows":
		return Plan{}, "package managers do not run scripts through sh on Windows"
	}
	inv, why := parseInvocation(t.Command)
	if why != "" {
		return Plan{}, why
	}
	pkg, err := readManifest(filepath.Join(t.Dir, "package.json"))
	if err != nil {
		return Plan{}, err.Error()
	}
	r := &resolution{t: t, inv: inv, pkg: pkg, env: envMap(t.Env)}
	if why := r.resolve(); why != "" {
		return Plan{}, why
	}
	return r.plan(), ""
}

// manifest is what a package.json holds that a script's run reads.
type manifest struct {
	Name, Version  string
	Scripts        map[string]string
	PackageManager string
	// fields holds the fields npm_package_* variables are made of (config, engines, bin), as
	// decoded.
	fields map[string]any
}

// readManifest reads a package.json.
func readManifest(path string) (*manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("its package.json cannot be read: %w", err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("its package.json cannot be read: %w", err)
	}
	m := &manifest{Scripts: map[string]string{}, fields: map[string]any{}}
	m.Name, _ = raw["name"].(string)
	m.Version, _ = raw["version"].(string)
	m.PackageManager, _ = raw["packageManager"].(string)
	if s, ok := raw["scripts"].(map[string]any); ok {
		for k, v := range s {
			if text, ok := v.(string); ok {
				m.Scripts[k] = text
			}
		}
	}
	for _, k := range []string{"name", "version", "config", "engines", "bin"} {
		if v, ok := raw[k]; ok {
			m.fields[k] = v
		}
	}
	return m, nil
}

// callsManager finds, in a script's text, what needs the manager itself: a package manager run
// as a command, its config read from npm_config_* variables, or its own path.
var callsManager = regexp.MustCompile(`(^|[^A-Za-z0-9_.@-])(npm|pnpm|yarn|bun)($|[^A-Za-z0-9_-])|npm_config_|npm_execpath`)

// needsManager answers why a script's text needs its manager, "" when it does not.
func needsManager(name, text string) string {
	m := callsManager.FindStringSubmatch(text)
	switch {
	case m == nil:
		return ""
	case m[2] != "":
		return fmt.Sprintf("its script %s calls %s", name, m[2])
	case strings.Contains(m[0], "npm_config_"):
		return fmt.Sprintf("its script %s reads the manager's config ($npm_config_*)", name)
	}
	return fmt.Sprintf("its script %s runs the manager ($npm_execpath)", name)
}

// envMap reads name=value entries; a later entry wins.
func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// EnvRunner is the variable that, set, takes the place of the workspace's scripts.runner.
const EnvRunner = "VX_SCRIPTS_RUNNER"

// RunnerFor answers the runner of a run: EnvRunner's value, else configured (the workspace's
// scripts.runner), else RunnerDirect. A value that is neither runner is refused, named.
func RunnerFor(configured string, getenv func(string) string) (string, error) {
	v := getenv(EnvRunner)
	switch {
	case v == "" && configured == "":
		return RunnerDirect, nil
	case v == "":
		return configured, nil
	case v == RunnerDirect || v == RunnerManager:
		return v, nil
	}
	return "", fmt.Errorf("%s must be %q or %q, not %q", EnvRunner, RunnerDirect, RunnerManager, v)
}
