package filestate

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// gitDirOf answers the git folder of the repository holding dir (found as git does: the nearest
// .git folder, or .git file naming one, above it), "" when there is none.
func gitDirOf(dir string) string {
	for d := dir; ; d = filepath.Dir(d) {
		dotGit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotGit)
		switch {
		case err == nil && fi.IsDir():
			return dotGit
		case err == nil && fi.Mode().IsRegular():
			data, err := os.ReadFile(dotGit)
			if err != nil {
				return ""
			}
			gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if !ok {
				return ""
			}
			if !filepath.IsAbs(gitDir) {
				gitDir = filepath.Join(d, gitDir)
			}
			return gitDir
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// ObjectFormat answers the object format of the git repository holding dir — "sha256" where its
// config says `extensions.objectFormat = sha256`, else "sha1" — read from its config file without
// running git; "sha1" outside a repository (the format of the ids vx computes there).
func ObjectFormat(dir string) string {
	gitDir := gitDirOf(dir)
	if gitDir == "" {
		return FormatSHA1
	}
	common := gitDir
	if data, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common = strings.TrimSpace(string(data))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
	}
	data, err := os.ReadFile(filepath.Join(common, "config"))
	if err != nil {
		return FormatSHA1
	}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if ok && section == "extensions" && strings.EqualFold(strings.TrimSpace(name), "objectformat") &&
			strings.EqualFold(strings.Trim(strings.TrimSpace(value), `"`), FormatSHA256) {
			return FormatSHA256
		}
	}
	return FormatSHA1
}
