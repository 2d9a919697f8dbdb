package hasher

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eolFixtures are files whose line endings git's clean step treats each its own way.
var eolFixtures = map[string]string{
	"packages/a/crlf.txt":       "one\r\ntwo\r\n",
	"packages/a/mixed.txt":      "one\r\ntwo\nthree\r\n",
	"packages/a/lonecr.txt":     "one\rtwo\r\n",
	"packages/a/endcr.txt":      "one\r\ntwo\r",
	"packages/a/lf.txt":         "one\ntwo\n",
	"packages/a/bin.dat":        "\x00\x01\r\n\x02\r\nbinary",
	"packages/a/ctrl.txt":       "a\x01\x02\x03\x04\x05\r\n",
	"packages/a/raw/keep.txt":   "one\r\ntwo\r\n",
	"packages/a/win/crlf.txt":   "one\r\ntwo\n",
	"packages/a/win/lonecr.txt": "one\rtwo\r\n",
	"packages/a/txt/bin.txt":    "\x00one\r\n",
}

// eolDigests writes the fixtures (untracked) into a repository with the attributes and config
// given and answers vx's digest of each with git's (`git hash-object` of the file at its path).
func eolDigests(t *testing.T, attributes string, config ...string) (vx, gitIDs map[string]string) {
	t.Helper()
	root := originRepo(t, "sha1", map[string]string{".gitattributes": attributes})
	for _, c := range config {
		name, value, _ := strings.Cut(c, "=")
		runGit(t, root, "config", name, value)
	}
	for rel, content := range eolFixtures {
		write(t, root, rel, content)
	}
	_, manifests, h := keysOf(t, root)
	if n := h.git.attrBatches; n > 1 {
		t.Fatalf("attributes asked in %d git calls, not one", n)
	}
	vx, gitIDs = map[string]string{}, map[string]string{}
	for rel := range eolFixtures {
		vx[rel] = manifests["a#build"].Files[strings.TrimPrefix(rel, "packages/a/")]
		gitIDs[rel] = strings.TrimSpace(runGit(t, root, "hash-object", rel))
	}
	return vx, gitIDs
}

// TestDigestIsGitHashObject: for CRLF text, mixed endings, lone carriage returns, binary
// content with CRLF bytes, `-text`, `eol=crlf` and `text` on binary content, under
// `text=auto`, core.autocrlf true and input, or nothing, vx's digest of a file it reads is the id
// `git hash-object` gives it.
func TestDigestIsGitHashObject(t *testing.T) {
	cases := []struct {
		name, attributes string
		config           []string
	}{
		{"attributes", "* text=auto\npackages/a/raw/** -text\npackages/a/win/** eol=crlf\npackages/a/txt/** text\n", nil},
		{"autocrlf-true", "packages/a/raw/** -text\n", []string{"core.autocrlf=true"}},
		{"autocrlf-input", "packages/a/win/** eol=crlf\n", []string{"core.autocrlf=input"}},
		{"none", "", nil},
		{"legacy-crlf", "* crlf\npackages/a/raw/** -crlf\n", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vx, gitIDs := eolDigests(t, c.attributes, c.config...)
			converted := 0
			for rel, want := range gitIDs {
				if vx[rel] != want {
					t.Errorf("%s: vx %s, git hash-object %s", rel, vx[rel], want)
				}
				if want != gitHashObject(t, t.TempDir(), eolFixtures[rel]) {
					converted++
				}
			}
			if c.name != "none" && converted == 0 {
				t.Fatal("no fixture was converted: the case tests nothing")
			}
			if c.name == "attributes" {
				// -text keeps CRLF; text converts even binary-looking content.
				keep, lone := "packages/a/raw/keep.txt", "packages/a/txt/bin.txt"
				if vx[keep] != gitHashObject(t, t.TempDir(), eolFixtures[keep]) ||
					vx[lone] == gitHashObject(t, t.TempDir(), eolFixtures[lone]) {
					t.Fatal("the -text and text attributes did not apply")
				}
			}
		})
	}
}

// TestDigestKeepsCRLFTheIndexHolds: a file committed with CRLF line endings before `text=auto`
// applied to it is stored by `git add` as it is (git's safer autocrlf); vx's digest of it, read
// because it is modified by stat, is the id git's index holds.
func TestDigestKeepsCRLFTheIndexHolds(t *testing.T) {
	root := originRepo(t, "sha1", map[string]string{"packages/a/legacy.txt": "one\r\ntwo\r\n"})
	write(t, root, ".gitattributes", "* text=auto\n")
	runGit(t, root, "add", ".gitattributes")
	runGit(t, root, "commit", "-qm", "attributes")
	touchAll(t, root)
	_, manifests, _ := taskKeys(t, root)
	runGit(t, root, "add", "-A")
	if got, want := manifests["a#build"].Files["legacy.txt"], indexIDs(t, root)["packages/a/legacy.txt"]; got != want {
		t.Fatalf("digest %s, git add stores %s", got, want)
	}
}

// TestCRLFCheckoutKeysAsLF: a clone checked out with CRLF line endings (core.autocrlf true, as
// on Windows) keys its tasks as an LF clone of the same commit does, whether the digests come
// from the index or from reading the CRLF files; so does a clone whose attributes ask for
// eol=crlf.
func TestCRLFCheckoutKeysAsLF(t *testing.T) {
	origin := originRepo(t, "sha1", nil)
	lf := cloneRepo(t, origin)
	refreshIndex(t, lf)
	want, _, _ := taskKeys(t, lf)

	crlf := cloneRepo(t, origin, "core.autocrlf=true")
	data, err := os.ReadFile(filepath.Join(crlf, "packages/a/src/index.ts"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("\r\n")) {
		t.Fatalf("the core.autocrlf clone has LF line endings: %q", data)
	}
	refreshIndex(t, crlf)
	fromIndex, _, opened := taskKeys(t, crlf)
	if opened != 0 {
		t.Fatalf("opened %d files of a clean CRLF clone", opened)
	}
	touchAll(t, crlf)
	read, _, opened := taskKeys(t, crlf)
	if opened == 0 {
		t.Fatal("no file read after every file was touched")
	}
	for id, key := range want {
		if fromIndex[id] != key || read[id] != key {
			t.Fatalf("%s: LF key %s, CRLF clone %s from the index, %s read", id, key, fromIndex[id], read[id])
		}
	}

	attrOrigin := originRepo(t, "sha1", map[string]string{".gitattributes": "*.ts eol=crlf\n*.md eol=crlf\n"})
	attrClone := cloneRepo(t, attrOrigin)
	refreshIndex(t, attrClone)
	clean, _, _ := taskKeys(t, attrClone)
	touchAll(t, attrClone)
	if data, _ := os.ReadFile(filepath.Join(attrClone, "packages/a/README.md")); !bytes.Contains(data, []byte("\r\n")) {
		t.Fatalf("the eol=crlf clone has LF line endings: %q", data)
	}
	readAttr, _, _ := taskKeys(t, attrClone)
	for id, key := range clean {
		if readAttr[id] != key {
			t.Fatalf("%s: eol=crlf clone key %s from the index, %s read", id, key, readAttr[id])
		}
	}
}
