// Package describe owns the effective view of one Gateway, HTTPRoute or XBackend that
// agpol describe prints: the XAccessPolicies attached to it (admitted or not, enforced or
// not), every path through it with its evaluation chain and what the data plane does on
// it (a plain HTTP listener carries no client certificate; a rule that reaches no backend
// answers 500), and the effective Kuadrant AuthPolicy. It selects and decides; it prints
// nothing (render.DescribeText does).
package describe

import (
	"fmt"
	"sort"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Kinds that can be described.
const (
	KindGateway   = "Gateway"
	KindHTTPRoute = "HTTPRoute"
	KindXBackend  = "XBackend"
)

// Policy is one XAccessPolicy attached to the described object.
type Policy struct {
	ID        string
	Action    string
	Version   string
	Source    string
	Admission effective.Admission
	// NotEnforced is "" when the policy runs, else why not.
	NotEnforced string
}

// Path is one path through the described object with its chain.
type Path struct {
	// Gateway is "ns/name" and Listener the listener's name.
	Gateway  string
	Listener string
	// Route is "ns/name", "" for a path without a route; RuleName or RuleIndex names
	// the route rule.
	Route     string
	RuleName  string
	RuleIndex int
	// BackendKind (topology.BackendXBackend, ...) and Backend ("ns/name") name the
	// backend the rule reaches; BackendKind is "" or topology.BackendNone without one.
	BackendKind string
	Backend     string
	// NoBackend is set when the rule reaches no backend, to why: the data plane answers
	// 500 and only the gateway level runs.
	NoBackend string
	// PlainHTTP is set when the listener is plain HTTP: callers present no client
	// certificate, so only rules that match any caller can match.
	PlainHTTP bool
	Chain     *effective.Chain
}

// View is the effective view of one Gateway, HTTPRoute or XBackend.
type View struct {
	Kind      string
	Name      string
	Source    string
	Semantics string
	Policies  []Policy
	Paths     []Path
	Notes     []string
	// AuthPolicy is the effective Kuadrant AuthPolicy per listener (Gateway) or per rule
	// and listener path (HTTPRoute); empty without AuthPolicies.
	AuthPolicy []*authpolicy.PathResult
}

// Build computes the view of the object of kind (KindGateway, KindHTTPRoute or
// KindXBackend) ns/name in s under sem, with ServiceAccount identities in trust domain
// td. It fails when the object is not in s.
func Build(s *snapshot.Snapshot, sem effective.Semantics, td, kind, ns, name string) (*View, error) {
	g := topology.BuildGraph(s)
	e := effective.NewEngine(s, sem, td)
	d := &View{Kind: kind, Name: ns + "/" + name, Semantics: sem.Name}
	var target topology.Ref
	var paths []topology.Path
	switch kind {
	case KindGateway:
		target = topology.GatewayRef(ns, name)
		gw := g.Gateway(target)
		if gw == nil {
			return nil, fmt.Errorf("gateway %s/%s not found", ns, name)
		}
		d.Source = gw.Source.String()
		paths = g.Paths(target)
	case KindHTTPRoute:
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
	case KindXBackend:
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
	default:
		return nil, fmt.Errorf("cannot describe kind %q", kind)
	}
	d.AuthPolicy = authPolicies(s, kind, ns, name)
	if target.Kind != "" {
		d.Policies = policies(s, e, kind, target)
	}
	for _, p := range paths {
		d.Paths = append(d.Paths, path(e, p))
	}
	return d, nil
}

// policies lists the XAccessPolicies naming target, by ID, each with its admission and
// why its level does not enforce it.
func policies(s *snapshot.Snapshot, e *effective.Engine, kind string, target topology.Ref) []Policy {
	notEnforced := map[string]string{}
	var lvl *effective.Level
	if kind == KindGateway {
		lvl = e.Chain(target, "", nil).Gateway
	} else {
		gw := effective.GatewayRef("", "")
		lvl = e.Chain(gw, "", &target).Backend
	}
	for _, ig := range lvl.Ignored {
		notEnforced[ig.ID] = ig.Reason
	}
	var out []Policy
	targets := topology.IndexTargets(s)
	for _, p := range targets.AccessPolicies[target] {
		dp := Policy{ID: p.Namespace + "/" + p.Name, Action: string(p.Spec.Action), Version: p.APIVersion(),
			Source: p.Source.String(), Admission: e.Admission[p], NotEnforced: notEnforced[p.Namespace+"/"+p.Name]}
		if dp.Action == "" {
			dp.Action = "<no action>"
		}
		out = append(out, dp)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// path is the view of one topology path: its chain and what the data plane does on it.
func path(e *effective.Engine, p topology.Path) Path {
	dp := Path{Gateway: p.Gateway.Namespace + "/" + p.Gateway.Name, Listener: p.Listener, RuleIndex: p.RuleIndex, RuleName: p.RuleName}
	if p.Route != nil {
		dp.Route = p.Route.Namespace + "/" + p.Route.Name
	}
	for _, l := range p.Gateway.Spec.Listeners {
		if string(l.Name) == p.Listener && l.Protocol == gwapiv1.HTTPProtocolType {
			dp.PlainHTTP = true
		}
	}
	var be *topology.Ref
	switch {
	case p.RuleProblem != "":
		dp.NoBackend = p.RuleProblem
	case p.Backend.Problem != "":
		dp.NoBackend = p.Backend.Problem
	case p.Backend.Kind == topology.BackendXBackend:
		ref := topology.XBackendRef(p.Backend.Ref.Namespace, p.Backend.Ref.Name)
		be = &ref
	}
	if p.Backend.Kind != "" && p.Backend.Kind != topology.BackendNone {
		dp.BackendKind, dp.Backend = p.Backend.Kind, p.Backend.Ref.Namespace+"/"+p.Backend.Ref.Name
	}
	dp.Chain = e.Chain(effective.GatewayRef(p.Gateway.Namespace, p.Gateway.Name), p.Listener, be)
	return dp
}

// authPolicies selects the effective Kuadrant AuthPolicy of a Gateway (per listener) or
// an HTTPRoute (per rule and listener path); nil without AuthPolicies.
func authPolicies(s *snapshot.Snapshot, kind, ns, name string) []*authpolicy.PathResult {
	if len(s.AuthPolicies) == 0 || (kind != KindGateway && kind != KindHTTPRoute) {
		return nil
	}
	res := authpolicy.Compute(s)
	var sections []string
	switch kind {
	case KindGateway:
		for _, gw := range s.Gateways {
			if gw.Namespace == ns && gw.Name == name {
				for _, l := range gw.Spec.Listeners {
					sections = append(sections, string(l.Name))
				}
			}
		}
	case KindHTTPRoute:
		for _, rt := range s.HTTPRoutes {
			if rt.Namespace == ns && rt.Name == name {
				for i, r := range rt.Spec.Rules {
					name := ""
					if r.Name != nil {
						name = string(*r.Name)
					}
					sections = append(sections, authpolicy.RuleName(i, name))
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
