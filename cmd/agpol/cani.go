package main

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/whatif"
)

// whatifFlags are the flags the what-if commands share.
type whatifFlags struct {
	decideFlags
	tools                      string
	extauth                    string
	gateway, listener, backend string

	// Completed: the tools inventory read, the authorizer's answer, the space filter.
	inv    *whatif.Inventory
	ext    explain.ExtAuth
	filter whatif.Filter
	// before is diff's before engine while the after one is built (whatif.Options.Before).
	before *whatif.Engine
}

// completeWhatif resolves the namespace and presets, reads the inventory, and builds
// the filter and the authorizer's answer of the flags.
func (w *whatifFlags) completeWhatif() error {
	if err := w.complete(); err != nil {
		return err
	}
	var err error
	if w.inv, err = readInventory(w.tools); err != nil {
		return err
	}
	if w.ext, err = parseExtAuth(w.extauth); err != nil {
		return err
	}
	w.filter, err = w.buildFilter(w.namespace)
	return err
}

func (w *whatifFlags) addWhatif(a *app, cmd *cobra.Command, formats ...render.Format) {
	w.add(cmd, formats...)
	f := cmd.Flags()
	f.StringVar(&w.tools, "tools", "", "tools inventory (JSON): a saved MCP tools/list response per backend, see docs/tools-inventory.md")
	f.StringVar(&w.extauth, "extauth", "", "external authorizer answer: allow, deny, or gateway=allow,backend=deny (default: unknown, cells are indeterminate)")
	f.StringVar(&w.gateway, "gateway", "", "only paths through this gateway NAMESPACE/NAME")
	f.StringVar(&w.listener, "listener", "", "only paths through this listener")
	f.StringVar(&w.backend, "backend", "", "only paths to this backend NAMESPACE/NAME (XBackend or Service)")
	_ = cmd.RegisterFlagCompletionFunc("gateway", a.completeFrom(&w.load, completeGateways))
	_ = cmd.RegisterFlagCompletionFunc("backend", a.completeFrom(&w.load, completeXBackends))
	f.Lookup("color").Usage = "accepted for consistency; the what-if answers and tables are not coloured: " + strings.Join(colorModes, ", ")
}

const whatifSpaceHelp = `The decision space is enumerated exactly: every identity (the ServiceAccounts of
the input, every identity a rule source names, anonymous, and <other authenticated>, a
caller no rule names, which stands for "anyone"), every gateway → listener → backend path
of an accepted route (a Service backend has gateway-level policies only; on a plain-HTTP
listener every caller is anonymous), and every operation: initialize, tools/list and
tools/call of each tool. Tools come from --tools (see docs/tools-inventory.md) or, for a
backend the inventory does not list, from the tool names its policies mention, plus
<other tool>, any tool no policy names.`

// buildFilter builds the space filter from the flags.
func (w *whatifFlags) buildFilter(ns string) (whatif.Filter, error) {
	f := whatif.Filter{Listener: w.listener}
	for _, x := range []struct {
		flag, val string
		dst       *string
	}{{"--gateway", w.gateway, &f.Gateway}, {"--backend", w.backend, &f.Backend}} {
		if x.val == "" {
			continue
		}
		n, err := explain.ParseNamespacedName(x.val, ns)
		if err != nil {
			return f, usagef("%s: %v", x.flag, err)
		}
		*x.dst = n.String()
	}
	return f, nil
}

// readInventory reads --tools.
func readInventory(name string) (*whatif.Inventory, error) {
	if name == "" {
		return nil, nil
	}
	data, err := readBounded("tools inventory", name, nil)
	if err != nil {
		return nil, err
	}
	return whatif.ParseInventory(name, data)
}

// engine loads a snapshot with l and builds its decision space under sems, checking
// the names of q against it: a warning (stderr) for each one the space does not hold, a
// usage error for a filter naming nothing in the input.
func (a *app) engine(ctx context.Context, w *whatifFlags, l *loadFlags, sems []effective.Semantics, q whatif.Question) (*whatif.Engine, *model.Model, error) {
	l.wholeCluster = true
	m, err := a.load(ctx, l)
	if err != nil {
		return nil, nil, err
	}
	end := a.progress.Stage("compiling the policies")
	q.InventoryName = w.tools
	e, warns, err := whatif.Prepare(m, sems, w.options(), q)
	end()
	render.WhatifWarnings(a.streams.ErrOut, warns)
	if err != nil {
		return nil, nil, usagef("%v", err)
	}
	return e, m, nil
}

// options are the engine's options of the flags.
func (w *whatifFlags) options() whatif.Options {
	return whatif.Options{TrustDomain: w.trustDomain, Inventory: w.inv, ExtAuth: w.ext, Before: w.before}
}

func semNames(sems []effective.Semantics) []string {
	out := make([]string, len(sems))
	for i, s := range sems {
		out[i] = s.Name
	}
	return out
}

type canIOptions struct {
	whatifFlags
	personaFlags
	from   string
	list   bool
	tool   string
	method string

	// caller is --from (Complete); op the operation asked about without --list.
	caller      explain.Caller
	op          whatif.Op
	methodGiven bool
}

func (o *canIOptions) Complete(cmd *cobra.Command, _ []string) error {
	if err := o.completeWhatif(); err != nil {
		return err
	}
	if o.personas != "" || o.at != "" {
		o.methodGiven = cmd.Flags().Changed("method")
		return o.personaFlags.complete(o.a, o.namespace)
	}
	if o.from != "" {
		var err error
		if o.caller, err = explain.ParseCaller(o.from); err != nil {
			return usagef("--from: %v", err)
		}
	}
	o.methodGiven = cmd.Flags().Changed("method")
	o.op = whatif.Op{Method: o.method, Tool: o.tool}
	return nil
}

func (o *canIOptions) Validate() error {
	if o.personas != "" {
		switch {
		case o.from == "":
			return usagef("--from PERSONA is required with --personas: the name of a persona of %s", o.personas)
		case !slices.ContainsFunc(o.people, func(p explain.Persona) bool { return p.Name == o.from }):
			return usagef("--from %q: no persona of that name in %s", o.from, o.personas)
		case o.list || o.tool != "" || o.methodGiven || o.listener != "":
			return usagef("--personas answers per Kuadrant path (Gateway → listener → HTTPRoute → rule): --list, --tool, --method and --listener do not apply")
		}
		return o.load.validate()
	}
	if o.at != "" {
		return usagef("--time is for --personas")
	}
	if o.from == "" {
		return usagef("--from IDENTITY is required (%s)", explain.CallerForms)
	}
	if o.list == (o.tool != "" || o.methodGiven) {
		return usagef("give either --list or --tool TOOL (or --method for a base-protocol method)")
	}
	if !o.list {
		switch {
		case o.op.Method != "tools/call" && o.tool != "":
			return usagef("--tool is for --method tools/call")
		case o.op.Method == "tools/call" && o.tool == "":
			return usagef("--tool TOOL is required with --method tools/call")
		}
	}
	return o.load.validate()
}

func (o *canIOptions) Run(ctx context.Context) error {
	a, f := o.a, o.filter
	if o.personas != "" {
		m, err := o.personaMatrix(ctx, &o.whatifFlags)
		if err != nil {
			return err
		}
		ans, _ := m.Answer(o.from)
		if err := render.PersonaCanI(a.streams.Out, o.output, ans); err != nil {
			return err
		}
		return verdictExit(ans.Verdict)
	}
	e, md, err := a.engine(ctx, &o.whatifFlags, &o.load, o.sems, whatif.Question{Filter: f, CheckFilter: true, Caller: &o.caller, Tool: o.tool})
	if err != nil {
		return err
	}
	s := md.Snapshot
	id := e.IdentityFor(o.caller)
	w := a.streams.Out
	if o.list {
		return render.CanIList(w, o.output, s, e.CanIList(id, f))
	}
	answers, err := e.CanI(id, o.op, f)
	if err != nil {
		if errors.Is(err, whatif.ErrNoTarget) {
			if err := render.CanINoTarget(w, errors.Unwrap(err)); err != nil {
				return err
			}
			return &resultError{code: exitFail}
		}
		return err
	}
	if err := render.CanI(w, o.output, s, semNames(o.sems), id, o.op, answers, e.Skipped(o.op, f)); err != nil {
		return err
	}
	return verdictExit(whatif.Verdict(answers))
}

func (a *app) newCanICmd() *cobra.Command {
	o := &canIOptions{whatifFlags: whatifFlags{decideFlags: decideFlags{a: a}}}
	cmd := &cobra.Command{
		Use:   "can-i (--list | --tool TOOL) --from IDENTITY",
		Short: "What may an identity call: one yes/no answer, or everything with --list",
		Long: `Answer whether an identity may call a tool, like kubectl auth can-i: "yes" (exit 0),
"no" (exit 1) or "indeterminate" (exit 3, the answer depends on an external authorizer).
With --gateway and/or --backend the question is asked of the paths they select. For a tool,
when the inventory (--tools) or the backend-level policies show which backends offer it,
only the paths to those backends are asked (the others are named as not asked). The answer
is yes (exit 0) only when every path asked says yes; when the paths disagree the first line
says how many say what ("no (yes on 1 of 5 paths, no on 4)") and each path is listed, and
the exit code is 1 when some path says no, else 3.

With --list, print every (gateway, listener, backend, operation) of the decision space for
the identity, allowed or not, with the deciding rule.

A --gateway, --listener or --backend that the input does not hold is an error (exit 2) that
names the nearest one. An identity or a tool that appears in no policy, no ServiceAccount and
no tools inventory is answered as any caller (tool) no rule names, with a warning on stderr
naming the nearest known one.

With --personas FILE --from PERSONA (Kuadrant personas, docs/kuadrant-identities.md) it
answers whether Authorino lets the persona through the paths an AuthPolicy protects
(through --gateway, to --backend, when given): yes when some path allows, and the answer
and reason on each path.

` + whatifSpaceHelp + `

` + exitCodesHelp,
		Example: `  # Everything billing may and may not do in the example scenario
  agpol can-i --list --from sa:agents/billing -f testdata/examples

  # Yes or no
  agpol can-i --from sa:agents/support --tool refund --gateway infra/edge \
      --backend pay/ledger -f testdata/examples

  # May the Kuadrant persona john reach the toystore's routes?
  agpol can-i --personas personas.yaml --from john -f toystore.yaml --time 2026-05-01T10:00:00Z`,
		Args: cobra.NoArgs,
		RunE: a.runE(o),
	}
	o.addWhatif(a, cmd, "text", "json", "yaml")
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "caller: "+explain.CallerForms+"; with --personas, a persona's name")
	f.BoolVar(&o.list, "list", false, "list every operation of every path for the identity")
	f.StringVar(&o.tool, "tool", "", "tool name (tools/call)")
	_ = cmd.RegisterFlagCompletionFunc("from", a.completeFrom(&o.load, completeIdentities))
	_ = cmd.RegisterFlagCompletionFunc("tool", a.completeFrom(&o.load, completeTools))
	f.StringVar(&o.method, "method", "tools/call", "MCP method: tools/call, initialize or tools/list")
	o.personaFlags.add(cmd, "with --from PERSONA, whether Authorino lets the persona through the AuthPolicy-protected paths (through --gateway, to --backend)")
	return cmd
}
