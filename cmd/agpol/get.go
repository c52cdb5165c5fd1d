package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// getKinds maps every accepted TYPE spelling to its canonical resource.
var getKinds = map[string]string{
	"gateways": "gateways", "gateway": "gateways", "gtw": "gateways", "gw": "gateways",
	"httproutes": "httproutes", "httproute": "httproutes", "routes": "httproutes", "route": "httproutes",
	"xbackends": "xbackends", "xbackend": "xbackends", "xb": "xbackends", "backends": "xbackends", "backend": "xbackends",
	"xaccesspolicies": "xaccesspolicies", "xaccesspolicy": "xaccesspolicies", "xap": "xaccesspolicies",
	"accesspolicies": "xaccesspolicies", "accesspolicy": "xaccesspolicies",
	"authpolicies": "authpolicies", "authpolicy": "authpolicies",
}

// getFormats are the -o formats of agpol get beyond the object printers: the topology
// drawn as a graph (graph.go).
var getFormats = map[string]func(a *app, s *snapshot.Snapshot, kinds []string, name string) error{
	render.GraphDOT: func(a *app, s *snapshot.Snapshot, kinds []string, name string) error {
		return a.runGraph(s, kinds, name, render.GraphDOT)
	},
	render.GraphMermaid: func(a *app, s *snapshot.Snapshot, kinds []string, name string) error {
		return a.runGraph(s, kinds, name, render.GraphMermaid)
	},
}

// getHooks fill the computed columns of agpol get: the admission of XAccessPolicies
// (describe.go) and the enforcement of AuthPolicies (effective.go).
var getHooks = []func(*snapshot.Snapshot, *render.Computed){admissionGetHook, authPolicyGetHook}

type getOptions struct {
	load      loadFlags
	output    string
	noHeaders bool
}

func (a *app) newGetCmd() *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get TYPE[,TYPE...] [NAME]",
		Short: "List gateways, routes, backends and policies",
		Long: `List Gateways, HTTPRoutes, XBackends, XAccessPolicies and AuthPolicies, from files (-f)
or the live cluster, with the policies attached to each target and the status recorded on
each policy.

TYPE is one of (short names in brackets):
  gateways (gateway, gtw, gw)
  httproutes (httproute, routes, route)
  xbackends (xbackend, xb, backends)
  xaccesspolicies (xaccesspolicy, xap, accesspolicies)
  authpolicies (authpolicy)
Several types can be given comma-separated.`,
		Example: `  # List the access policies of the shipped examples, with the file and line of each
  agpol get xaccesspolicies -f testdata/examples -o json

  # Gateways and backends in every namespace of the current cluster
  agpol get gateways,xbackends -A

  # One policy, wide
  agpol get xap calc-allow -n shop -f manifests/ -o wide`,
		Args: cobra.RangeArgs(1, 2),
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return []string{"gateways", "httproutes", "xbackends", "xaccesspolicies", "authpolicies"}, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var kinds []string
			for _, t := range strings.Split(args[0], ",") {
				k, ok := getKinds[strings.ToLower(t)]
				if !ok {
					return usagef("unknown type %q: use gateways, httproutes, xbackends, xaccesspolicies or authpolicies", t)
				}
				kinds = append(kinds, k)
			}
			name := ""
			if len(args) == 2 {
				name = args[1]
				// NS/NAME, as describe and explain take it, is the same as -n NS NAME.
				if ns, n, ok := strings.Cut(name, "/"); ok && ns != "" && n != "" {
					*a.config.Namespace, name = ns, n
					o.load.allNamespaces = false
				}
			}
			extra, isExtra := getFormats[o.output]
			switch o.output {
			case "", "table", "wide", "json", "yaml", "name":
			default:
				if !isExtra {
					formats := []string{"table", "wide", "json", "yaml", "name"}
					for f := range getFormats {
						formats = append(formats, f)
					}
					sort.Strings(formats[5:])
					return usagef("unknown output format %q: use one of %s", o.output, strings.Join(formats, ", "))
				}
			}
			s, err := a.load(cmd.Context(), &o.load)
			if err != nil {
				return err
			}
			if err := o.load.refusePartial(s, func(res string) bool { return slices.Contains(kinds, res) }); err != nil {
				return err
			}
			if isExtra {
				return extra(a, s, kinds, name)
			}
			return a.runGet(o, s, kinds, name)
		},
	}
	o.load.addFlags(cmd)
	o.load.addAllowPartial(cmd)
	cmd.Flags().StringVarP(&o.output, "output", "o", "table", "output format: table, wide, json, yaml or name; dot or mermaid for gateways (a topology graph)")
	cmd.Flags().BoolVar(&o.noHeaders, "no-headers", false, "omit table headers")
	return cmd
}

func (a *app) runGet(o *getOptions, s *snapshot.Snapshot, kinds []string, name string) error {
	targets := topology.IndexTargets(s)
	ns := a.namespaceFilter(o.load.allNamespaces)
	var items []render.Item
	var tables []*render.Table
	computed := render.Computed{}
	for _, hook := range getHooks {
		hook(s, &computed)
	}
	for _, k := range kinds {
		// A kind the cluster does not serve lists empty: say why, not just "No resources found".
		for _, missing := range s.NotInstalled {
			if strings.HasPrefix(missing, k+".") {
				fmt.Fprintf(a.streams.ErrOut, "warning: %s is not installed in the cluster (no CRD serves it)\n", missing)
			}
		}
		sel := render.Selector{Namespace: ns, Name: name}
		t, its := render.GetView(k, s, targets, sel, o.output == "wide", computed)
		items = append(items, its...)
		tables = append(tables, t)
	}
	if name != "" && len(items) == 0 {
		return fmt.Errorf("%s %q not found", strings.Join(kinds, ","), name)
	}
	w := a.streams.Out
	switch o.output {
	case "json":
		return render.JSON(w, render.NewList(items))
	case "yaml":
		return render.YAML(w, render.NewList(items))
	case "name":
		for _, it := range items {
			fmt.Fprintln(w, it.ResourceName())
		}
		return nil
	}
	if len(items) == 0 {
		where := "in the input"
		switch {
		case ns != "":
			where = "in namespace " + ns
		case len(o.load.files) == 0:
			where = "in the cluster"
		}
		fmt.Fprintf(a.streams.ErrOut, "No resources found %s.\n", where)
		return nil
	}
	for i, t := range tables {
		if len(t.Rows) == 0 {
			continue
		}
		if i > 0 && len(tables) > 1 {
			fmt.Fprintln(w)
		}
		if err := t.Write(w, o.noHeaders); err != nil {
			return err
		}
	}
	return nil
}
