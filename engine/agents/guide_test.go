package agents

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeGuideInItsFolder: where the guide is .claude/CLAUDE.md (Claude Code reads it as it
// reads CLAUDE.md), vx's pointer goes there, naming ../AGENTS.md from that folder, and no
// CLAUDE.md is made beside it; where both exist the one holding vx's section is kept, else
// CLAUDE.md.
func TestClaudeGuideInItsFolder(t *testing.T) {
	mine := "# Our rules\n\nRun the linter.\n"
	t.Run("only .claude/CLAUDE.md", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, ".claude/CLAUDE.md", mine)
		p, err := Write(Options{Root: root, Hosts: []string{"claude"}, DeclaresMCP: true})
		if err != nil {
			t.Fatal(err)
		}
		got := read(t, root, ".claude/CLAUDE.md")
		if !strings.HasPrefix(got, mine+"\n"+beginMarker+"\n") || !strings.Contains(got, "see @../AGENTS.md (its vx section)") {
			t.Errorf(".claude/CLAUDE.md:\n%s", got)
		}
		if _, err := os.Stat(filepath.Join(root, "CLAUDE.md")); !os.IsNotExist(err) {
			t.Errorf("CLAUDE.md was made beside .claude/CLAUDE.md (%v)", err)
		}
		if s := statuses(p); s[".claude/CLAUDE.md"] != StatusReplaced || s["CLAUDE.md"] != "" {
			t.Errorf("statuses %v", s)
		}
		again, err := Write(Options{Root: root, Hosts: []string{"claude"}, DeclaresMCP: true})
		if err != nil {
			t.Fatal(err)
		}
		if s := statuses(again); s[".claude/CLAUDE.md"] != StatusKept {
			t.Errorf("second write: statuses %v", s)
		}
	})
	t.Run("both, vx's section in .claude/CLAUDE.md", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "CLAUDE.md", mine)
		write(t, root, ".claude/CLAUDE.md", beginMarker+"\nold\n"+endMarker+"\n")
		if _, err := Write(Options{Root: root, Hosts: []string{"claude"}, DeclaresMCP: true}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, root, "CLAUDE.md"); got != mine {
			t.Errorf("CLAUDE.md changed:\n%s", got)
		}
		if got := read(t, root, ".claude/CLAUDE.md"); !strings.Contains(got, "@../AGENTS.md") || strings.Contains(got, "old") {
			t.Errorf(".claude/CLAUDE.md:\n%s", got)
		}
	})
	t.Run("both, no section yet", func(t *testing.T) {
		root := t.TempDir()
		write(t, root, "CLAUDE.md", mine)
		write(t, root, ".claude/CLAUDE.md", mine)
		if _, err := Write(Options{Root: root, Hosts: []string{"claude"}, DeclaresMCP: true}); err != nil {
			t.Fatal(err)
		}
		if got := read(t, root, "CLAUDE.md"); !strings.Contains(got, "see @AGENTS.md (its vx section)") {
			t.Errorf("CLAUDE.md:\n%s", got)
		}
		if got := read(t, root, ".claude/CLAUDE.md"); got != mine {
			t.Errorf(".claude/CLAUDE.md changed:\n%s", got)
		}
	})
}

// TestClaudeGuideFolderLinkRefused: a .claude that is a link is refused before anything is
// read through it or written, as every path vx agents reads.
func TestClaudeGuideFolderLinkRefused(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write(t, outside, "CLAUDE.md", secretText)
	symlink(t, outside, root, ".claude")
	_, err := Write(Options{Root: root, Hosts: []string{"claude"}, DeclaresMCP: true})
	wantRefused(t, err, ".claude", "symbolic link")
	if got := read(t, outside, "CLAUDE.md"); got != secretText {
		t.Errorf("the file behind the link became %q", got)
	}
	noSecretInside(t, root)
}
