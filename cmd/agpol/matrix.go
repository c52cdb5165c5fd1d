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
	personaFlags
}

// personaFlags are --personas and --time, of matrix, who-can and can-i.
type personaFlags struct {
	// personas is a file of Kuadrant identities (docs/kuadrant-identities.md); at their
	// request time (--time, RFC 3339).
	personas, at string
	people       []explain.Persona
	when         time.Time
}

// complete reads the persona file and the time.
func (p *personaFlags) complete(a *app, namespace string) error {
	if p.at != "" {
		t, err := time.Parse(time.RFC3339, p.at)
		if err != nil {
			return usagef("--time %q: use RFC 3339, e.g. 2026-05-01T10:00:00Z", p.at)
		}
		p.when = t
	}
	if p.personas != "" {
		data, err := readBounded("persona file", p.personas, a.streams.In)
		if err != nil {
			return err
		}
		if p.people, err = explain.ParsePersonaFile(p.personas, data, namespace); err != nil {
			return err
		}
	}
	return nil
}

// add adds --personas (what says what the command answers for them) and --time.
func (p *personaFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&p.personas, "personas", "", "file of Kuadrant personas (name and identity each): "+what+", as Authorino decides (docs/kuadrant-identities.md)")
	cmd.Flags().StringVar(&p.at, "time", "", "request time of the personas' calls, RFC 3339 (without it a token's exp is not decided)")
}

func (o *matrixOptions) Complete(*cobra.Command, []string) error {
	if err := o.completeWhatif(); err != nil {
		return err
	}
	o.filter.Identities = o.from
	return o.personaFlags.complete(o.a, o.namespace)
}

func (o *matrixOptions) Validate() error { return o.load.validate() }

func (o *matrixOptions) Run(ctx context.Context) error {
	a, f := o.a, o.filter
	if o.personas != "" {
		m, err := a.load(ctx, &o.load)
		if err != nil {
			return err
		}
		return render.PersonaMatrix(a.streams.Out, o.output, whatif.Personas(m, o.people, o.when))
	}
	e, md, err := a.engine(ctx, &o.whatifFlags, &o.load, o.sems, whatif.Question{Filter: f, CheckFilter: true, Rows: o.from})
	if err != nil {
		return err
	}
	end := a.progress.Stagef("deciding %d identities × %d targets", len(e.Identities), len(e.Targets))
	m := e.Matrix(f)
	end()
	return render.Matrix(a.streams.Out, o.output, md.Snapshot, m, o.ungroup)
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
	o.personaFlags.add(cmd, "which of them each AuthPolicy-protected path lets through")
	cmd.MarkFlagsMutuallyExclusive("personas", "from")
	return cmd
}

// personaMatrix loads the input and decides every persona on every Kuadrant path that
// --gateway and --backend select; an error when none is selected.
func (p *personaFlags) personaMatrix(ctx context.Context, w *whatifFlags) (*whatif.PersonaMatrix, error) {
	md, err := w.a.load(ctx, &w.load)
	if err != nil {
		return nil, err
	}
	m := whatif.Personas(md, p.people, p.when).Filter(whatif.PersonaFilter{Gateway: w.filter.Gateway, Backend: w.filter.Backend})
	if len(m.Rows) == 0 {
		return nil, usagef("no path%s is protected by a Kuadrant AuthPolicy on a Gateway Kuadrant programs", w.pathScope())
	}
	return m, nil
}

// pathScope is " through GATEWAY to BACKEND" as the flags narrow the paths.
func (w *whatifFlags) pathScope() string {
	var out string
	if w.filter.Gateway != "" {
		out += " through " + w.filter.Gateway
	}
	if w.filter.Backend != "" {
		out += " to " + w.filter.Backend
	}
	return out
}
