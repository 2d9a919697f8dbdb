package pkgscript

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// settingKeys are the manager settings that change how a script runs: which shell, whether pre
// and post scripts run, NODE_OPTIONS. Each is read in its .npmrc spelling.
var settingKeys = []string{"script-shell", "shell-emulator", "node-options", "ignore-scripts", "enable-pre-post-scripts"}

// readSettings reads settingKeys from where the managers read them, the nearest first: the
// project's .npmrc, the workspace root's .npmrc and pnpm-workspace.yaml, the user's ~/.npmrc.
// (The environment's npm_config_* variables come before all of them: setting reads them.)
func (r *resolution) readSettings() map[string]string {
	out := map[string]string{}
	files := []string{filepath.Join(r.t.Dir, ".npmrc")}
	if r.t.Root != r.t.Dir {
		files = append(files, filepath.Join(r.t.Root, ".npmrc"))
	}
	for _, f := range files {
		readNpmrc(f, out)
	}
	if r.manager == PNPM {
		readPnpmWorkspace(filepath.Join(r.t.Root, "pnpm-workspace.yaml"), out)
	}
	if home := r.env["HOME"]; home != "" {
		readNpmrc(filepath.Join(home, ".npmrc"), out)
	}
	return out
}

// setting answers one of settingKeys: from the environment (npm_config_KEY in any case, and
// pnpm_config_KEY for pnpm), else from the files readSettings read.
func (r *resolution) setting(key string) (string, bool) {
	env := strings.ReplaceAll(key, "-", "_")
	for name, v := range r.env {
		lower := strings.ToLower(name)
		if lower == "npm_config_"+env || (r.manager == PNPM && lower == "pnpm_config_"+env) {
			return strings.ToLower(strings.TrimSpace(v)), true
		}
	}
	v, ok := r.settings[key]
	return v, ok
}

// readNpmrc adds to out the settingKeys an .npmrc file sets that out does not hold yet.
func readNpmrc(path string, out map[string]string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";") {
			continue
		}
		k = strings.TrimSpace(k)
		if !isSettingKey(k) {
			continue
		}
		if _, seen := out[k]; !seen {
			out[k] = strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`))
		}
	}
}

// readPnpmWorkspace adds to out the settingKeys pnpm-workspace.yaml sets (pnpm 10 reads its
// settings there, in camelCase, at the top level) that out does not hold yet.
func readPnpmWorkspace(path string, out map[string]string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k = kebab(strings.TrimSpace(k))
		if !isSettingKey(k) {
			continue
		}
		if _, seen := out[k]; !seen {
			v, _, _ = strings.Cut(v, " #")
			out[k] = strings.ToLower(strings.Trim(strings.TrimSpace(v), `"'`))
		}
	}
}

func isSettingKey(k string) bool {
	for _, s := range settingKeys {
		if s == k {
			return true
		}
	}
	return false
}

// kebab spells a camelCase key as .npmrc does: enablePrePostScripts → enable-pre-post-scripts.
func kebab(k string) string {
	var b strings.Builder
	for _, c := range k {
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('-')
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}
