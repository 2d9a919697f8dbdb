package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/vxerr"
	"github.com/vzn/vx/engine/workspace"
)

const (
	groupBuiltin = "builtin"
	groupPlugin  = "plugin"
)

// rootCommand builds the command tree. Plugin verbs are added only when the workspace declares the
// plugin, which costs a config load, so that load happens only for help and for a plugin verb.
func (a *app) rootCommand(ctx context.Context, args []string) *cobra.Command {
	root := withUsage(&cobra.Command{
		Use:               "vx",
		Short:             "vx runs a monorepo's tasks in dependency order, caches them, and serves them to coding agents",
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return a.setUp(cmd) },
		Version:           version,
	})
	root.DisableSuggestions = true // vx's own hints (hints.go) say it in one line
	root.SetVersionTemplate("vx {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVarP(&a.dir, "chdir", "C", "", "run as if vx was started in `DIR`")
	pf.StringVar(&a.logLevel, "log-level", "", "log level on stderr: debug, info, warn, error, off (env VX_LOG)")
	pf.StringVar(&a.format, "format", "text", "answer format: text or json")
	a.registerColor(pf)
	pf.StringVar(&a.cacheDir, "cache-dir", "", "the shared store every checkout of the repository uses, in `DIR` (env VX_CACHE_DIR, config cacheDir)")
	a.cacheDir = cacheDirFlag(args)
	root.AddGroup(&cobra.Group{ID: groupBuiltin, Title: "Commands:"})
	root.SetHelpCommandGroupID(groupBuiltin)
	root.SetCompletionCommandGroupID(groupBuiltin)

	verb := firstVerb(args)
	// To serve, importing @vzn/vx-mcp is enough to start (the config is then evaluated per call,
	// and answers with its error if it does not declare mcp()); help evaluates it. A server needs
	// no other verb, so it builds none: its initialize reply waits on what is built before.
	fast := false
	if verb == "mcp" && !hasHelpFlag(args) {
		a.dir = chdirFlag(args)
		fast = a.importsMCP()
	}
	if !fast {
		for _, c := range []*cobra.Command{
			a.runCmd(), a.graphCmd(), a.showCmd(), a.lsCmd(), a.lastCmd(), a.whyCmd(), a.cacheCmd(),
			a.initCmd(), a.agentsCmd(), a.docsCmd(), a.lockCmd(), a.infoCmd(), a.versionCmd(), a.watchCmd(),
			a.pruneCmd(),
			a.historyCmd(),
		} {
			c.GroupID = groupBuiltin
			root.AddCommand(withUsage(c))
		}
	}

	// The plugin verbs cost a config load: only help and the verbs themselves pay it.
	if verb == "mcp" || (verb == "" && !hasVersionFlag(args)) || verb == "help" || hasHelpFlag(args) {
		a.dir = chdirFlag(args)
		if fast || a.declaresMCP(ctx) {
			root.AddGroup(&cobra.Group{ID: groupPlugin, Title: "Plugin commands:"})
			c := a.mcpCmd()
			c.GroupID = groupPlugin
			root.AddCommand(withUsage(c))
		} else if verb == "mcp" {
			root.AddCommand(&cobra.Command{
				Use: "mcp", Hidden: true, DisableFlagParsing: true,
				RunE: func(*cobra.Command, []string) error {
					return vxerr.Usagef("unknown command: mcp (vx mcp exists only in a workspace whose %s declares plugins: [mcp()])",
						workspace.ConfigFileName)
				},
			})
		}
	}
	return root
}

// versionCmd is `vx version`, which prints what `vx --version` does.
func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the vx version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			doc := struct {
				Version string `json:"version"`
			}{version}
			return a.emit(doc, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "vx %s\n", version)
				return err
			})
		},
	}
}

// declaresMCP reports whether the workspace declares the mcp() plugin. A config that does not load
// still counts when its file imports @vzn/vx-mcp, so a broken config never hides the server.
func (a *app) declaresMCP(ctx context.Context) bool {
	ws, err := a.load(ctx)
	if err == nil {
		return ws.MCP != nil
	}
	return a.importsMCP()
}

// importsMCP reports whether vx.workspace.ts imports @vzn/vx-mcp, read as text.
func (a *app) importsMCP() bool {
	root, err := workspace.FindRoot(a.workDir())
	if err != nil {
		return false
	}
	src, err := os.ReadFile(filepath.Join(root, workspace.ConfigFileName))
	return err == nil && strings.Contains(string(src), "@vzn/vx-mcp")
}

// firstVerb is the first argument that is not a flag or a flag's value.
func firstVerb(args []string) string {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			return ""
		case arg == "-C" || arg == "--chdir" || arg == "--log-level" || arg == "--format" || arg == "--cache-dir":
			i++
		case strings.HasPrefix(arg, "-"):
		default:
			return arg
		}
	}
	return ""
}

// chdirFlag finds -C before cobra parses the line, since the tree depends on the workspace.
func chdirFlag(args []string) string {
	for i, arg := range args {
		switch {
		case (arg == "-C" || arg == "--chdir") && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(arg, "--chdir="):
			return strings.TrimPrefix(arg, "--chdir=")
		case strings.HasPrefix(arg, "-C") && len(arg) > 2:
			return strings.TrimPrefix(strings.TrimPrefix(arg, "-C"), "=")
		}
	}
	return ""
}

// cacheDirFlag answers --cache-dir's value as given in args, for the loader made before the flags
// are parsed (vx mcp, help).
func cacheDirFlag(args []string) string {
	for i, arg := range args {
		switch {
		case arg == "--":
			return ""
		case arg == "--cache-dir" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(arg, "--cache-dir="):
			return strings.TrimPrefix(arg, "--cache-dir=")
		}
	}
	return ""
}

func hasVersionFlag(args []string) bool {
	for _, a := range args {
		if a == "-v" || a == "--version" {
			return true
		}
	}
	return false
}

func hasHelpFlag(args []string) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" {
			return true
		}
	}
	return false
}
