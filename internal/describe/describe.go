// Package describe owns the view agpol describe prints. For a Gateway, HTTPRoute or
// XBackend: the data plane and listeners (Gateway), the XAccessPolicies attached to it
// (admitted or not, enforced or not), the gateway level once per group of listeners
// that share it, every path through it with its evaluation chain and what the data
// plane does on it (a plain HTTP listener carries no client certificate; a rule that
// reaches no backend answers 500), and the effective Kuadrant AuthPolicy. For an
// XAccessPolicy or AuthPolicy: its targets, where it applies and where not (and why),
// its rules, and what overrides or shadows it. It selects and decides; it prints
// nothing (render.DescribeText and render.DescribeDocument do).
package describe

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Kinds that can be described.
const (
	KindGateway       = "Gateway"
	KindHTTPRoute     = "HTTPRoute"
	KindXBackend      = "XBackend"
	KindXAccessPolicy = "XAccessPolicy"
	KindAuthPolicy    = "AuthPolicy"
)

// Policy is one XAccessPolicy attached to the described object.
type Policy struct {
	ID        string              `json:"policy"`
	Action    string              `json:"action"`
	Version   string              `json:"apiVersion"`
	Source    string              `json:"source,omitempty"`
	Admission effective.Admission `json:"admission"`
	// NotEnforced is "" when the policy runs, else why not; OtherDataPlane when it is
	// that another data plane serves the gateway (render writes that sentence, and
	// NotEnforced in -o json).
	NotEnforced    string                    `json:"notEnforced,omitempty"`
	OtherDataPlane *effective.OtherDataPlane `json:"-"`
}

// Path is one path through the described object with its chain.
type Path struct {
	// Gateway is "ns/name" and Listener the listener's name.
	Gateway  string `json:"gateway"`
	Listener string `json:"listener"`
	// Route is "ns/name", "" for a path without a route; RuleName or RuleIndex names
	// the route rule.
	Route     string `json:"route,omitempty"`
	RuleName  string `json:"ruleName,omitempty"`
	RuleIndex int    `json:"ruleIndex"`
	// BackendKind (topology.BackendXBackend, ...) and Backend ("ns/name") name the
	// backend the rule reaches; BackendKind is "" or topology.BackendNone without one.
	BackendKind string `json:"backendKind,omitempty"`
	Backend     string `json:"backend,omitempty"`
	// NoBackend is set when the rule reaches no backend, to why: the data plane answers
	// 500 and only the gateway level runs.
	NoBackend string `json:"noBackend,omitempty"`
	// Refused is why the rule reaches no backend, as data (nil when it reaches one).
	Refused *topology.NoBackend `json:"refused,omitempty"`
	// PlainHTTP is set when the listener is plain HTTP: callers present no client
	// certificate, so only rules that match any caller can match.
	PlainHTTP bool             `json:"plainHTTP,omitempty"`
	Chain     *effective.Chain `json:"chain,omitempty"`
	// GatewayLevel is the index in View.GatewayLevels of this path's gateway level, -1
	// when the view has none (an HTTPRoute or XBackend view).
	GatewayLevel int `json:"gatewayLevel"`
}

// Listener is one listener of a described Gateway.
type Listener struct {
	Name     string `json:"name"`
	Port     int32  `json:"port"`
	Protocol string `json:"protocol"`
	Hostname string `json:"hostname,omitempty"`
	// TLS is the listener's TLS mode ("Terminate", "Passthrough"), "" without TLS.
	TLS string `json:"tls,omitempty"`
	// MTLS is whether callers present a client certificate: "required", "none" or
	// "unknown" (a data plane agpol does not model), and MTLSWhy why.
	MTLS    string `json:"mtls"`
	MTLSWhy string `json:"mtlsWhy"`
	// AttachedRoutes counts the HTTPRoutes attached to the listener.
	AttachedRoutes int  `json:"attachedRoutes"`
	Programmed     bool `json:"programmed"`
	// NotProgrammed says why the data plane carries no routes on it.
	NotProgrammed string `json:"notProgrammed,omitempty"`
	// ListenerSet is "namespace/name" of the ListenerSet the listener comes from, ""
	// for the Gateway's own.
	ListenerSet string `json:"listenerSet,omitempty"`
}

// GatewayLevel is the gateway level of a Gateway, shared by the listeners named.
type GatewayLevel struct {
	Listeners []string         `json:"listeners"`
	Level     *effective.Level `json:"level"`
}

// Target names the described object.
type Target struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// View is the effective view of one Gateway, HTTPRoute or XBackend.
type View struct {
	Target Target `json:"target"`
	// Kind and Name ("ns/name") repeat Target for the text.
	Kind      string `json:"-"`
	Name      string `json:"-"`
	Source    string `json:"source,omitempty"`
	Semantics string `json:"semantics"`
	// DataPlane is the data plane that serves a described Gateway, and why.
	DataPlane *topology.GatewayDataPlane `json:"dataPlane,omitempty"`
	// Listeners are a described Gateway's listeners, in spec order.
	Listeners []Listener `json:"listeners,omitempty"`
	// GatewayLevels are a described Gateway's gateway levels, one per group of
	// listeners that enforce the same one; each Path points to its own.
	GatewayLevels []GatewayLevel `json:"gatewayLevels,omitempty"`
	Policies      []Policy       `json:"accessPolicies,omitempty"`
	Paths         []Path         `json:"paths,omitempty"`
	Notes         []string       `json:"notes,omitempty"`
	// AuthPolicy is the effective Kuadrant AuthPolicy per listener (Gateway) or per rule
	// and listener path (HTTPRoute); empty without AuthPolicies.
	AuthPolicy []*authpolicy.PathResult `json:"-"`
	// AuthPolicyPaths are AuthPolicy in the machine-readable form.
	AuthPolicyPaths []AuthPath `json:"authPolicy,omitempty"`
	// AccessPolicy is the view of a described XAccessPolicy.
	AccessPolicy *AccessPolicyView `json:"accessPolicy,omitempty"`
	// AuthPolicyStatus is the view of a described AuthPolicy.
	AuthPolicyStatus *AuthPolicyView `json:"authPolicyStatus,omitempty"`
	// AuthPolicyV1beta2 is the view of a described kuadrant.io/v1beta2 AuthPolicy.
	AuthPolicyV1beta2 *V1beta2AuthPolicyView `json:"authPolicyV1beta2,omitempty"`
	// V1beta2AuthPolicies are the kuadrant.io/v1beta2 AuthPolicies bearing on a
	// described Gateway or HTTPRoute (kuadrant-operator v0.6.1 semantics).
	V1beta2AuthPolicies []*V1beta2AuthPolicyView `json:"authPoliciesV1beta2,omitempty"`
	// RuleSources maps every XAccessPolicy rule ID of the view to where it is written.
	RuleSources map[string]string `json:"ruleSources,omitempty"`
}

// Build computes the view of the object of kind (KindGateway, KindHTTPRoute or
// KindXBackend) ns/name in m's snapshot under sem, with ServiceAccount identities in
// trust domain td. It fails when the object is not in the snapshot.
func Build(m *model.Model, sem effective.Semantics, td, kind, ns, name string) (*View, error) {
	return build(m, effective.NewEngineOn(m.Graph(), m.Snapshot, sem, td), kind, ns, name)
}

// build is Build with the engine of the semantics (one for every view of a List).
func build(m *model.Model, e *effective.Engine, kind, ns, name string) (*View, error) {
	s, g, sem := m.Snapshot, m.Graph(), e.Semantics
	d := &View{Target: Target{kind, ns, name}, Kind: kind, Name: ns + "/" + name, Semantics: sem.Name}
	var target topology.Ref
	var paths []topology.Path
	switch kind {
	case KindGateway:
		target = topology.GatewayRef(ns, name)
		gw := g.Gateway(target)
		if gw == nil {
			return nil, notFound(s, "gateway", ns, name)
		}
		d.Source = gw.Source.String()
		paths = g.Paths(target)
		dp := g.DataPlane(gw)
		d.DataPlane = &dp
		d.Listeners = listeners(g, gw, dp)
	case KindHTTPRoute:
		ref := topology.HTTPRouteRef(ns, name)
		rt := g.HTTPRoute(ref)
		if rt == nil {
			return nil, notFound(s, "httproute", ns, name)
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
			return nil, notFound(s, "xbackend", ns, name)
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
	case KindXAccessPolicy:
		return accessPolicyView(s, g, e, d)
	case KindAuthPolicy:
		return authPolicyView(m, d)
	default:
		return nil, fmt.Errorf("cannot describe kind %q", kind)
	}
	d.AuthPolicy = authPolicies(m, kind, ns, name)
	d.AuthPolicyPaths = authPaths(d.AuthPolicy)
	d.V1beta2AuthPolicies = v1beta2OnTarget(m, kind, ns, name)
	if target.Kind != "" {
		d.Policies = policies(s, e, kind, target)
	}
	for _, p := range paths {
		d.Paths = append(d.Paths, path(e, p))
	}
	if kind == KindGateway {
		d.GatewayLevels = gatewayLevels(d.Paths)
	}
	d.RuleSources = ruleSources(d)
	return d, nil
}

// listeners lists gw's listeners with their attached routes and programmed state.
func listeners(g *topology.Graph, gw *snapshot.Gateway, dp topology.GatewayDataPlane) []Listener {
	ref := topology.GatewayRef(gw.Namespace, gw.Name)
	attached := map[string]int{}
	for _, at := range g.Attachments(ref) {
		if at.Accepted {
			attached[at.Listener]++
		}
	}
	entries := make([]topology.SetListener, 0, len(gw.Spec.Listeners))
	for _, l := range gw.Spec.Listeners {
		entries = append(entries, topology.SetListener{Name: string(l.Name), Entry: gwapiv1.ListenerEntry(l)})
	}
	entries = append(entries, g.ListenerSetListeners(ref)...)
	var out []Listener
	for _, e := range entries {
		l := e.Entry
		li := Listener{Name: e.Name, Port: int32(l.Port), Protocol: string(l.Protocol), AttachedRoutes: attached[e.Name]}
		if e.ListenerSet != nil {
			li.ListenerSet = e.ListenerSet.Namespace + "/" + e.ListenerSet.Name
		}
		if l.Hostname != nil {
			li.Hostname = string(*l.Hostname)
		}
		if l.TLS != nil {
			li.TLS = "Terminate"
			if l.TLS.Mode != nil {
				li.TLS = string(*l.TLS.Mode)
			}
		}
		switch {
		case l.Protocol == gwapiv1.HTTPSProtocolType && dp.Agentic():
			li.MTLS, li.MTLSWhy = "required", "the kube-agentic-networking data plane requires a client certificate on HTTPS listeners"
		case l.Protocol == gwapiv1.HTTPProtocolType:
			li.MTLS, li.MTLSWhy = "none", "plain HTTP carries no client certificate"
		default:
			li.MTLS, li.MTLSWhy = "unknown", "agpol does not model client certificates of "+string(l.Protocol)+" listeners on the "+string(dp.DataPlane)+" data plane"
		}
		li.NotProgrammed = g.ListenerNotProgrammed(ref, li.Name)
		li.Programmed = li.NotProgrammed == ""
		out = append(out, li)
	}
	return out
}

// gatewayLevels groups the paths' gateway levels by what they enforce, in path order,
// and points each path to its group.
func gatewayLevels(paths []Path) []GatewayLevel {
	var out []GatewayLevel
	bySig := map[string]int{}
	for i := range paths {
		l := paths[i].Chain.Gateway
		sig := levelSignature(l)
		if o := paths[i].Chain.OtherDataPlane; o != nil {
			sig += "\x00" + o.Gateway.Namespace + "/" + o.Gateway.Name
		}
		k, ok := bySig[sig]
		if !ok {
			k = len(out)
			bySig[sig] = k
			out = append(out, GatewayLevel{Level: l})
		}
		if !slices.Contains(out[k].Listeners, paths[i].Listener) {
			out[k].Listeners = append(out[k].Listeners, paths[i].Listener)
		}
		paths[i].GatewayLevel = k
	}
	return out
}

// levelSignature identifies what a level enforces: its policies, rules and ignored ones.
func levelSignature(l *effective.Level) string {
	var b strings.Builder
	if l.ExtAuth != nil {
		fmt.Fprintf(&b, "x:%s/%t;", l.ExtAuth.ID(), l.ExtAuthFilter)
	}
	for _, p := range l.Allow {
		b.WriteString("a:" + p.ID() + ";")
		for _, r := range p.Rules {
			b.WriteString(r.ID() + ",")
		}
	}
	for _, r := range l.Merged {
		b.WriteString("m:" + r.ID() + ";")
	}
	for _, r := range l.LegacyExt {
		b.WriteString("l:" + r.ID() + ";")
	}
	for _, c := range l.Collisions {
		b.WriteString("c:" + c.Kept + "/" + c.Replaced + ";")
	}
	for _, ig := range l.Ignored {
		b.WriteString("i:" + ig.ID + "/" + ig.Reason + ";")
	}
	return b.String()
}

// ruleSources maps each rule of the view's chains to where it is written.
func ruleSources(d *View) map[string]string {
	out := map[string]string{}
	add := func(rs []*effective.Rule) {
		for _, r := range rs {
			if !r.Builtin {
				out[r.ID()] = r.Source.String()
			}
		}
	}
	for _, p := range d.Paths {
		for _, l := range p.Chain.Levels() {
			if l.ExtAuth != nil {
				add(l.ExtAuth.Rules)
			}
			for _, p := range l.Allow {
				add(p.Rules)
			}
			add(l.Merged)
			add(l.LegacyExt)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// policies lists the XAccessPolicies naming target, by ID, each with its admission and
// why its level does not enforce it.
func policies(s *snapshot.Snapshot, e *effective.Engine, kind string, target topology.Ref) []Policy {
	notEnforced := map[string]string{}
	var lvl *effective.Level
	var other *effective.OtherDataPlane
	if kind == KindGateway {
		c := e.Chain(target, "", nil)
		other = c.OtherDataPlane
		lvl = c.Gateway
	} else {
		gw := topology.GatewayRef("", "")
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
		if dp.NotEnforced == "" {
			dp.OtherDataPlane = other
		}
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
	dp := Path{Gateway: p.Gateway.Namespace + "/" + p.Gateway.Name, Listener: p.Listener, RuleIndex: p.RuleIndex, RuleName: p.RuleName, GatewayLevel: -1}
	if p.Route != nil {
		dp.Route = p.Route.Namespace + "/" + p.Route.Name
	}
	for _, l := range p.Gateway.Spec.Listeners {
		if string(l.Name) == p.Listener && l.Protocol == gwapiv1.HTTPProtocolType {
			dp.PlainHTTP = true
		}
	}
	var be *topology.Ref
	dp.Refused = topology.NoBackendOf(p)
	switch {
	case dp.Refused != nil:
		dp.NoBackend = dp.Refused.Problem
	case p.Backend.Kind == topology.BackendXBackend:
		ref := topology.XBackendRef(p.Backend.Ref.Namespace, p.Backend.Ref.Name)
		be = &ref
	}
	if p.Backend.Kind != "" && p.Backend.Kind != topology.BackendNone {
		dp.BackendKind, dp.Backend = p.Backend.Kind, p.Backend.Ref.Namespace+"/"+p.Backend.Ref.Name
	}
	dp.Chain = e.Chain(topology.GatewayRef(p.Gateway.Namespace, p.Gateway.Name), p.Listener, be)
	if dp.Refused != nil {
		dp.Refused.GatewayLevelRuns = dp.Chain != nil && dp.Chain.OtherDataPlane == nil
	}
	return dp
}

// AuthPath is the effective Kuadrant AuthPolicy of one path (prefix).
type AuthPath struct {
	Path authpolicy.Path `json:"path"`
	// PoliciesInPath are the policies folded, least specific first.
	PoliciesInPath []string `json:"policiesInPath"`
	// Effective are the rules in force, by key.
	Effective []EffectiveAuthRule `json:"effective"`
	// Lost are the rules that lost in the fold, and why.
	Lost []authpolicy.Lost `json:"lost,omitempty"`
	// Unprogrammed says why Kuadrant never programs the path's Gateway: the effective
	// policy is computed, but no data plane runs it. nil when one does; render writes
	// NotProgrammed, its text in -o json.
	Unprogrammed  *authpolicy.Reason `json:"-"`
	NotProgrammed string             `json:"notProgrammed,omitempty"`
}

// EffectiveAuthRule is one rule in force on a path: its key, the policy it comes from
// and where it is written.
type EffectiveAuthRule struct {
	Key    string `json:"key"`
	Policy string `json:"policy"`
	Source string `json:"source,omitempty"`
}

func authPaths(ps []*authpolicy.PathResult) []AuthPath {
	var out []AuthPath
	for _, p := range ps {
		ap := AuthPath{Path: p.Path, PoliciesInPath: []string{}, Effective: []EffectiveAuthRule{}, Unprogrammed: p.Unprogrammed}
		if p.Effective != nil {
			for _, pol := range p.Effective.Policies {
				ap.PoliciesInPath = append(ap.PoliciesInPath, pol.Ref)
			}
			for _, k := range p.Effective.Keys() {
				r := p.Effective.Rules[k]
				er := EffectiveAuthRule{Key: k, Policy: r.Source}
				if r.Position.Known() {
					er.Source = r.Position.String()
				}
				ap.Effective = append(ap.Effective, er)
			}
			ap.Lost = p.Effective.Lost
		}
		out = append(out, ap)
	}
	return out
}

// authPolicies selects the effective Kuadrant AuthPolicy of a Gateway (per listener) or
// an HTTPRoute (per rule and listener path); nil without AuthPolicies.
func authPolicies(m *model.Model, kind, ns, name string) []*authpolicy.PathResult {
	s := m.Snapshot
	if kind != KindGateway && kind != KindHTTPRoute {
		return nil
	}
	v1 := false
	for _, ap := range s.AuthPolicies {
		if !ap.IsV1beta2() {
			v1 = true
			break
		}
	}
	if !v1 { // none, or only kuadrant.io/v1beta2 ones (V1beta2AuthPolicies)
		return nil
	}
	res := m.AuthPolicy()
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
