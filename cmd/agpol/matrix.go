package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/whatif"
)

type matrixOptions struct {
	whatifFlags
	ungroup bool
	from    []string
	// personas is a file of Kuadrant identities (docs/kuadrant-identities.md); at their
	// request time (--time, RFC 3339).
	personas, at string
	people       []explain.Persona
	when         time.Time
}

func (o *matrixOptions) Complete(*cobra.Command, []string) error {
	if err := o.completeWhatif(); err != nil {
		return err
	}
	o.filter.Identities = o.from
	if o.at != "" {
		t, err := time.Parse(time.RFC3339, o.at)
		if err != nil {
			return usagef("--time %q: use RFC 3339, e.g. 2026-05-01T10:00:00Z", o.at)
		}
		o.when = t
	}
	if o.personas != "" {
		data, err := readBounded("persona file", o.personas, o.a.streams.In)
		if err != nil {
			return err
		}
		if o.people, err = explain.ParsePersonaFile(o.personas, data, o.namespace); err != nil {
			return err
		}
	}
	return nil
}

func (o *matrixOptions) Validate() error { return o.load.validate() }

func (o *matrixOptions) Run(ctx context.Context) error {
	a, f := o.a, o.filter
	if o.personas != "" {
		s, err := a.load(ctx, &o.load)
		if err != nil {
			return err
		}
		return render.PersonaMatrix(a.streams.Out, o.output, whatif.Personas(s, o.people, o.when))
	}
	e, s, err := a.engine(ctx, &o.whatifFlags, &o.load, o.sems, whatif.Question{Filter: f, CheckFilter: true, Rows: o.from})
	if err != nil {
		return err
	}
	end := a.progress.Stagef("deciding %d identities × %d targets", len(e.Identities), len(e.Targets))
	m := e.Matrix(f)
	end()
	return render.Matrix(a.streams.Out, o.output, s, m, o.ungroup)
}

func (a *app) newMatrixCmd() *cobra.Command {
	o := &matrixOptions{whatifFlags: whatifFlags{decideFlags: decideFlags{a: a}}}
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "The access matrix: identities × (backend, tool)",
		Long: `Print the decision of every identity for every operation of every gateway → listener →
backend path: one table per path, a row per identity (identities with identical rows share
one, unless --ungroup), a column per operation. Cells are allow, deny or ? (indeterminate:
depends on an external authorizer; -o json has both branches), with * where the
--semantics presets disagree.

Formats: table (default), markdown (one table per path, for a pull request or a wiki),
csv (one wide table, a row per identity, a column per path and operation) and json.

` + whatifSpaceHelp + `

` + exitCodesHelp,
		Example: `  # The example scenario's matrix
  agpol matrix -f testdata/examples

  # With the tools the servers really offer, as CSV
  agpol matrix -f testdata/examples --tools testdata/whatif/tools.json -o csv`,
		Args: cobra.NoArgs,
		RunE: a.runE(o),
	}
	o.addWhatif(a, cmd, "table", "text", "markdown", "csv", "json", "yaml")
	cmd.Flags().BoolVar(&o.ungroup, "ungroup", false, "one row per identity, even when rows are identical")
	cmd.Flags().StringSliceVar(&o.from, "from", nil, "only these identities (sa:NAMESPACE/NAME, spiffe://..., anonymous, \"<other authenticated>\"); repeatable")
	_ = cmd.RegisterFlagCompletionFunc("from", a.completeFrom(&o.load, completeIdentities))
	cmd.Flags().StringVar(&o.personas, "personas", "", "file of Kuadrant personas (name and identity each): which of them each AuthPolicy-protected path lets through, as Authorino decides (docs/kuadrant-identities.md)")
	cmd.Flags().StringVar(&o.at, "time", "", "request time of the personas' calls, RFC 3339 (without it a token's exp is not decided)")
	cmd.MarkFlagsMutuallyExclusive("personas", "from")
	return cmd
}
