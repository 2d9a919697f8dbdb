// Package statedirs resolves where a workspace keeps its state: the store every checkout of its
// repository shares (the content store, the cache entries, the durations and peaks the scheduler
// orders by, the per-key locks) and the checkout's own folder (run history, stat cache, watcher
// socket, task locks), each with the source that chose it.
//
// The package only answers paths; it creates nothing and opens nothing.
package statedirs

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
)

// Source says what chose a folder.
type Source string

const (
	// SourceDefault: nothing named the folder; the default applies.
	SourceDefault Source = "default"
	// SourceConfig: cacheDir in vx.workspace.ts.
	SourceConfig Source = "config"
	// SourceFlag: the --cache-dir flag.
	SourceFlag Source = "flag"
	// SourceEnv: VX_CACHE_DIR or VX_STATE_DIR.
	SourceEnv Source = "env"
	// SourceNoUserCache: the user has no cache folder (no HOME, no XDG_CACHE_HOME), so the shared
	// store is the checkout's own folder and nothing is shared.
	SourceNoUserCache Source = "no user cache folder"
)

// CacheDirEnv moves the shared store; StateDirEnv moves the checkout's own state folder.
const (
	CacheDirEnv = "VX_CACHE_DIR"
	StateDirEnv = "VX_STATE_DIR"
)

// CheckoutFolder is the checkout's own state folder under the workspace root by default.
const CheckoutFolder = ".vx"

// Dirs are a workspace's two state folders, absolute and clean, with what chose each.
type Dirs struct {
	// Shared is the store every checkout of the repository shares.
	Shared string `json:"shared"`
	// Checkout is this checkout's own state folder.
	Checkout string `json:"checkout"`
	// SharedSource and CheckoutSource say what chose each.
	SharedSource   Source `json:"sharedSource"`
	CheckoutSource Source `json:"checkoutSource"`
	// RepositoryID names the repository in the default shared folder ("" when the shared folder
	// was named by a flag, the environment or the config).
	RepositoryID string `json:"repositoryId,omitempty"`
}

// Input is what Resolve chooses from. Precedence for the shared store: the flag, then
// VX_CACHE_DIR, then the config's cacheDir, then the default; for the checkout's folder:
// VX_STATE_DIR, then root/.vx. A relative path is taken from Root.
type Input struct {
	// Root is the workspace root (absolute).
	Root string
	// Flag is --cache-dir ("" when not given).
	Flag string
	// Config is cacheDir from vx.workspace.ts ("" when not set).
	Config string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// GOOS chooses the user cache folder's convention; "" means runtime.GOOS.
	GOOS string
}

func (in Input) getenv(k string) string {
	if in.Getenv == nil {
		return os.Getenv(k)
	}
	return in.Getenv(k)
}

// Resolve answers the workspace's two state folders. Where the default shared folder is needed and
// the user has no cache folder (no HOME and no XDG_CACHE_HOME, say), the shared store is the
// checkout's own folder (SourceNoUserCache): nothing is shared, and nothing fails.
func Resolve(in Input) Dirs {
	d := Dirs{Checkout: Checkout(in.Root, in.Getenv), CheckoutSource: SourceDefault}
	if in.getenv(StateDirEnv) != "" {
		d.CheckoutSource = SourceEnv
	}
	switch {
	case in.Flag != "":
		d.Shared, d.SharedSource = fromRoot(in.Root, in.Flag), SourceFlag
	case in.getenv(CacheDirEnv) != "":
		d.Shared, d.SharedSource = fromRoot(in.Root, in.getenv(CacheDirEnv)), SourceEnv
	case in.Config != "":
		d.Shared, d.SharedSource = fromRoot(in.Root, in.Config), SourceConfig
	default:
		base, err := UserCacheDir(in.Getenv, in.GOOS)
		if err != nil {
			d.Shared, d.SharedSource = d.Checkout, SourceNoUserCache
			return d
		}
		d.RepositoryID = RepositoryID(in.Root)
		d.Shared, d.SharedSource = filepath.Join(base, "vx", d.RepositoryID), SourceDefault
	}
	return d
}

// Checkout answers the checkout's own state folder: $VX_STATE_DIR (from root when relative), else
// root/.vx. It needs no config, so that what is read before the config (its bundle cache, the
// resolved workspace) has a place.
func Checkout(root string, getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv(StateDirEnv); d != "" {
		return fromRoot(root, d)
	}
	return filepath.Join(root, CheckoutFolder)
}

// fromRoot makes p absolute from root and cleans it.
func fromRoot(root, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return filepath.Clean(p)
}

// UserCacheDir answers the user's cache folder as os.UserCacheDir does, from getenv and goos:
// $XDG_CACHE_HOME or ~/.cache on Unix, ~/Library/Caches on macOS, %LocalAppData% on Windows.
func UserCacheDir(getenv func(string) string, goos string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if goos == "" {
		goos = runtime.GOOS
	}
	var dir, from string
	switch goos {
	case "windows":
		dir, from = getenv("LocalAppData"), "%LocalAppData%"
	case "darwin", "ios":
		if h := getenv("HOME"); h != "" {
			dir = filepath.Join(h, "Library", "Caches")
		}
		from = "$HOME"
	default:
		dir = getenv("XDG_CACHE_HOME")
		if dir == "" || !filepath.IsAbs(dir) {
			dir = ""
			if h := getenv("HOME"); h != "" {
				dir = filepath.Join(h, ".cache")
			}
		}
		from = "$XDG_CACHE_HOME or $HOME"
	}
	if dir == "" {
		return "", fmt.Errorf("no user cache folder (%s is not set): name the shared store with --cache-dir or %s", from, CacheDirEnv)
	}
	return dir, nil
}

// RepositoryID names root's repository: the last folder name of what it names and the first 16
// hex digits of the SHA-256 of its absolute, symlink-free path. What it names is the git common
// folder (what `git rev-parse --git-common-dir` answers) when root lies in a git repository, so
// that every `git worktree add` checkout of a repository shares one id and two clones do not;
// outside git it is root itself.
func RepositoryID(root string) string {
	named := root
	if common, err := GitCommonDir(root); err == nil {
		named = common
	}
	if r, err := filepath.EvalSymlinks(named); err == nil {
		named = r
	}
	sum := sha256.Sum256([]byte(named))
	// The readable part: the repository's folder (a bare repository's without .git).
	base := filepath.Base(named)
	if base == ".git" {
		base = filepath.Base(filepath.Dir(named))
	}
	base = strings.TrimSuffix(base, ".git")
	return safeName(base) + "-" + hex.EncodeToString(sum[:8])
}

// unsafeChars are what a repository id's readable part leaves out.
var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName answers name cut to 32 characters of letters, digits, dots, dashes and underscores.
func safeName(name string) string {
	name = strings.Trim(unsafeChars.ReplaceAllString(name, "_"), "._")
	if len(name) > 32 {
		name = name[:32]
	}
	if name == "" {
		name = "repo"
	}
	return name
}

// errNoGit is answered for a folder outside any git repository.
var errNoGit = errors.New("not in a git repository")

// GitCommonDir answers the absolute git common folder of the repository holding dir, as `git
// rev-parse --git-common-dir` would, read from the files git keeps (no process started): the
// nearest .git at or above dir; a .git file's `gitdir:` names the worktree's own folder, whose
// commondir file names the common one.
func GitCommonDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find git folder of %s: %w", dir, err)
	}
	for d := abs; ; {
		dotGit := filepath.Join(d, ".git")
		if fi, err := os.Stat(dotGit); err == nil {
			if fi.IsDir() {
				return commonOf(dotGit)
			}
			return gitFileCommon(dotGit)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errNoGit
		}
		d = parent
	}
}

// gitFileCommon follows a .git file (a worktree's or a submodule's) to its common folder.
func gitFileCommon(dotGit string) (string, error) {
	b, err := os.ReadFile(dotGit)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", dotGit, err)
	}
	line := strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	target, ok := strings.CutPrefix(line, "gitdir:")
	if !ok {
		return "", fmt.Errorf("read %s: no gitdir line", dotGit)
	}
	return commonOf(fromRoot(filepath.Dir(dotGit), strings.TrimSpace(target)))
}

// commonOf answers the common folder of a git folder: the one its commondir file names, else itself.
func commonOf(gitDir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if errors.Is(err, os.ErrNotExist) {
		return filepath.Clean(gitDir), nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Join(gitDir, "commondir"), err)
	}
	return fromRoot(gitDir, strings.TrimSpace(string(b))), nil
}
