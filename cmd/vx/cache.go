package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/history"
	"github.com/vzn/vx/engine/prune"
)

func (a *app) cacheCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Inspect and prune the cache",
		// An unknown verb under cache is refused (with a hint), not answered with the help.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(withUsage(a.cachePruneCmd()), withUsage(a.cacheStatsCmd()))
	return cmd
}

func (a *app) cachePruneCmd() *cobra.Command {
	var olderThan, maxSize string
	var dryRun, auto bool
	var lockFD int
	cmd := &cobra.Command{
		Use:   "prune [--older-than D] [--max-size S] [--dry-run]",
		Short: "Evict cache entries by age and size, and remove blobs no entry references (never run history)",
		Long: `Evict cache entries last used longer ago than --older-than, then the least recently used until the
rest fit in --max-size, and remove blobs no entry references. Without either limit, the workspace's
cacheRetention applies (default: 30 days, 10GB or a tenth of the disk). An entry whose key a run is
executing, in this checkout or another sharing the store, is kept. Run history is never removed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// The shared store and the checkout's folder; a broken config does not stop a prune.
			req := prune.Request{OlderThan: olderThan, MaxSize: maxSize, DryRun: dryRun, Getenv: a.getenv, Dirs: a.workspaceLoader().StoreDirs}
			release, err := a.pruneLock(cmd, &req, auto, lockFD)
			if err != nil {
				return err
			}
			defer release()
			res, err := prune.Run(cmd.Context(), a.workspaceLoader().Root, req)
			if err != nil {
				return err
			}
			return a.emit(res, func(w io.Writer) error {
				verb := "freed"
				if dryRun {
					verb = "would free"
				}
				for _, e := range res.Evicted {
					fmt.Fprintf(w, "evict %s %s %d bytes, last used %s\n", short(e.Hash), e.TaskID, e.Size,
						e.LastUsed.Local().Format(time.DateTime))
				}
				_, err := fmt.Fprintf(w, "%d entries evicted, %d orphan blobs (%d bytes), %d stale stat-cache rows: %s %d bytes\n",
					len(res.Evicted), res.Orphans, res.OrphanBytes, res.StaleFileStats, verb, res.BytesFreed)
				return err
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&olderThan, "older-than", "", "evict entries last used longer ago than `D` (12h, 7d, 2w)")
	f.StringVar(&maxSize, "max-size", "", "evict least recently used entries until the cache fits in `S` (500MB, 2G; 0 empties it)")
	f.BoolVar(&dryRun, "dry-run", false, "answer what would be pruned; remove nothing")
	f.BoolVar(&auto, "auto", false, "the retention prune a run starts in the background")
	_ = f.MarkHidden("auto")
	f.IntVar(&lockFD, "lock-fd", 0, "the descriptor of the store's prune lock, which the run that started this prune took")
	_ = f.MarkHidden("lock-fd")
	return cmd
}

func (a *app) cacheStatsCmd() *cobra.Command {
	var project string
	cmd := &cobra.Command{
		Use:   "stats [--project P]",
		Short: "Cache entries, size, task executions and hits in the last 24 hours, hit rate",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.openState(ctx)
			if err != nil {
				return err
			}
			defer st.Close()
			doc, err := history.Cache(ctx, st, project, time.Now())
			if err != nil {
				return err
			}
			return a.emit(doc, func(w io.Writer) error {
				rate := "-"
				if doc.HitRate != nil {
					rate = fmt.Sprintf("%.1f%%", *doc.HitRate*100)
				}
				remoteHits := ""
				if doc.RemoteHits24h > 0 {
					remoteHits = fmt.Sprintf(" (%d from the remote cache)", doc.RemoteHits24h)
				}
				_, err := fmt.Fprintf(w, "%d entries, %d bytes; last 24h: %d task executions, %d hits%s, hit rate %s\n",
					doc.Entries, doc.TotalBytes, doc.Runs24h, doc.Hits24h, remoteHits, rate)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "narrow every number to project `P`")
	return cmd
}
