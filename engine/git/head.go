package git

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Head answers the commit HEAD of the checkout holding dir names, and the branch it is on (""
// when HEAD is detached), read from the files git keeps, as `git rev-parse HEAD` and `git
// symbolic-ref --short HEAD` would, without starting a process: the checkout's HEAD, then the ref
// it names as a loose file or in packed-refs (in the common folder of a worktree). A branch with
// no commit yet answers commit "". Outside a repository it is an error.
func Head(dir string) (commit, branch string, err error) {
	gitDir, err := checkoutGitDir(dir)
	if err != nil {
		return "", "", err
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", "", fmt.Errorf("read HEAD: %w", err)
	}
	head := strings.TrimSpace(string(b))
	ref, symbolic := strings.CutPrefix(head, "ref:")
	if !symbolic {
		return head, "", nil
	}
	ref = strings.TrimSpace(ref)
	branch = strings.TrimPrefix(ref, "refs/heads/")
	common := commonGitDir(gitDir)
	for _, d := range []string{gitDir, common} {
		if b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(ref))); err == nil {
			return strings.TrimSpace(string(b)), branch, nil
		}
	}
	commit, err = packedRef(filepath.Join(common, "packed-refs"), ref)
	return commit, branch, err
}

// checkoutGitDir answers the git folder of the checkout holding dir: the nearest .git folder at
// or above it, or the folder a .git file (a worktree's) names.
func checkoutGitDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := abs; ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotGit)
		if err == nil && fi.IsDir() {
			return dotGit, nil
		}
		if err == nil {
			b, err := os.ReadFile(dotGit)
			if err != nil {
				return "", err
			}
			target, ok := strings.CutPrefix(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), "gitdir:")
			if !ok {
				return "", fmt.Errorf("%s holds no gitdir line", dotGit)
			}
			target = strings.TrimSpace(target)
			if !filepath.IsAbs(target) {
				target = filepath.Join(d, target)
			}
			return target, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("not in a git repository")
		}
	}
}

// commonGitDir answers the common folder of a worktree's git folder (its commondir file), else
// the folder itself.
func commonGitDir(gitDir string) string {
	b, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(b))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}

// packedRef answers ref's commit in a packed-refs file; "" when the file or the ref is absent
// (a branch with no commit yet).
func packedRef(path, ref string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read packed-refs: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if id, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
			return id, nil
		}
	}
	return "", sc.Err()
}
