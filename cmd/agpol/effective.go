package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/suggest"
)

func (a *app) newEffectiveCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "effective",
		Short: "Show the effective policy that runs for a target",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("name a policy kind: %s effective authpolicy --target KIND/NS/NAME", a.name)
		},
	}
	cmd.AddCommand(a.newEffectiveAuthPolicyCmd())
	// Flags belong to the policy kind: `effective -f x` points there.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usagef("%v: name a policy kind first: %s effective authpolicy --target KIND/NS/NAME -f FILE|DIR", err, a.name)
	})
	return cmd
}

type effectiveAuthPolicyOptions struct {
	a        *app
	load     loadFlags
	target   string
	gateway  string
	listener string
	output   render.Format
	// color is accepted for consistency: effective's output is not coloured.
	color string

	// query is --target read (Complete); a NAME alone leaves its Kind to Run, which
	// looks the name up in the input.
	query     authpolicy.Query
	namespace string
}

func (o *effectiveAuthPolicyOptions) Complete(*cobra.Command, []string) error {
	o.namespace = o.a.defaultNamespace()
	o.load.namespace = o.namespace
	o.load.wholeCluster = true
	if o.target == "" {
		return nil // Validate says it is required
	}
	var err error
	o.query, err = parseAuthPolicyTarget(o.target, o.namespace)
	return err
}

func (o *effectiveAuthPolicyOptions) Validate() error {
	if o.target == "" {
		return usagef("--target is required (KIND/NS/NAME[#SECTION], KIND gateway or httproute)")
	}
	return o.load.validate()
}

func (o *effectiveAuthPolicyOptions) Run(ctx context.Context) error {
	m, err := o.a.load(ctx, &o.load)
	if err != nil {
		return err
	}
	v, err := authpolicy.ForTarget(m.Graph(), o.query, o.target, o.gateway, o.listener)
	if err != nil {
		return usagef("%v%s", err, targetHint(m.Snapshot, o.query))
	}
	return render.EffectiveAuthPolicy(o.a.streams.Out, o.output, m.Snapshot, v)
}

func (a *app) newEffectiveAuthPolicyCmd() *cobra.Command {
	o := &effectiveAuthPolicyOptions{a: a}
	cmd := &cobra.Command{
		Use:     "authpolicy --target KIND/NS/NAME[#SECTION]",
		Aliases: []string{"authpolicies", "ap"},
		Short:   "Fold the Kuadrant AuthPolicies along the paths to a target (Defaults & Overrides)",
		Long: `Compute the effective Kuadrant AuthPolicy the way kuadrant-operator does: every
AuthPolicy attached along a path Gateway → listener → HTTPRoute → rule is folded from
the most specific upwards, and the less specific policy's kind and strategy decide
(defaults/overrides, atomic/merge; bare rules are atomic defaults). Each effective rule
shows the policy it came from; rules that lost are listed with the reason.

The target maps to path prefixes ending at it:
  gateway/NS/NAME             [gateway]
  gateway/NS/NAME#LISTENER    [gateway, listener]
  httproute/NS/NAME           [gateway, listener, route] for each listener it attaches to
  httproute/NS/NAME#RULE      [gateway, listener, route, rule]
Only the policies attached along the prefix are folded. NS may be left out (then -n,
or "default"). Unnamed route rules are rule-1, rule-2, ...

The enforcement of every AuthPolicy (Enforced, PartiallyEnforced, Overridden,
NotInPath, TargetNotFound, Invalid) is computed over every path of the input.`,
		Example: `  # What runs in front of the ledger route, per listener
  agpol effective authpolicy --target httproute/pay/ledger -f testdata/examples

  # One rule, only through the https listener, as JSON
  agpol effective authpolicy --target httproute/tools/tools#calc \
      --listener https -f testdata/examples -o json

  # The gateway-level policy alone
  agpol effective authpolicy --target gateway/infra/edge -f testdata/examples`,
		Args: cobra.NoArgs,
		RunE: a.runE(o),
	}
	o.load.addInputFlags(cmd) // every namespace is read: no -A
	f := cmd.Flags()
	f.StringVar(&o.target, "target", "", "KIND/NS/NAME[#SECTION] with KIND gateway or httproute (SECTION: listener or rule name)")
	f.StringVar(&o.gateway, "gateway", "", "only paths through this Gateway (NS/NAME) (httproute targets)")
	f.StringVar(&o.listener, "listener", "", "only paths through this listener (httproute targets)")
	addOutputFlag(cmd, &o.output, "text", "json", "yaml")
	addPlainColorFlag(cmd, &o.color, "effective's output is not coloured")
	return cmd
}

var authPolicyTargetKinds = map[string]string{
	"gateway": "Gateway", "gateways": "Gateway", "gw": "Gateway", "gtw": "Gateway",
	"httproute": "HTTPRoute", "httproutes": "HTTPRoute", "route": "HTTPRoute", "routes": "HTTPRoute",
}

// parseAuthPolicyTarget reads KIND/NS/NAME[#SECTION], KIND/NAME[#SECTION] (namespace ns) or
// NAME[#SECTION] (in namespace ns; its Kind is left empty for authpolicy.ForTarget).
func parseAuthPolicyTarget(target, ns string) (authpolicy.Query, error) {
	var q authpolicy.Query
	ref, section, _ := strings.Cut(target, "#")
	parts := strings.Split(ref, "/")
	switch len(parts) {
	case 3:
		q.Namespace, q.Name = parts[1], parts[2]
	case 2:
		q.Namespace, q.Name = ns, parts[1]
	case 1:
		q.Namespace, q.Name = ns, parts[0]
	default:
		return q, usagef("--target %q: use KIND/NS/NAME[#SECTION]", target)
	}
	q.Section = section
	if len(parts) > 1 {
		kind, ok := authPolicyTargetKinds[strings.ToLower(parts[0])]
		if !ok {
			return q, usagef("--target %q: unknown kind %q (use gateway or httproute)", target, parts[0])
		}
		q.Kind = kind
	}
	if q.Namespace == "" || q.Name == "" {
		return q, usagef("--target %q: empty namespace or name", target)
	}
	return q, nil
}

// targetHint is "; " and suggest's hint when the --target object is not in s ("" when
// it is, or nothing is close): the same NAME in another namespace, a gateway given as
// an httproute or the other way round.
func targetHint(s *snapshot.Snapshot, q authpolicy.Query) string {
	kinds := []string{"gateway", "httproute"}
	if q.Kind != "" {
		kinds = []string{strings.ToLower(q.Kind)}
	}
	ask := func(o suggest.Object) string {
		if o.Kind == "gateway" || o.Kind == "httproute" {
			return "--target " + o.Kind + "/" + o.ID()
		}
		return ""
	}
	if h := suggest.Hint(suggest.Query{Kinds: kinds, Namespace: q.Namespace, Name: q.Name, Ask: ask}, suggest.Objects(s)); h != "" {
		return "; " + h
	}
	return ""
}
