package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/git"
	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/logtext"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/report"
	"github.com/vzn/vx/engine/runner"
	"github.com/vzn/vx/engine/store"
	"github.com/vzn/vx/engine/summary"
	"github.com/vzn/vx/engine/vxerr"
)

// ciFlags are vx run's flags for continuous integration and agents: retries, the run's timeout,
// tags, the Markdown report, and the compact output of an agent host.
type ciFlags struct {
	retry      int
	timeout    string
	tags       []string
	report     string
	reportFile string
	agent      bool

	// What check made of them.
	runTimeout time.Duration
	tagMap     map[string]string
}

// The --report values.
const (
	reportMarkdown = "markdown"
	reportNone     = "none"
)

func (c *ciFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntVar(&c.retry, "retry", 0, "run a task that fails again, up to `N` times (default: each task's exec.retries); a pass after a failure passes the run and marks the task flaky")
	f.StringVar(&c.timeout, "timeout", "", "cancel the whole run after `DURATION` (e.g. 30m), as Ctrl-C does (default: runTimeout in vx.workspace.ts; a task's own timeout still applies)")
	f.StringArrayVar(&c.tags, "tag", nil, "record `KEY=VALUE` with the run (repeatable): vx last, getRunHistory and the report show it")
	f.StringVar(&c.report, "report", "", "write the run as `FORMAT`: markdown (to --report-file, else $GITHUB_STEP_SUMMARY under GitHub Actions, else stdout in place of the summary) or none (not even under GitHub Actions)")
	f.StringVar(&c.reportFile, "report-file", "", "write the Markdown report to `PATH` (implies --report=markdown)")
	f.BoolVar(&c.agent, "agent", false, "compact output for an agent (set by itself under Claude Code, Gemini CLI, Codex or AI_AGENT): no live line, hits in one line, each failure's first and last lines")
}

// check refuses values vx run cannot use, each by its flag.
func (c *ciFlags) check(cmd *cobra.Command, format string) error {
	f := cmd.Flags()
	if f.Changed("retry") && (c.retry < 0 || c.retry > graph.MaxRetries) {
		return vxerr.Usagef("--retry %d: want a number from 0 to %d", c.retry, graph.MaxRetries)
	}
	if c.timeout != "" {
		d, err := time.ParseDuration(c.timeout)
		if err != nil || d <= 0 {
			return vxerr.Usagef("--timeout %s: want a positive duration such as 90s or 30m", c.timeout)
		}
		c.runTimeout = d
	}
	for _, kv := range c.tags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n=") || strings.ContainsAny(v, "\r\n") {
			return vxerr.Usagef("--tag %q: want KEY=VALUE (a key without spaces, one line)", kv)
		}
		if _, dup := c.tagMap[k]; dup {
			return vxerr.Usagef("--tag %s: the key %s is given twice", kv, k)
		}
		if c.tagMap == nil {
			c.tagMap = map[string]string{}
		}
		c.tagMap[k] = v
	}
	switch c.report {
	case "", reportMarkdown, reportNone:
	default:
		return vxerr.Usagef("--report=%s: want markdown or none", c.report)
	}
	if c.reportFile != "" && c.report == reportNone {
		return vxerr.Usagef("--report-file with --report=none: choose one")
	}
	if c.report == reportMarkdown && c.reportFile == "" && format == "json" {
		return vxerr.Usagef("--report=markdown with --format json: name a --report-file (stdout holds the JSON summary)")
	}
	return nil
}

// agentHost reports whether an agent host runs vx: the variables Claude Code (CLAUDECODE=1),
// Gemini CLI (GEMINI_CLI=1) and Codex (CODEX_CI=1 for the commands it runs, CODEX_SANDBOX inside
// its sandbox) set for the commands they start, or AI_AGENT, which names any agent. Variables a
// user's profile sets for other reasons (CODEX_HOME) say nothing.
func agentHost(getenv func(string) string) bool {
	return getenv("CLAUDECODE") == "1" || getenv("GEMINI_CLI") == "1" || getenv("CODEX_CI") == "1" ||
		getenv("CODEX_SANDBOX") != "" || getenv("AI_AGENT") != ""
}

// onGitHub reports whether vx runs in a GitHub Actions job.
func onGitHub(getenv func(string) string) bool { return getenv("GITHUB_ACTIONS") == "true" }

// isAgent reports whether the run's output is an agent's: --agent or an agent host, never for a
// runTasks child (its reader is vx mcp, which reads its events).
func (c *ciFlags) isAgent(getenv func(string) string, forServer bool) bool {
	return !forServer && (c.agent || agentHost(getenv))
}

// apply puts the flags into the run's options: retries, tags, the run's timeout (the flag, else
// the workspace's runTimeout), and the output an agent or GitHub Actions reads.
func (c *ciFlags) apply(cmd *cobra.Command, opts *runner.Options, ws *graph.Workspace, getenv func(string) string, forServer bool) {
	if cmd.Flags().Changed("retry") {
		n := c.retry
		opts.Retry = &n
	}
	opts.Tags = c.tagMap
	opts.RunTimeout = ws.RunTimeout
	if c.runTimeout > 0 {
		opts.RunTimeout = c.runTimeout
	}
	switch {
	case c.isAgent(getenv, forServer):
		opts.Terminal, opts.Logs.Agent = false, true
	case onGitHub(getenv) && !forServer:
		opts.Logs.GitHub = true
	}
}

// afterRun writes what CI reads of a finished run: the annotations of its failures on stderr
// under GitHub Actions, and the Markdown report where --report and GitHub Actions say. It answers
// whether the report took stdout's place.
func (a *app) afterRun(ctx context.Context, c *ciFlags, ws *graph.Workspace, sum *summary.Summary, forServer bool) (reportOnStdout bool, err error) {
	if forServer {
		return false, nil
	}
	github := onGitHub(a.getenv) && !c.isAgent(a.getenv, false)
	var targets []string
	if c.reportFile != "" {
		targets = append(targets, c.reportFile)
	}
	if step := a.getenv("GITHUB_STEP_SUMMARY"); onGitHub(a.getenv) && step != "" && c.report != reportNone && c.reportFile == "" {
		targets = append(targets, step)
	}
	toStdout := c.report == reportMarkdown && len(targets) == 0
	if !github && len(targets) == 0 && !toStdout {
		return false, nil
	}
	failures, err := a.runFailures(ctx, ws, sum)
	if err != nil {
		return false, err
	}
	if github {
		if _, err := report.Annotations(a.stderr, failures); err != nil {
			return false, fmt.Errorf("write annotations: %w", err)
		}
	}
	if len(targets) == 0 && !toStdout {
		return false, nil
	}
	var doc bytes.Buffer
	if err := report.Markdown(&doc, report.Run{Summary: sum, Failures: failures}); err != nil {
		return false, err
	}
	if toStdout {
		_, err := a.stdout.Write(doc.Bytes())
		return true, err
	}
	for _, path := range targets {
		if err := writeReport(path, doc.Bytes(), path != c.reportFile); err != nil {
			return false, err
		}
	}
	return false, nil
}

// runFailures reads the failures of the run from its index, as getFailures reads them, with the
// places they name relative to the repository's root.
func (a *app) runFailures(ctx context.Context, ws *graph.Workspace, sum *summary.Summary) ([]report.Failure, error) {
	if sum.Totals.Failed == 0 {
		return nil, nil
	}
	st, err := store.OpenReadOnly(ctx, ws.CacheDir)
	if err != nil {
		return nil, fmt.Errorf("read the state folder: %w", err)
	}
	defer st.Close()
	repoRoot := ws.Root
	if top, err := git.Run(ctx, ws.Root, "rev-parse", "--show-toplevel"); err == nil && strings.TrimSpace(top) != "" {
		repoRoot = strings.TrimSpace(top)
	}
	return report.Failures(ctx, st, ws, repoRoot, sum, mask.New(ws.Secrets...))
}

// writeReport writes the report to path: appended (a job's step summary, which each step adds
// to) or in place of what the file held.
func writeReport(path string, doc []byte, appendTo bool) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write the report %s: %w", path, err)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return fmt.Errorf("write the report %s: %w", path, err)
	}
	if _, err := f.Write(doc); err != nil {
		f.Close()
		return fmt.Errorf("write the report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write the report %s: %w", path, err)
	}
	return nil
}

// tagsText is a run's tags as one line: key=value pairs by key, escaped for a terminal.
func tagsText(tags map[string]string) string {
	parts := make([]string, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		parts = append(parts, logtext.Escape(k+"="+tags[k]))
	}
	return strings.Join(parts, " ")
}

// emitRunSummary prints the run's summary after its report: nothing when the report took
// stdout's place, the summary's line alone for an agent, else the summary as --format says.
func (a *app) emitRunSummary(c *ciFlags, sum *summary.Summary, forServer, reportOnStdout bool) error {
	switch {
	case reportOnStdout:
		return nil
	case a.format != "json" && c.isAgent(a.getenv, forServer):
		var b bytes.Buffer
		if err := writeSummaryText(&b, sum, false); err != nil {
			return err
		}
		line, _, _ := strings.Cut(b.String(), "\n")
		_, err := io.WriteString(a.stdout, line+"\n")
		return err
	}
	return a.emitSummary(sum, forServer)
}
