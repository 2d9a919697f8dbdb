package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/graph"
	"github.com/vzn/vx/engine/handoff"
	"github.com/vzn/vx/engine/mask"
	"github.com/vzn/vx/engine/profilerec"
	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
	"github.com/vzn/vx/logging"
	"github.com/vzn/vx/proc"
)

// version is the vx version; release builds set it with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// app holds what every verb shares: the streams, the environment, the global flags and the
// workspace loader. It holds no logic of its own beyond loading and printing.
type app struct {
	stdout, stderr io.Writer
	getenv         func(string) string

	dir      string // -C
	format   string // --format
	logLevel string // --log-level
	color    string // --color: auto, always or never
	noColor  bool   // --no-color
	cacheDir string // --cache-dir

	log    zerolog.Logger
	loader *workspace.Loader
	// masker masks the secrets of the last loaded workspace in the error vx ends on.
	masker *mask.Masker
	// order is what vx mcp ordered this process to run (awaitRun); nil for any other vx.
	order *handoff.Order
}

func newApp(stdout, stderr io.Writer, getenv func(string) string) *app {
	return &app{stdout: stdout, stderr: stderr, getenv: getenv, log: zerolog.Nop()}
}

// workDir is the folder vx runs as if started in.
func (a *app) workDir() string {
	if a.dir != "" {
		return a.dir
	}
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}

// workspaceLoader returns the loader for the working folder, creating it once.
func (a *app) workspaceLoader() *workspace.Loader {
	if a.loader == nil {
		a.loader = workspace.NewLoader(workspace.Options{
			Dir: a.workDir(), Getenv: a.getenv, Console: a.stderr, Version: version,
			Isolate: configIsolation(), CacheDirFlag: a.cacheDir,
		})
	}
	return a.loader
}

// load evaluates and resolves the workspace.
func (a *app) load(ctx context.Context) (*graph.Workspace, error) {
	defer profilerec.Start(ctx, "config load").End()
	ws, err := a.workspaceLoader().Load(ctx)
	if ws != nil {
		a.masker = mask.New(ws.Secrets...)
	}
	return ws, err
}

// emit prints doc as JSON under --format json, else through text.
func (a *app) emit(doc any, text func(w io.Writer) error) error {
	if a.format == "json" {
		return writeJSON(a.stdout, doc)
	}
	return text(a.stdout)
}

func writeJSON(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// formatsAnnotation names, on a verb that answers more formats than text and json, the ones it
// answers, comma-separated (vx graph: dot, mermaid, html; vx last: html).
const formatsAnnotation = "vx:formats"

// setUp runs before every verb: it checks the global flags and builds the logger.
func (a *app) setUp(cmd *cobra.Command) error {
	formats := []string{"text", "json"}
	if f := cmd.Annotations[formatsAnnotation]; f != "" {
		formats = strings.Split(f, ",")
	}
	if !slices.Contains(formats, a.format) {
		return vxerr.Usagef("--format %q: want %s or %s", a.format, strings.Join(formats[:len(formats)-1], ", "), formats[len(formats)-1])
	}
	if err := a.checkColor(); err != nil {
		return err
	}
	level, _ := logging.LevelFrom(a.logLevel, a.getenv)
	log, err := logging.New(a.stderr, level)
	if err != nil {
		return &vxerr.UsageError{Msg: err.Error()}
	}
	a.log = log
	return nil
}

// execute runs the command line and returns the exit status. Errors are printed here, once, masked.
func (a *app) execute(ctx context.Context, args []string) int {
	out := &countingWriter{w: a.stdout}
	a.stdout = out
	root := a.rootCommand(ctx, args)
	root.SetArgs(args)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return vxerr.ExitOK
	}
	err = hinted(root, a.taskVerb(ctx, root, args, err))
	code := vxerr.ExitCode(err)
	var c vxerr.Coder
	if !errors.As(err, &c) && isCobraUsage(err) {
		code = vxerr.ExitUsage
	}
	if msg, ok := a.message(err); ok {
		fmt.Fprintf(a.stderr, "%s %s\n", a.paint(a.stderr, ansiRed, "vx:"), msg)
		if out.n == 0 && a.wantsJSONError(cmd, args) {
			a.writeErrorDoc(msg, errorCode(err, msg, code), code)
		}
	}
	return code
}

// errorDoc is the document vx prints on stdout under --format json when a verb fails before it
// printed its own, the original's: ok false and the error's stable code and message (secrets
// masked, as on stderr), with vx's exit status beside them.
type errorDoc struct {
	OK       bool         `json:"ok"`
	Error    errorDocBody `json:"error"`
	ExitCode int          `json:"exitCode"`
}

// errorDocBody is the error of errorDoc.
type errorDocBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeErrorDoc prints the error document on one line.
func (a *app) writeErrorDoc(msg, errCode string, code int) {
	line, err := json.Marshal(errorDoc{Error: errorDocBody{Code: errCode, Message: msg}, ExitCode: code})
	if err != nil {
		return
	}
	fmt.Fprintf(a.stdout, "%s\n", line)
}

// wantsJSONError reports whether the failure of cmd is owed a JSON error document: --format
// json (or a plan as JSON, --dry=json) was asked for (read from args too, for a line whose flags
// cobra could not parse) and cmd answers JSON. vx mcp's stdout is the JSON-RPC stream, and a run whose events go to
// --events-fd tells its reader the error on that stream, where the reader looks for it.
func (a *app) wantsJSONError(cmd *cobra.Command, args []string) bool {
	if a.format != "json" && formatArg(args) != "json" && !dryJSON(cmd, args) {
		return false
	}
	if cmd == nil || cmd.Name() == "mcp" {
		return false
	}
	if f := cmd.Flags().Lookup("events-fd"); f != nil && f.Changed {
		return false
	}
	if f := cmd.Annotations[formatsAnnotation]; f != "" && !slices.Contains(strings.Split(f, ","), "json") {
		return false
	}
	return true
}

// dryJSON reports whether vx run or vx watch was asked for its plan as JSON (--dry=json).
func dryJSON(cmd *cobra.Command, args []string) bool {
	if cmd != nil {
		if f := cmd.Flags().Lookup("dry"); f != nil && f.Changed {
			return f.Value.String() == "json"
		}
	}
	for _, arg := range args {
		if arg == "--" {
			return false
		}
		if arg == "--dry=json" {
			return true
		}
	}
	return false
}

// formatArg is the value of the last --format in args, before any "--".
func formatArg(args []string) string {
	format := ""
	for i, arg := range args {
		switch {
		case arg == "--":
			return format
		case arg == "--format" && i+1 < len(args):
			format = args[i+1]
		case strings.HasPrefix(arg, "--format="):
			format = strings.TrimPrefix(arg, "--format=")
		}
	}
	return format
}

// countingWriter counts the bytes written through it: whether a verb printed anything on stdout.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// message is the message vx ends on for err, secrets masked; ok is false for a failure that the
// answer already tells (a task failed: the run summary says which).
func (a *app) message(err error) (msg string, ok bool) {
	if err == nil {
		return "", false
	}
	var fe *vxerr.FailureError
	if errors.As(err, &fe) && fe.Msg == "" {
		return "", false
	}
	return a.masker.String(oneVxPrefix(oneLine(err.Error()))), true
}

// verbPrefix is a verb's name an error may start with ("vx init: "), which the "vx: " vx prints
// before it would double.
var verbPrefix = regexp.MustCompile(`^vx [a-z]+(?: [a-z]+)?: `)

// oneVxPrefix drops a leading "vx VERB: " from msg: vx prints every error after one "vx: ".
func oneVxPrefix(msg string) string {
	if loc := verbPrefix.FindStringIndex(msg); loc != nil {
		return msg[loc[1]:]
	}
	return msg
}

func oneLine(s string) string { return strings.TrimRight(s, "\n") }

// isCobraUsage recognises cobra's own argument and flag errors, which are usage errors.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "flag needs an argument",
		"invalid argument", "accepts ", "requires at least", "requires at most", "required flag", "bad flag syntax"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// withUsage marks cobra's flag errors as usage errors.
func withUsage(cmd *cobra.Command) *cobra.Command {
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &vxerr.UsageError{Msg: err.Error() + flagHint(c, err)} })
	return cmd
}

// withSignals returns a context that the first SIGINT or SIGTERM cancels: the work in hand stops,
// each child gets SIGTERM and a grace period. A second signal is a hard stop (proc.WithHardStop):
// every child, with everything it started, gets SIGKILL at once, and vx exits as soon as they are
// gone. So is the death signal its parent asked for (the vx mcp of a runTasks call asks for
// SIGHUP): no one is left to wait for a graceful end. After a hard stop SIGINT and SIGTERM have
// their default effect again, while the death signal, which comes again as the parent's threads
// die, stays caught. stop releases the signals and the context.
func withSignals(parent context.Context) (ctx context.Context, stop func()) {
	started := proc.WatchParent()
	ctx, cancel := context.WithCancel(parent)
	ctx, hardStop := proc.WithHardStop(ctx)
	notify := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if sig := started.DeathSignal(); sig != 0 && sig != syscall.SIGINT && sig != syscall.SIGTERM {
		notify = append(notify, sig)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, notify...)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for first := true; ; first = false {
			var sig os.Signal
			select {
			case <-done:
				return
			case sig = <-signals:
			}
			if first && !started.Died(sig) {
				cancel()
				continue
			}
			hardStop()
			signal.Reset(os.Interrupt, syscall.SIGTERM)
			return
		}
	})
	return ctx, func() {
		signal.Stop(signals)
		close(done)
		wg.Wait()
		cancel()
		hardStop()
	}
}
