package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/vzn/vx/engine/docsearch"
)

func (a *app) docsCmd() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:   "docs [QUERY...]",
		Short: "Search the reference manual (offline): the sections holding every word, best first; its contents with no query",
		RunE: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				contents, err := docsearch.ManualContents()
				if err != nil {
					return err
				}
				return a.emit(contents, contents.WriteText)
			}
			res, err := docsearch.Search(strings.Join(args, " "), limit)
			if err != nil {
				return err
			}
			return a.emit(res, res.WriteText)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", docsearch.DefaultLimit, "the most sections to answer (1..100)")
	return cmd
}
