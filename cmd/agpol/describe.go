package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/describe"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/render"
)

type describeOptions struct {
	load        loadFlags
	semantics   string
	trustDomain string
	color       string
}

func (a *app) newDescribeCmd() *cobra.Command {
	o := &describeOptions{}
	cmd := &cobra.Command{
		Use:   "describe gateway|httproute|xbackend NAME",
		Short: "Show the effective access policy of a gateway, route or backend",
		Long: `Show the effective view of one Gateway, HTTPRoute or XBackend: the XAccessPolicies
attached to it (admitted or rejected, and why; enforced or ignored, and why), and for each
path through it (listener, route rule, backend) the evaluation chain as the data plane
runs it, with the rules at each level in the order they are matched.

NAME is NAME (in -n NAMESPACE, default "default") or NAMESPACE/NAME.`,
		Example: `  agpol describe gateway infra/edge -f testdata/examples
  agpol describe xbackend ledger -n pay -f testdata/examples --semantics proposal-0059`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := strings.ToLower(args[0])
			switch kind {
			case "gateway", "gateways", "gw", "gtw":
				kind = "Gateway"
			case "httproute", "httproutes", "route", "routes":
				kind = "HTTPRoute"
			case "xbackend", "xbackends", "xb", "backend", "backends":
				kind = "XBackend"
			default:
				return usagef("cannot describe %q: use gateway, httproute or xbackend", args[0])
			}
			sem, err := effective.Preset(o.semantics)
			if err != nil {
				return usagef("%v", err)
			}
			ns := a.defaultNamespace()
			name := args[1]
			if n, nm, ok := strings.Cut(name, "/"); ok {
				ns, name = n, nm
			}
			o.load.wholeCluster = true
			s, err := a.load(cmd.Context(), &o.load)
			if err != nil {
				return err
			}
			d, err := describe.Build(s, sem, o.trustDomain, kind, ns, name)
			if err != nil {
				return err
			}
			w := a.streams.Out
			return render.DescribeText(w, d, render.Styler{Color: render.UseColor(render.ColorMode(o.color), w)})
		},
	}
	o.load.addFlags(cmd)
	addEnumFlag(cmd, &o.semantics, "semantics", "", effective.PresetReference, "semantics preset", "semantics preset", effective.PresetNames())
	cmd.Flags().StringVar(&o.trustDomain, "trust-domain", "cluster.local", "SPIFFE trust domain of ServiceAccount identities")
	addColorFlag(cmd, &o.color)
	return cmd
}
