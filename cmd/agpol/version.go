package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/version"
)

func (a *app) newVersionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print agpol's version",
		Example: `  agpol version
  agpol version -o json`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := version.Get()
			switch output {
			case "json":
				return render.JSON(a.streams.Out, v)
			case "yaml":
				return render.YAML(a.streams.Out, v)
			case "", "text":
				fmt.Fprintf(a.streams.Out, "agpol %s (commit %s, built %s, %s)\n", v.Version, orUnknown(v.Commit), orUnknown(v.Date), v.GoVersion)
				return nil
			}
			return usagef("unknown output format %q: use text, json or yaml", output)
		},
	}
	addOutputFlag(cmd, &output, "text", "json", "yaml")
	return cmd
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
