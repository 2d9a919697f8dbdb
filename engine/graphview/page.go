package graphview

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
)

// The page's style and script, ours, inlined into every page.
var (
	//go:embed assets/page.css
	pageCSS string
	//go:embed assets/page.js
	pageJS string
)

// csp lets a page run its own inline script and style and load nothing at all: no network, no
// other file.
const csp = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"

// WriteHTML writes the graph's page: one self-contained file that opens from file:// offline.
func (g *Graph) WriteHTML(w io.Writer) error {
	return writePage(w, "vx graph "+g.Title, g)
}

// WriteHTML writes the run's page: one self-contained file that opens from file:// offline.
func (r *Run) WriteHTML(w io.Writer) error {
	return writePage(w, "vx run "+r.RunID, r)
}

// writePage writes a page titled title drawing data. The data is JSON with <, > and & escaped, so
// that nothing in it (a command, a log) can end the script element that holds it.
func writePage(w io.Writer, title string, data any) error {
	payload, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode the page's data: %w", err)
	}
	var b strings.Builder
	b.Grow(len(payload) + len(pageCSS) + len(pageJS) + 2048)
	fmt.Fprintf(&b, `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%s">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="vx">
<title>%s</title>
<style>
%s</style>
</head>
<body>
<header>
<h1>%s</h1>
<span class="summary" id="summary"></span>
<span class="controls">
<input type="search" id="search" placeholder="Search tasks ( / )" autocomplete="off" aria-label="search tasks">
<span id="matches"></span>
<input id="project" list="projects" placeholder="project" autocomplete="off" aria-label="filter by project">
<datalist id="projects"></datalist>
<select id="tag" aria-label="filter by tag"><option value="">all tags</option></select>
<button id="zoomout" title="zoom out">−</button><button id="zoomin" title="zoom in">+</button><button id="fit" title="fit">fit</button>
</span>
<div class="legend" id="legend"></div>
</header>
<main>
<div id="stage"><svg id="canvas" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="%s"></svg></div>
<aside id="details" hidden></aside>
</main>
<script type="application/json" id="vx-data">%s</script>
<script>
%s</script>
</body>
</html>
`, csp, html.EscapeString(title), pageCSS, html.EscapeString(title), html.EscapeString(title), payload, pageJS)
	_, err = io.WriteString(w, b.String())
	return err
}
