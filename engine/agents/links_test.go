package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secretText stands for a private key outside the workspace.
const secretText = "-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n"

// outsideSecret makes a private file outside the workspace and returns its path.
func outsideSecret(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, []byte(secretText), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// noSecretInside fails the test when a file under root holds the secret's text.
func noSecretInside(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(data), "secret") {
			t.Errorf("%s holds the secret", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// symlink makes root/rel a symbolic link to target, making its folder.
func symlink(t *testing.T, target, root, rel string) {
	t.Helper()
	abs := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, abs); err != nil {
		t.Fatal(err)
	}
}

// wantRefused fails the test unless err is the one-line refusal naming rel.
func wantRefused(t *testing.T, err error, rel, why string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want it refused", rel)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "vx agents: "+rel+" ") || !strings.Contains(msg, why) || strings.Contains(msg, "\n") {
		t.Fatalf("%s: error %q, want one line naming it and %q", rel, msg, why)
	}
}

// TestRefusesLinkedFile: a file vx agents reads or writes that is a link to a secret outside the
// workspace is refused, in a dry run too; the secret is neither copied into the workspace nor
// changed.
func TestRefusesLinkedFile(t *testing.T) {
	for _, rel := range []string{".codex/config.toml", "CLAUDE.md", ".mcp.json", "AGENTS.md", ".gemini/settings.json", ".claude/skills/vx/SKILL.md"} {
		for _, dry := range []bool{true, false} {
			root := t.TempDir()
			secret := outsideSecret(t)
			symlink(t, secret, root, rel)
			p, err := Write(Options{Root: root, Dry: dry})
			wantRefused(t, err, rel, "is a symbolic link")
			if p != nil {
				t.Errorf("%s: a plan with the refusal", rel)
			}
			if got, _ := os.ReadFile(secret); string(got) != secretText {
				t.Errorf("%s: the secret became %q", rel, got)
			}
			if fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("%s: the link was replaced (%v)", rel, err)
			}
			noSecretInside(t, root)
		}
	}
}

// TestRefusesLinkedFolder: a folder on the way to a file vx agents writes that links outside the
// workspace is refused, naming it, and nothing is written outside.
func TestRefusesLinkedFolder(t *testing.T) {
	for _, c := range []struct{ host, folder string }{
		{"codex", ".codex"}, {"claude", ".claude"}, {"claude", ".claude/skills"}, {"claude", ".claude/skills/vx"},
		{"cursor", ".cursor"}, {"vscode", ".vscode"}, {"gemini", ".gemini"}, {"continue", ".continue"},
		{"continue", ".continue/mcpServers"},
	} {
		root := t.TempDir()
		outside := t.TempDir()
		symlink(t, outside, root, c.folder)
		_, err := Write(Options{Root: root, Hosts: []string{c.host}})
		wantRefused(t, err, c.folder, "is a symbolic link")
		if entries, err := os.ReadDir(outside); err != nil || len(entries) != 0 {
			t.Errorf("%s: wrote %d entries outside the workspace (%v)", c.folder, len(entries), err)
		}
	}
}

// TestRefusesLinkedFolderHoldingSecret: a linked .codex whose config.toml is a secret is refused
// before the secret is read.
func TestRefusesLinkedFolderHoldingSecret(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "config.toml"), []byte("# "+secretText), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, root, ".codex")
	_, err := Write(Options{Root: root, Hosts: []string{"codex"}, Dry: true})
	wantRefused(t, err, ".codex", "is a symbolic link")
	noSecretInside(t, root)
}

// TestRefusesHardLink: a file with a second name outside the workspace is neither copied nor
// written through; the other name keeps its content.
func TestRefusesHardLink(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(root, "..", filepath.Base(root)+"-key")
	if err := os.WriteFile(secret, []byte(secretText), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(secret) })
	if err := os.Link(secret, filepath.Join(root, "CLAUDE.md")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	_, err := Write(Options{Root: root, Hosts: []string{"claude"}})
	wantRefused(t, err, "CLAUDE.md", "hard links")
	if got, _ := os.ReadFile(secret); string(got) != secretText {
		t.Errorf("the other name became %q", got)
	}
	if got := read(t, root, "CLAUDE.md"); got != secretText {
		t.Errorf("CLAUDE.md became %q", got)
	}
}

// TestKeepsMode: a file vx merges into keeps its permission bits; a new file is 0644.
func TestKeepsMode(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".mcp.json", `{"mcpServers": {"db": {"command": "db", "env": {"TOKEN": "t"}}}}`)
	if err := os.Chmod(filepath.Join(root, ".mcp.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	write(t, root, ".codex/config.toml", "model = \"o3\"\n")
	if err := os.Chmod(filepath.Join(root, ".codex/config.toml"), 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(Options{Root: root, Hosts: []string{"claude", "codex"}}); err != nil {
		t.Fatal(err)
	}
	for rel, want := range map[string]os.FileMode{".mcp.json": 0o600, ".codex/config.toml": 0o640, "CLAUDE.md": 0o644} {
		fi, err := os.Stat(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), want)
		}
	}
	if !strings.Contains(read(t, root, ".mcp.json"), `"vx"`) {
		t.Errorf(".mcp.json lacks vx")
	}
	for rel := range snapshot(t, root) {
		if strings.HasSuffix(rel, ".tmp") {
			t.Errorf("left %s", rel)
		}
	}
}
