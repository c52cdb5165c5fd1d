package authpolicy

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/kuadrant/v1beta2"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// V1beta2RuleRef names one HTTPRouteRule: its route ("ns/name"), its index in the
// route's rules and its name (the rule's own, else "rule-<index+1>").
type V1beta2RuleRef struct {
	Route string `json:"route"`
	Index int    `json:"index"`
	Name  string `json:"name"`
}

// V1beta2SelectorList is one routeSelectors list of a policy and what it selects.
type V1beta2SelectorList struct {
	// Field is "spec.routeSelectors" or "spec.rules.<section>.<name>.routeSelectors".
	Field     string            `json:"field"`
	Selectors []V1beta2Selected `json:"selectors"`
	// Miss is set when the list selects nothing the operator can build a condition
	// from (or names a hostname outside the target's): the policy fails.
	Miss *SelectorMiss `json:"miss,omitempty"`
	// NoSelection is set when the selection was not computed: there is no route to
	// select from.
	NoSelection *NoSelection `json:"-"`
}

// NoSelection says why the selection of a routeSelectors list was not computed, as
// data: the policy has no route to select from, for the reason its condition states
// (render.NoSelectionText).
type NoSelection struct {
	// Condition is the message of the policy's Available condition.
	Condition string
}

// V1beta2Selected is one selector and the route rules it selects.
type V1beta2Selected struct {
	Index    int                   `json:"index"`
	Selector v1beta2.RouteSelector `json:"selector"`
	Rules    []V1beta2RuleRef      `json:"rules,omitempty"`
	// Hostnames are the hostnames the conditions built from the selection name;
	// "*" stands for every hostname of the route (no host condition).
	Hostnames []string `json:"hostnames,omitempty"`
}

// Selections lists each routeSelectors list of the policy (top-level first, then the
// rules' in Rules order) with what each selector selects in the route(s) the policy's
// conditions are built from (KO61 api/v1beta2/route_selectors.go:L26-L68): the targeted
// route, or for a Gateway policy the rules of the routes it covers.
func (p *V1beta2Policy) Selections() []V1beta2SelectorList {
	var out []V1beta2SelectorList
	add := func(field string, sels []v1beta2.RouteSelector) {
		if len(sels) == 0 {
			return
		}
		l := V1beta2SelectorList{Field: field}
		for i := range p.EmptySelectors {
			if p.EmptySelectors[i].Field == field {
				m := p.EmptySelectors[i]
				l.Miss = &m
			}
		}
		for i, s := range sels {
			sel := V1beta2Selected{Index: i, Selector: s}
			if p.route != nil {
				for _, ri := range SelectRules(s, p.route) {
					sel.Rules = append(sel.Rules, p.ruleRef(ri))
				}
				if len(sel.Rules) > 0 {
					sel.Hostnames = hostStrings(hostnamesForConditions(s, p.route))
				}
			}
			l.Selectors = append(l.Selectors, sel)
		}
		if p.route == nil {
			l.NoSelection = &NoSelection{Condition: p.Condition.Message}
		}
		out = append(out, l)
	}
	add("spec.routeSelectors", p.spec.RouteSelectors)
	for _, nr := range p.spec.AuthScheme.Rules() {
		add("spec.rules."+nr.Section+"."+nr.Name+".routeSelectors", nr.Rule.RouteSelectors)
	}
	return out
}

// CoveredRules are the route rules the policy's top-level conditions cover: the rules its
// top-level routeSelectors select, or every rule of the route(s) without them. Nil
// when no AuthConfig is built from a route.
func (p *V1beta2Policy) CoveredRules() []V1beta2RuleRef {
	if p.route == nil {
		return nil
	}
	var idx []int
	if len(p.spec.RouteSelectors) > 0 {
		idx, _ = p.selected(p.spec.RouteSelectors)
	} else {
		for i := range p.route.Spec.Rules {
			idx = append(idx, i)
		}
	}
	out := make([]V1beta2RuleRef, 0, len(idx))
	for _, i := range idx {
		out = append(out, p.ruleRef(i))
	}
	return out
}

// ruleRef maps a rule index of p.route to the route rule it comes from.
func (p *V1beta2Policy) ruleRef(i int) V1beta2RuleRef {
	var ref V1beta2RuleRef
	switch {
	case i < len(p.origins):
		ref = p.origins[i]
	case len(p.Routes) > 0:
		ref = V1beta2RuleRef{Route: p.Routes[0].Route, Index: i}
	default:
		ref = V1beta2RuleRef{Index: i}
	}
	name := gwapiv1.SectionName("")
	if i < len(p.route.Spec.Rules) && p.route.Spec.Rules[i].Name != nil {
		name = *p.route.Spec.Rules[i].Name
	}
	ref.Name = RuleName(ref.Index, string(name))
	return ref
}

// RoutePolicy is the v1beta2 policy that holds route ("ns/name") as its own target and
// built an AuthConfig for it (a Gateway policy does not cover such a route); nil
// when none.
func (r *V1beta2Result) RoutePolicy(route string) *V1beta2Policy {
	if p := r.byRoute[route]; p != nil && p.built {
		return p
	}
	return nil
}

// GatewayRoutes are the HTTPRoutes ("ns/name") whose parentRefs name Gateway gw
// ("ns/name"), in ns/name order.
func (r *V1beta2Result) GatewayRoutes(gw string) []string {
	var out []string
	for _, rt := range r.gwRoutes[gw] {
		out = append(out, rt.Namespace+"/"+rt.Name)
	}
	return out
}

// Built reports whether the operator builds an AuthConfig for the policy.
func (p *V1beta2Policy) Built() bool { return p.built }

// fillGatewayRules sets, for a Gateway policy, the rules of each covered route that its
// top-level conditions cover.
func (p *V1beta2Policy) fillGatewayRules() {
	at := map[string]int{}
	for i := range p.Routes {
		at[p.Routes[i].Route] = i
	}
	for _, r := range p.CoveredRules() {
		if i, ok := at[r.Route]; ok {
			p.Routes[i].Rules = append(p.Routes[i].Rules, r.Index)
		}
	}
}

// unprogrammedV1beta2 says, per Gateway ("ns/name"), why kuadrant-operator v0.6.1 never
// programs it: it enforces an AuthPolicy through an Istio AuthorizationPolicy on the
// Gateway's workload (KO61 controllers/authpolicy_istio_authorizationpolicy.go), so only
// Istio Gateways run it; as for kuadrant.io/v1, a Gateway whose class is not in the input
// and that nothing marks as another data plane's is assumed to be one it programs.
func unprogrammedV1beta2(planes map[*snapshot.Gateway]topology.GatewayDataPlane) map[string]*Reason {
	out := map[string]*Reason{}
	for g, dp := range planes {
		if dp.DataPlane == topology.DataPlaneIstio || (dp.DataPlane == topology.DataPlaneGatewayAPI && dp.Assumed) {
			continue
		}
		ref := g.Namespace + "/" + g.Name
		out[ref] = &Reason{Code: ReasonUnprogrammedV1beta2, Ref: ref, DataPlane: dp}
	}
	return out
}

// Unprogrammed says why kuadrant-operator v0.6.1 never programs Gateway gw ("ns/name"),
// or nil when it does (or gw is not in the input).
func (r *V1beta2Result) Unprogrammed(gw string) *Reason { return r.unprogrammed[gw] }

// applyDataPlanes lowers the enforcement of an enforced policy whose target's Gateways
// kuadrant-operator v0.6.1 does not program: its AuthConfig exists and its status is
// what the operator writes, but no data plane sends requests to Authorino.
func (r *V1beta2Result) applyDataPlanes(p *V1beta2Policy, routes map[string]*snapshot.HTTPRoute) {
	if p.Enforcement != Enforced && p.Enforcement != PartiallyEnforced {
		return
	}
	tr := p.Object.V1beta2.Spec.TargetRef
	var gws []string
	if tr.Kind == "Gateway" {
		gws = []string{p.Object.Namespace + "/" + string(tr.Name)}
	} else if rt := routes[p.Object.Namespace+"/"+string(tr.Name)]; rt != nil {
		gws = parentGateways(rt)
	}
	programmed := 0
	for _, g := range gws {
		if why := r.unprogrammed[g]; why != nil {
			p.Unprogrammed = append(p.Unprogrammed, *why)
			p.Why = append(p.Why, *why)
		} else {
			programmed++
		}
	}
	switch {
	case len(p.Unprogrammed) == 0:
	case programmed == 0:
		p.Enforcement = NotEnforced
	default:
		p.Enforcement = PartiallyEnforced
	}
}
