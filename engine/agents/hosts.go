package agents

import "bytes"

// host is one agent host: the files vx writes for it.
type host struct {
	name  string
	files []hostFile
}

// hostFile is one file a host reads and how vx's part is put into it. pick, when set, chooses
// the file and its edit from what the workspace already has, in place of path and edit.
type hostFile struct {
	path string
	edit func(Options) edit
	pick func(root string) (path string, e edit, err error)
}

// The two files Claude Code reads as a project's guide.
const (
	claudeRootGuide   = "CLAUDE.md"
	claudeFolderGuide = ".claude/CLAUDE.md"
)

// claudeGuide picks the guide vx's pointer to AGENTS.md goes into: of CLAUDE.md and
// .claude/CLAUDE.md (Claude Code reads both), the one that already holds vx's section, else
// the one that exists, else CLAUDE.md (also when both exist). Claude Code resolves an @import
// from the file that holds it, so the pointer in .claude/CLAUDE.md names ../AGENTS.md. A link
// on the way to either is refused, as every file vx agents reads.
func claudeGuide(root string) (string, edit, error) {
	atRoot, err := readFile(root, claudeRootGuide)
	if err != nil {
		return "", nil, err
	}
	inFolder, err := readFile(root, claudeFolderGuide)
	if err != nil {
		return "", nil, err
	}
	folder := inFolder.exists && (!atRoot.exists || bytes.Contains(inFolder.data, []byte(beginMarker)) && !bytes.Contains(atRoot.data, []byte(beginMarker)))
	if folder {
		return claudeFolderGuide, markedSection(pointer("@../AGENTS.md")), nil
	}
	return claudeRootGuide, markedSection(pointer("@AGENTS.md")), nil
}

// server is the MCP server entry every host gets: vx mcp, started in the folder the host opened.
func server(extra map[string]any) map[string]any {
	s := map[string]any{"command": "vx", "args": []any{"mcp"}}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// hosts lists every host in the order they are planned.
var hosts = []host{
	{name: "claude", files: []hostFile{
		{path: ".mcp.json", edit: func(Options) edit { return jsonServer("mcpServers", server(nil)) }},
		{pick: claudeGuide},
		{path: ".claude/skills/vx/SKILL.md", edit: func(o Options) edit { return whole(skill(o.Tasks)) }},
	}},
	{name: "cursor", files: []hostFile{
		{path: ".cursor/mcp.json", edit: func(Options) edit { return jsonServer("mcpServers", server(nil)) }},
	}},
	{name: "vscode", files: []hostFile{
		{path: ".vscode/mcp.json", edit: func(Options) edit { return jsonServer("servers", server(map[string]any{"type": "stdio"})) }},
	}},
	{name: "continue", files: []hostFile{
		{path: ".continue/mcpServers/vx.yaml", edit: func(Options) edit { return whole(continueYAML) }},
	}},
	{name: "gemini", files: []hostFile{
		{path: ".gemini/settings.json", edit: func(Options) edit { return jsonServer("mcpServers", server(nil)) }},
		{path: "GEMINI.md", edit: func(Options) edit { return markedSection(pointer("@./AGENTS.md")) }},
	}},
	{name: "codex", files: []hostFile{
		{path: ".codex/config.toml", edit: func(Options) edit { return tomlServer(codexTable) }},
	}},
}

// Hosts names every host vx writes for, in the order they are planned.
func Hosts() []string {
	names := make([]string, len(hosts))
	for i, h := range hosts {
		names[i] = h.name
	}
	return names
}

func hostByName(name string) *host {
	for i := range hosts {
		if hosts[i].name == name {
			return &hosts[i]
		}
	}
	return nil
}

// continueYAML is Continue's block file for vx (.continue/mcpServers/*.yaml, schema v1).
const continueYAML = `# Written by vx agents: Continue's MCP server block for vx (agent mode).
name: vx
version: 0.0.1
schema: v1
mcpServers:
  - name: vx
    command: vx
    args:
      - mcp
`

// codexTable is the [mcp_servers.vx] table of Codex's config.toml.
const codexTable = `[mcp_servers.vx]
command = "vx"
args = ["mcp"]
`

// whole owns the entire file: its text is always text.
func whole(text string) edit {
	return func([]byte) ([]byte, error) { return []byte(text), nil }
}
