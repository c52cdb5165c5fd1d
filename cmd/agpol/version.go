package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/version"
)

type versionOptions struct {
	a      *app
	output string
	// color is accepted for consistency: version prints no colour.
	color string
}

func (o *versionOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate has nothing to check: -o and --color are enum flags, checked when parsed.
func (o *versionOptions) Validate() error { return nil }

func (o *versionOptions) Run(context.Context) error {
	v := version.Get()
	w := o.a.streams.Out
	switch o.output {
	case "json":
		return render.JSON(w, v)
	case "yaml":
		return render.YAML(w, v)
	}
	_, err := fmt.Fprintf(w, "agpol %s (commit %s, built %s, %s)\n", v.Version, orUnknown(v.Commit), orUnknown(v.Date), v.GoVersion)
	return err
}

func (a *app) newVersionCmd() *cobra.Command {
	o := &versionOptions{a: a}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print agpol's version",
		Example: `  agpol version
  agpol version -o json`,
		Args: cobra.NoArgs,
		RunE: a.runE(o),
	}
	addOutputFlag(cmd, &o.output, "text", "json", "yaml")
	addPlainColorFlag(cmd, &o.color, "version prints no colour")
	return cmd
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
