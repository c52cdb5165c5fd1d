package main

import (
	"fmt"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

func init() {
	commands = append(commands, (*app).newDescribeCmd)
	getHooks = append(getHooks, admissionGetHook)
}

// admissionGetHook fills the ACCEPTED column and the admission object of agpol get
// xaccesspolicies with the admission agpol computes (§7), and the recorded status.
func admissionGetHook(s *snapshot.Snapshot, c *render.Computed) {
	if len(s.XAccessPolicies) == 0 {
		return
	}
	adm := effective.Admit(s, effective.Reference())
	c.Admission = func(p *snapshot.XAccessPolicy) render.State {
		a, ok := adm[p]
		if !ok {
			return render.State{Cell: "<unknown>"}
		}
		return render.State{Cell: a.Cell(), InForce: a.Accepted, Detail: admissionDetail{Accepted: a.Accepted, Reason: a.Reason,
			Message: a.Message, Recorded: a.Recorded, DiffersFromRecorded: a.DiffersFromRecorded}}
	}
}

type admissionDetail struct {
	Accepted            bool              `json:"accepted"`
	Reason              string            `json:"reason"`
	Message             string            `json:"message,omitempty"`
	Recorded            *effective.Status `json:"recorded,omitempty"`
	DiffersFromRecorded bool              `json:"differsFromRecorded"`
}

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
			switch render.ColorMode(o.color) {
			case render.ColorAuto, render.ColorAlways, render.ColorNever:
			default:
				return usagef("invalid --color %q: use auto, always or never", o.color)
			}
			sem, err := effective.Preset(o.semantics)
			if err != nil {
				return usagef("%v", err)
			}
			ns := "default"
			if a.config.Namespace != nil && *a.config.Namespace != "" {
				ns = *a.config.Namespace
			}
			name := args[1]
			if n, nm, ok := strings.Cut(name, "/"); ok {
				ns, name = n, nm
			}
			o.load.wholeCluster = true
			s, err := a.load(cmd.Context(), &o.load)
			if err != nil {
				return err
			}
			d, err := buildDescribe(s, sem, o.trustDomain, kind, ns, name)
			if err != nil {
				return err
			}
			w := a.streams.Out
			return render.DescribeText(w, d, render.Styler{Color: render.UseColor(render.ColorMode(o.color), w)})
		},
	}
	o.load.addFlags(cmd)
	cmd.Flags().StringVar(&o.semantics, "semantics", effective.PresetReference, "semantics preset: "+strings.Join(effective.PresetNames(), ", "))
	cmd.Flags().StringVar(&o.trustDomain, "trust-domain", "cluster.local", "SPIFFE trust domain of ServiceAccount identities")
	cmd.Flags().StringVar(&o.color, "color", "auto", "colour: auto, always or never")
	return cmd
}

// buildDescribe gathers the effective view (decisions are made by effective; this only selects).
func buildDescribe(s *snapshot.Snapshot, sem effective.Semantics, td, kind, ns, name string) (*render.Describe, error) {
	g := topology.BuildGraph(s)
	e := effective.NewEngine(s, sem, td)
	d := &render.Describe{Kind: kind, Name: ns + "/" + name, Semantics: sem.Name}
	var target topology.Ref
	var paths []topology.Path
	switch kind {
	case "Gateway":
		target = topology.GatewayRef(ns, name)
		gw := g.Gateway(target)
		if gw == nil {
			return nil, fmt.Errorf("gateway %s/%s not found", ns, name)
		}
		d.Source = gw.Source.String()
		paths = g.Paths(target)
	case "HTTPRoute":
		ref := topology.HTTPRouteRef(ns, name)
		rt := g.HTTPRoute(ref)
		if rt == nil {
			return nil, fmt.Errorf("httproute %s/%s not found", ns, name)
		}
		d.Source = rt.Source.String()
		seen := map[topology.Ref]bool{}
		for _, at := range g.AttachmentsOfRoute(ref) {
			gr := topology.GatewayRef(at.Gateway.Namespace, at.Gateway.Name)
			if !at.Accepted {
				d.Notes = append(d.Notes, fmt.Sprintf("not attached to %s/%s listener %s: %s", gr.Namespace, gr.Name, at.Listener, at.Reason))
				continue
			}
			if seen[gr] {
				continue
			}
			seen[gr] = true
			for _, p := range g.Paths(gr) {
				if p.Route != nil && p.Route.Namespace == ns && p.Route.Name == name {
					paths = append(paths, p)
				}
			}
		}
		d.Notes = append(d.Notes, "XAccessPolicies attach to Gateways and XBackends, not to routes: the chains below are those of the route's paths")
	case "XBackend":
		target = topology.XBackendRef(ns, name)
		xb := g.XBackend(target)
		if xb == nil {
			return nil, fmt.Errorf("xbackend %s/%s not found", ns, name)
		}
		d.Source = xb.Source.String()
		for _, gr := range g.GatewaysOfBackend(target) {
			for _, p := range g.Paths(gr) {
				if p.Backend.Kind == topology.BackendXBackend && p.Backend.Ref.Namespace == ns && p.Backend.Ref.Name == name {
					paths = append(paths, p)
				}
			}
		}
		if len(paths) == 0 {
			d.Notes = append(d.Notes, "no route of any gateway reaches this XBackend: its policies produce nothing in the data plane")
		}
	}
	d.AuthPolicy = describeAuthPolicies(s, kind, ns, name)
	if target.Kind != "" {
		notEnforced := map[string]string{}
		var lvl *effective.Level
		if kind == "Gateway" {
			lvl = e.Chain(target, "", nil).Gateway
		} else {
			gw := effective.GatewayRef("", "")
			lvl = e.Chain(gw, "", &target).Backend
		}
		for _, ig := range lvl.Ignored {
			notEnforced[ig.ID] = ig.Reason
		}
		targets := topology.IndexTargets(s)
		for _, p := range targets.AccessPolicies[target] {
			dp := render.DescribePolicy{ID: p.Namespace + "/" + p.Name, Action: string(p.Spec.Action), Version: p.APIVersion(),
				Source: p.Source.String(), Admission: e.Admission[p], NotEnforced: notEnforced[p.Namespace+"/"+p.Name]}
			if dp.Action == "" {
				dp.Action = "<no action>"
			}
			d.Policies = append(d.Policies, dp)
		}
		sort.SliceStable(d.Policies, func(i, j int) bool { return d.Policies[i].ID < d.Policies[j].ID })
	}
	for _, p := range paths {
		gw := effective.GatewayRef(p.Gateway.Namespace, p.Gateway.Name)
		title := fmt.Sprintf("gw %s/%s (%s)", p.Gateway.Namespace, p.Gateway.Name, p.Listener)
		if p.Route != nil {
			title += fmt.Sprintf(" → route %s/%s", p.Route.Namespace, p.Route.Name)
			if p.RuleName != "" {
				title += "#" + p.RuleName
			} else {
				title += fmt.Sprintf("[%d]", p.RuleIndex)
			}
		}
		dp := render.DescribePath{}
		for _, l := range p.Gateway.Spec.Listeners {
			if string(l.Name) == p.Listener && l.Protocol == gwapiv1.HTTPProtocolType {
				dp.Note = "plain HTTP listener: callers present no client certificate, so only rules that match any caller can match"
			}
		}
		var be *topology.Ref
		switch {
		case p.RuleProblem != "":
			dp.Problem = "the data plane answers 500: " + p.RuleProblem
		case p.Backend.Problem != "":
			dp.Problem = "the data plane answers 500: " + p.Backend.Problem
		case p.Backend.Kind == topology.BackendXBackend:
			ref := topology.XBackendRef(p.Backend.Ref.Namespace, p.Backend.Ref.Name)
			be = &ref
		}
		if p.Backend.Kind != "" && p.Backend.Kind != topology.BackendNone {
			title += fmt.Sprintf(" → %s %s/%s", strings.ToLower(p.Backend.Kind), p.Backend.Ref.Namespace, p.Backend.Ref.Name)
		}
		dp.Title = title
		dp.Chain = e.Chain(gw, p.Listener, be)
		d.Paths = append(d.Paths, dp)
	}
	return d, nil
}

// describeAuthPolicies selects the effective Kuadrant AuthPolicy of a Gateway (per
// listener) or an HTTPRoute (per rule and listener path); nil without AuthPolicies.
func describeAuthPolicies(s *snapshot.Snapshot, kind, ns, name string) []*authpolicy.PathResult {
	if len(s.AuthPolicies) == 0 || (kind != "Gateway" && kind != "HTTPRoute") {
		return nil
	}
	res := authpolicy.Compute(s)
	var sections []string
	switch kind {
	case "Gateway":
		for _, gw := range s.Gateways {
			if gw.Namespace == ns && gw.Name == name {
				for _, l := range gw.Spec.Listeners {
					sections = append(sections, string(l.Name))
				}
			}
		}
	case "HTTPRoute":
		for _, rt := range s.HTTPRoutes {
			if rt.Namespace == ns && rt.Name == name {
				for i, r := range rt.Spec.Rules {
					if r.Name != nil && *r.Name != "" {
						sections = append(sections, string(*r.Name))
					} else {
						sections = append(sections, fmt.Sprintf("rule-%d", i+1)) // Kuadrant's synthetic names
					}
				}
			}
		}
	}
	var out []*authpolicy.PathResult
	for _, sec := range sections {
		paths, err := res.Query(authpolicy.Query{Kind: kind, Namespace: ns, Name: name, Section: sec})
		if err == nil {
			out = append(out, paths...)
		}
	}
	return out
}
