package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/version"
)

type versionOptions struct {
	a      *app
	output render.Format
	// color is accepted for consistency: version prints no colour.
	color string
}

func (o *versionOptions) Complete(*cobra.Command, []string) error { return nil }

// Validate has nothing to check: -o and --color are enum flags, checked when parsed.
func (o *versionOptions) Validate() error { return nil }

func (o *versionOptions) Run(context.Context) error {
	return render.Version(o.a.streams.Out, o.output, version.Get())
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
