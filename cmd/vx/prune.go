package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/deploysubset"
)

func (a *app) pruneCmd() *cobra.Command {
	var req deploysubset.Request
	cmd := &cobra.Command{
		Use:   "prune <project>... [--docker] [--production] [--out-dir DIR]",
		Short: "Write the subset of the workspace the named projects need to install and build, with a pruned lockfile",
		Long: `vx prune writes into out/ the folders of the named projects and of every workspace package they
depend on, the root files the package manager reads, and the lockfile pruned to exactly the packages
they resolve (npm, pnpm, Yarn 1, Yarn berry, bun.lock), so that a frozen install accepts it.
With --docker, out/json/ holds the package.json files and install files, out/full/ the sources, and
the pruned lockfile sits at out/'s top. (To evict cache entries, see vx cache prune.)`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := deploysubset.FindRoot(a.workDir())
			if err != nil {
				return err
			}
			req.Root, req.Projects = root, args
			res, err := deploysubset.Run(cmd.Context(), req)
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) error {
				for _, p := range res.Projects {
					fmt.Fprintf(w, "added %s (%s)\n", p.Name, p.Dir)
				}
				_, err := fmt.Fprintf(w, "%s: %d of %d packages kept; %d files written to %s\n",
					res.Lockfile, res.Packages, res.Total, res.Files, res.OutDir)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.BoolVar(&req.Docker, "docker", false, "write json/ (package.json files, install files) and full/ (sources), the lockfile at the top")
	f.BoolVar(&req.Production, "production", false, "leave out devDependencies")
	f.StringVar(&req.OutDir, "out-dir", deploysubset.DefaultOutDir, "write into `DIR` (relative to the workspace root); it must be empty or absent")
	return cmd
}
