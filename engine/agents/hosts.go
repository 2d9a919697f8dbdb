package agents

// host is one agent host: the files vx writes for it.
type host struct {
	name  string
	files []hostFile
}

// hostFile is one file a host reads and how vx's part is put into it.
type hostFile struct {
	path string
	edit func(Options) edit
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
		{".mcp.json", func(Options) edit { return jsonServer("mcpServers", server(nil)) }},
		{"CLAUDE.md", func(Options) edit { return markedSection(pointer("@AGENTS.md")) }},
		{".claude/skills/vx/SKILL.md", func(o Options) edit { return whole(skill(o.Tasks)) }},
	}},
	{name: "cursor", files: []hostFile{
		{".cursor/mcp.json", func(Options) edit { return jsonServer("mcpServers", server(nil)) }},
	}},
	{name: "vscode", files: []hostFile{
		{".vscode/mcp.json", func(Options) edit { return jsonServer("servers", server(map[string]any{"type": "stdio"})) }},
	}},
	{name: "continue", files: []hostFile{
		{".continue/mcpServers/vx.yaml", func(Options) edit { return whole(continueYAML) }},
	}},
	{name: "gemini", files: []hostFile{
		{".gemini/settings.json", func(Options) edit { return jsonServer("mcpServers", server(nil)) }},
		{"GEMINI.md", func(Options) edit { return markedSection(pointer("@./AGENTS.md")) }},
	}},
	{name: "codex", files: []hostFile{
		{".codex/config.toml", func(Options) edit { return tomlServer(codexTable) }},
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
