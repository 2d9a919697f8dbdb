package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/atomicfile"
	"github.com/vzn/vx/engine/graphview"
	"github.com/vzn/vx/engine/runrequest"
	"github.com/vzn/vx/engine/vxerr"
)

// The formats of a picture, and the file names that imply them.
var pictureFormats = map[string]string{".html": "html", ".htm": "html", ".dot": "dot", ".gv": "dot",
	".mmd": "mermaid", ".mermaid": "mermaid", ".json": "json"}

func (a *app) graphCmd() *cobra.Command {
	var sel selectFlags
	var out string
	var open bool
	cmd := &cobra.Command{
		Use:   "graph [tasks…] [--filter F]… [--affected[=REF]] [--out FILE] [--format html|dot|mermaid|json] [--open]",
		Short: "Draw the task graph of a selection: DOT, Mermaid, JSON, or a page to look at",
		Long: `Draw the task graph of what vx run would run (the same selection: task names or ids, --filter,
--exclude, --affected; no task means every task of the selected projects), as vx run --dry plans
it: each task coloured by its predicted cache status, labelled with its p50, the critical path in
red, an edge from each task to each task it depends on.

Without --out it prints DOT (for Graphviz: vx graph build | dot -Tsvg > graph.svg). --out FILE
writes the format its extension names (.html, .dot or .gv, .mmd, .json) unless --format says
another; --format html writes the page: one self-contained file that opens offline, where a click
on a task shows its command, inputs, outputs, p50/p99, hit rate, last status and why it would miss.
--open writes the page to a temporary file and opens it ($BROWSER, else the system's opener).`,
		Annotations: map[string]string{formatsAnnotation: "text,json,dot,mermaid,html"},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.graph(cmd, &sel, args, out, open)
		},
	}
	sel.register(cmd)
	cmd.Flags().StringVar(&out, "out", "", "write the picture to `FILE` (its format from its extension: .html, .dot, .mmd, .json)")
	cmd.Flags().BoolVar(&open, "open", false, "write the page to a temporary file and open it in a browser")
	cmd.SetUsageFunc(leafUsage)
	return cmd
}

// graph draws the selection the flags and args name.
func (a *app) graph(cmd *cobra.Command, sel *selectFlags, args []string, out string, open bool) error {
	format, err := pictureFormat(a.format, out, open)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	ws, err := a.load(ctx)
	if err != nil {
		return err
	}
	so, err := a.selectOptions(ws, sel)
	if err != nil {
		return err
	}
	if p := a.folderProject(ws); p != nil && len(sel.filters) == 0 {
		so.Filters = append([]string{p.Name}, so.Filters...) // as vx run does in a project's folder
	}
	so.Tasks, so.All = args, len(args) == 0
	g, err := graphview.Build(ctx, ws, runrequest.Request{SelectOptions: so, Getenv: a.getenv}, graphTitle(args, sel))
	if err != nil {
		return err
	}
	write := map[string]func(io.Writer) error{"dot": g.WriteDOT, "mermaid": g.WriteMermaid, "html": g.WriteHTML,
		"json": func(w io.Writer) error { return writeJSON(w, g) }}[format]
	switch {
	case open:
		return a.openPage("vx-graph-*.html", write)
	case out != "":
		if err := writePicture(out, write); err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "vx: wrote %s (%s, %d tasks)\n", out, format, len(g.Tasks))
		return nil
	}
	return write(a.stdout)
}

// pictureFormat is the format a picture is written in: --format's, else the one --out's
// extension names, else DOT (a page under --open).
func pictureFormat(flag, out string, open bool) (string, error) {
	format := flag
	if format == "text" {
		format = "dot"
		if f, ok := pictureFormats[strings.ToLower(filepath.Ext(out))]; ok {
			format = f
		}
		if open {
			format = "html"
		}
	}
	switch {
	case open && format != "html":
		return "", vxerr.Usagef("--open opens a page: --format %s cannot be opened", format)
	case open && out != "":
		return "", vxerr.Usagef("--open writes a temporary page: leave out --out %s, or open the file it writes", out)
	}
	return format, nil
}

// graphTitle says what vx graph drew, as its command line said it.
func graphTitle(args []string, sel *selectFlags) string {
	parts := append([]string(nil), args...)
	if len(parts) == 0 {
		parts = append(parts, "--all")
	}
	for _, f := range sel.filters {
		parts = append(parts, "--filter "+f)
	}
	for _, x := range sel.excludes {
		parts = append(parts, "--exclude "+x)
	}
	if sel.affected != "" {
		parts = append(parts, "--affected")
		if sel.affected != affectedDefault {
			parts[len(parts)-1] += "=" + sel.affected
		}
	}
	return strings.Join(parts, " ")
}

// writePicture writes a picture to path, whole or not at all.
func writePicture(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, write, atomicfile.Perm(0o644)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// openPage writes a page to a new temporary file named by pattern and opens it in a browser:
// $BROWSER's first command when set, else the system's opener. vx does not wait for it.
func (a *app) openPage(pattern string, write func(io.Writer) error) error {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return fmt.Errorf("write the page: %w", err)
	}
	path := f.Name()
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	fmt.Fprintf(a.stderr, "vx: wrote %s\n", path)
	argv := opener(a.getenv("BROWSER"), path)
	c := exec.Command(argv[0], argv[1:]...)
	if err := c.Start(); err != nil {
		return fmt.Errorf("open %s with %s: %w (open the file yourself)", path, argv[0], err)
	}
	return c.Process.Release()
}

// opener is the command line that opens path: $BROWSER's first entry (a list separated by
// colons, as xdg-utils reads it; %s, where it is given, stands for the page), else xdg-open, open
// (macOS) or the Windows shell.
func opener(browser, path string) []string {
	if first, _, _ := strings.Cut(browser, string(os.PathListSeparator)); strings.TrimSpace(first) != "" {
		fields := strings.Fields(first)
		replaced := false
		for i, f := range fields {
			if strings.Contains(f, "%s") {
				fields[i], replaced = strings.ReplaceAll(f, "%s", path), true
			}
		}
		if !replaced {
			fields = append(fields, path)
		}
		return fields
	}
	switch runtime.GOOS {
	case "darwin":
		return []string{"open", path}
	case "windows":
		return []string{"rundll32", "url.dll,FileProtocolHandler", path}
	}
	return []string{"xdg-open", path}
}
