package graphview_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// mermaidVersion is the Mermaid the flowcharts are parsed and drawn with (npm view mermaid version).
const mermaidVersion = "12.3.0"

// mermaidScript installs Mermaid from npm, once, under ~/.cache/vx-test, and answers its browser
// bundle; the test is skipped where npm cannot install it.
func mermaidScript(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache folder to install Mermaid in: %v", err)
	}
	dir := filepath.Join(base, "vx-test", "mermaid-"+mermaidVersion)
	script := filepath.Join(dir, "node_modules", "mermaid", "dist", "mermaid.min.js")
	if _, err := os.Stat(script); err == nil {
		return script
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed, so Mermaid cannot be: the flowchart is not parsed")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--prefix", dir, "mermaid@"+mermaidVersion)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm cannot install mermaid@%s here (%v): the flowchart is not parsed\n%s", mermaidVersion, err, out)
	}
	return script
}

// Mermaid itself parses the flowchart vx graph writes, and draws a node per task and an edge per
// dependency, besides the legend's nodes.
func TestMermaidParses(t *testing.T) {
	ctx := browser(t)
	script := mermaidScript(t)
	for _, tc := range []struct {
		name string
		dir  func(t *testing.T) string
	}{
		{"small", smallWorkspace},
		{"60 projects", func(t *testing.T) string { return largeWorkspace(t, 60) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir(t)
			g := build(t, dir, request())
			var text bytes.Buffer
			if err := g.WriteMermaid(&text); err != nil {
				t.Fatal(err)
			}
			quoted, _ := json.Marshal(text.String())
			harness := filepath.Join(t.TempDir(), "mermaid.html")
			writeFile(t, harness, fmt.Sprintf(`<!doctype html><html><head><meta charset="utf-8"><script src="file://%s"></script></head>
<body><div id="out"></div><script>
mermaid.initialize({ startOnLoad: false, maxTextSize: 10000000, maxEdges: 100000 });
window.result = (async () => {
  const text = %s;
  const parsed = await mermaid.parse(text);
  const { svg } = await mermaid.render('g', text);
  document.getElementById('out').innerHTML = svg;
  // A label with a raw quote, as an unescaped one would be: the parser must refuse it.
  const refuses = await mermaid.parse('flowchart RL\n  n0["a"b"]').then(() => false, () => true);
  return { refuses, type: parsed.diagramType, nodes: document.querySelectorAll('#out g.node:not([id*="legend_"])').length,
    legend: document.querySelectorAll('#out g.node[id*="legend_"]').length,
    edges: document.querySelectorAll('#out .edgePaths path, #out path.flowchart-link').length };
})().catch(e => ({ error: String(e && e.message || e) }));
window.result.then(r => { window.done = r; document.body.setAttribute('data-ready', 'true'); });
</script></body></html>`, script, quoted))
			p, _ := open(t, ctx, harness)
			got := eval[map[string]any](t, p, `window.done`)
			if got["error"] != nil {
				t.Fatalf("Mermaid %s refuses the flowchart: %v\n%s", mermaidVersion, got["error"], text.String())
			}
			if got["refuses"] != true {
				t.Error("Mermaid parsed a broken label: the check could not fail")
			}
			if got["type"] != "flowchart-v2" || int(got["nodes"].(float64)) != len(g.Tasks) || int(got["edges"].(float64)) != len(g.Edges) {
				t.Errorf("Mermaid reads %v; want a flowchart of %d nodes and %d edges", got, len(g.Tasks), len(g.Edges))
			}
			if got["legend"] == nil || got["legend"].(float64) == 0 {
				t.Errorf("Mermaid draws no legend node: %v", got)
			}
			if strings.Contains(text.String(), "#build") {
				t.Error("a task id's # is left raw in a label")
			}
		})
	}
}
