package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/whatif"
)

type whoCanOptions struct {
	whatifFlags
	personaFlags
	tool   string
	method string

	// op is the operation asked about (Complete).
	op whatif.Op
}

func (o *whoCanOptions) Complete(*cobra.Command, []string) error {
	if err := o.completeWhatif(); err != nil {
		return err
	}
	o.op = whatif.Op{Method: o.method, Tool: o.tool}
	return o.personaFlags.complete(o.a, o.namespace)
}

func (o *whoCanOptions) Validate() error {
	if o.personas != "" {
		if o.tool != "" || o.method != "tools/call" || o.listener != "" {
			return usagef("--personas answers per Kuadrant path (Gateway → listener → HTTPRoute → rule): --tool, --method and --listener do not apply")
		}
		return o.load.validate()
	}
	if o.at != "" {
		return usagef("--time is for --personas")
	}
	if o.backend == "" && o.op.Method != "tools/call" {
		return usagef("--backend NAMESPACE/NAME is required with --method %s", o.op.Method)
	}
	switch {
	case o.op.Method == "tools/call" && o.op.Tool == "":
		return usagef("--tool TOOL is required with --method tools/call")
	case o.op.Method != "tools/call" && o.op.Tool != "":
		return usagef("--tool is for --method tools/call")
	}
	return o.load.validate()
}

func (o *whoCanOptions) Run(ctx context.Context) error {
	a := o.a
	if o.personas != "" {
		m, err := o.personaMatrix(ctx, &o.whatifFlags)
		if err != nil {
			return err
		}
		return render.PersonaWhoCan(a.streams.Out, o.output, m)
	}
	e, m, err := a.engine(ctx, &o.whatifFlags, &o.load, o.sems, whatif.Question{Filter: o.filter, CheckFilter: true, Tool: o.op.Tool})
	if err != nil {
		return err
	}
	res, err := e.WhoCan(o.op, o.filter)
	if err != nil {
		return usagef("%v", err)
	}
	return render.WhoCan(a.streams.Out, o.output, m.Snapshot, semNames(o.sems), o.op, res)
}

func (a *app) newWhoCanCmd() *cobra.Command {
	o := &whoCanOptions{whatifFlags: whatifFlags{decideFlags: decideFlags{a: a}}}
	cmd := &cobra.Command{
		Use:   "who-can (--tool TOOL [--backend NS/NAME] | --personas FILE) [--gateway NS/NAME]",
		Short: "List every identity that may call a tool on a backend",
		Long: `List, for every path to the backend (through --gateway only, if given), every identity
that may call the tool, those for which it depends on an external authorizer, and the rule
that decides. "anyone" means a rule admits callers no rule names (and, when said, even
callers without a client certificate).

Without --backend, a tool is asked of every backend that offers it: the backends the
tools inventory (--tools) lists it for, or else those whose backend-level policies name it.

A --gateway, --listener or --backend that the input does not hold is an error (exit 2) that
names the nearest one; a tool that appears in no policy and no tools inventory gets a
warning naming the nearest known one.

With --personas FILE (Kuadrant personas, docs/kuadrant-identities.md) it lists instead, for
every path an AuthPolicy protects (through --gateway, to --backend, when given), the
personas Authorino lets through, those it denies (with the status) and those it cannot
decide; --backend is then optional.

` + whatifSpaceHelp + `

` + exitCodesHelp,
		Example: `  # Who may call refund on the ledger?
  agpol who-can --tool refund --backend pay/ledger -f testdata/examples

  # Who may list the calculator's tools, under every semantics preset
  agpol who-can --method tools/list --backend tools/calc --semantics all \
      -f testdata/examples

  # Which Kuadrant personas reach each protected route
  agpol who-can --personas personas.yaml -f toystore.yaml --time 2026-05-01T10:00:00Z`,
		Args: cobra.NoArgs,
		RunE: a.runE(o),
	}
	o.addWhatif(a, cmd, "text", "json", "yaml")
	f := cmd.Flags()
	f.StringVar(&o.tool, "tool", "", "tool name (tools/call)")
	_ = cmd.RegisterFlagCompletionFunc("tool", a.completeFrom(&o.load, completeTools))
	f.StringVar(&o.method, "method", "tools/call", "MCP method: tools/call, initialize or tools/list")
	o.personaFlags.add(cmd, "which of them each AuthPolicy-protected path (through --gateway, to --backend) lets through")
	return cmd
}
