package pkgscript

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// resolution is one Resolve at work.
type resolution struct {
	t   Task
	inv invocation
	pkg *manifest
	env map[string]string
	// manager is the manager as run (Yarn split into Yarn and Berry); execPath and nodePath are
	// the real paths of its program and of node ("" when node is not found and not needed).
	manager, execPath, nodePath string
	// steps are the scripts run in turn: pre, the script, post; main is the script's index.
	steps []step
	main  int
	// settings are the manager settings read from .npmrc files and pnpm-workspace.yaml.
	settings map[string]string
}

// step is one script run by its own sh.
type step struct {
	event, text string
}

// resolve fills in the resolution; it answers why the manager is needed, "" when it is not.
func (r *resolution) resolve() string {
	text, ok := r.pkg.Scripts[r.inv.script]
	if !ok {
		return fmt.Sprintf("its package.json has no script %q", r.inv.script)
	}
	r.manager = r.inv.manager
	if r.manager == Yarn && r.isBerry() {
		r.manager = Berry
	}
	if why := r.find(); why != "" {
		return why
	}
	r.settings = r.readSettings()
	for _, k := range []string{"script-shell", "shell-emulator", "node-options"} {
		if v, ok := r.setting(k); ok && v != "" && v != "false" {
			return fmt.Sprintf("the manager's %s setting changes how it runs scripts", k)
		}
	}
	pre, post, why := r.hooks(text)
	if why != "" {
		return why
	}
	args := r.inv.args
	switch r.manager {
	case Yarn:
		args = dropFirst(args, "--")
	case Berry:
		if len(args) > 0 {
			return "Yarn berry hands arguments to a script in its own shell"
		}
		if why := r.berryLinker(); why != "" {
			return why
		}
	}
	if pre != "" {
		r.steps = append(r.steps, step{"pre" + r.inv.script, pre})
	}
	r.main = len(r.steps)
	r.steps = append(r.steps, step{r.inv.script, text + r.quoteArgs(args)})
	if post != "" {
		r.steps = append(r.steps, step{"post" + r.inv.script, post})
	}
	for _, s := range r.steps {
		if why := needsManager(s.event, s.text); why != "" {
			return why
		}
	}
	return ""
}

// quoteArgs answers the arguments as the manager appends them to the script's text: each after a
// space, quoted by the manager's rules.
func (r *resolution) quoteArgs(args []string) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteByte(' ')
		if r.manager == PNPM {
			b.WriteString(pnpmQuote(a))
		} else {
			b.WriteString(npmQuote(a))
		}
	}
	return b.String()
}

// dropFirst answers args without the first one equal to word.
func dropFirst(args []string, word string) []string {
	for i, a := range args {
		if a == word {
			return append(args[:i:i], args[i+1:]...)
		}
	}
	return args
}

// hooks answers the pre and post scripts the manager runs around the script ("" for none), or
// why the manager is needed to know.
func (r *resolution) hooks(text string) (pre, post, why string) {
	name := r.inv.script
	pre, post = r.pkg.Scripts["pre"+name], r.pkg.Scripts["post"+name]
	if pre == "" && post == "" {
		return "", "", ""
	}
	switch r.manager {
	case Berry:
		return "", "", "" // Yarn 2 and later run no pre and post scripts
	case NPM, Yarn, Bun:
		if v, ok := r.setting("ignore-scripts"); ok && v != "false" {
			return "", "", "the manager's ignore-scripts setting decides whether its pre and post scripts run"
		}
		return pre, post, ""
	}
	on, known := r.pnpmPrePost()
	if !known {
		return "", "", "the pnpm version that decides whether pre and post scripts run is not known"
	}
	if !on {
		return "", "", ""
	}
	// pnpm leaves out a pre or post script the script's own text names.
	if strings.Contains(text, "pre"+name) {
		pre = ""
	}
	if strings.Contains(text, "post"+name) {
		post = ""
	}
	return pre, post, ""
}

// pnpmPrePost answers whether pnpm runs pre and post scripts: its enable-pre-post-scripts
// setting, else its default (true from pnpm 8, false in pnpm 7); known is false when neither can
// be read.
func (r *resolution) pnpmPrePost() (on, known bool) {
	if v, ok := r.setting("enable-pre-post-scripts"); ok {
		return v == "true", true
	}
	major, ok := packageMajor(filepath.Join(filepath.Dir(filepath.Dir(r.execPath)), "package.json"))
	if !ok {
		return false, false
	}
	return major >= 8, true
}

// packageMajor reads the major version of a package.json.
func packageMajor(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	var v struct{ Version string }
	if json.Unmarshal(b, &v) != nil {
		return 0, false
	}
	major, _, _ := strings.Cut(v.Version, ".")
	n, err := strconv.Atoi(major)
	return n, err == nil
}

// isBerry reports whether the workspace's Yarn is Yarn 2 or later: the root's packageManager
// says so, or, without one, the root holds a .yarnrc.yml (which only those read).
func (r *resolution) isBerry() bool {
	if pm := r.rootPackageManager(); strings.HasPrefix(pm, "yarn@") {
		return !strings.HasPrefix(pm, "yarn@1.")
	}
	_, err := os.Stat(filepath.Join(r.t.Root, ".yarnrc.yml"))
	return err == nil
}

// rootPackageManager is the packageManager field of the workspace root's package.json.
func (r *resolution) rootPackageManager() string {
	if r.t.Root == r.t.Dir {
		return r.pkg.PackageManager
	}
	m, err := readManifest(filepath.Join(r.t.Root, "package.json"))
	if err != nil {
		return ""
	}
	return m.PackageManager
}

// berryLinker answers why Yarn berry is needed: Plug'n'Play (its default linker) resolves
// binaries and modules itself, with no node_modules/.bin to put on PATH.
func (r *resolution) berryLinker() string {
	f, err := os.Open(filepath.Join(r.t.Root, ".yarnrc.yml"))
	if err != nil {
		return "Yarn berry's linker is not known (no .yarnrc.yml): Plug'n'Play resolves binaries itself"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "nodeLinker" {
			if strings.Trim(strings.TrimSpace(v), `"'`) == "node-modules" {
				return ""
			}
			break
		}
	}
	return "Yarn berry's Plug'n'Play linker resolves binaries itself"
}

// find looks the manager and node up on the task's PATH; it answers why the manager is needed
// when either is missing.
func (r *resolution) find() string {
	bin := r.inv.manager
	p, ok := lookPath(bin, r.env["PATH"])
	if !ok {
		return fmt.Sprintf("%s is not on the task's PATH", bin)
	}
	r.execPath = p
	if n, ok := lookPath("node", r.env["PATH"]); ok {
		r.nodePath = n
	} else if r.manager != Bun {
		return "node is not on the task's PATH"
	}
	return ""
}

// lookPath finds name in the folders of path, and answers its real path (symbolic links
// followed, as node's process paths are).
func lookPath(name, path string) (string, bool) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return real, true
		}
		return p, true
	}
	return "", false
}
