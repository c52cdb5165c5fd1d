package describe

import (
	"fmt"
	"slices"
	"sort"

	"github.com/agpol/agpol/internal/apis/kuadrant/v1beta2"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

// V1beta2Semantics names the semantics a kuadrant.io/v1beta2 AuthPolicy is described
// under: kuadrant-operator v0.6.1 (Kuadrant/kuadrant-operator@0d571de) with Authorino
// v0.15.0, as authpolicy.ComputeV1beta2 computes them.
const V1beta2Semantics = "kuadrant-operator v0.6.1"

// Reasons a v1beta2 AuthPolicy is not (or not fully) enforced.
const (
	// V1beta2SecondOnTarget: another policy holds the target (one policy per target).
	V1beta2SecondOnTarget = "SecondPolicyOnTarget"
	// V1beta2HostnameClaimed: an older policy's AuthConfig holds a host of this one.
	V1beta2HostnameClaimed = "HostnameClaimed"
	// V1beta2GatewayOverridden: a Gateway policy, and a route of the Gateway has its own
	// policy, which replaces the Gateway's on that route.
	V1beta2GatewayOverridden = "GatewayDefaultOverridden"
	// V1beta2SelectsNothing: a routeSelectors list selects nothing (or names a hostname
	// outside the target's): the operator fails the policy.
	V1beta2SelectsNothing = "RouteSelectorsSelectNothing"
	// V1beta2NoHostname: neither the route nor its Gateways name a hostname.
	V1beta2NoHostname = "NoHostname"
	// V1beta2NoRoutes: a Gateway policy on a Gateway without routes.
	V1beta2NoRoutes = "NoRoutes"
	// V1beta2NotProgrammed: kuadrant-operator v0.6.1 does not program the Gateway (it
	// programs Istio Gateways only).
	V1beta2NotProgrammed = "NotProgrammed"
)

// V1beta2AuthPolicyView is the view of one kuadrant.io/v1beta2 AuthPolicy: its target,
// where it is enforced and why not, its hostname claims, what its routeSelectors select,
// its rules with file:line, and the kuadrant.io/v1 form it migrates to (lint AGP106).
type V1beta2AuthPolicyView struct {
	Policy     string `json:"policy"`
	APIVersion string `json:"apiVersion"`
	Semantics  string `json:"semantics"`
	// Target is "Kind/ns/name".
	Target string `json:"target"`
	// Role is set in a Gateway or HTTPRoute view: "own" (the described object's own
	// policy), "gateway" (the Gateway's policy covering a route without its own).
	Role string `json:"role,omitempty"`
	// Enforcement is Enforced, PartiallyEnforced, NotEnforced, TargetNotFound or
	// Unsupported; Condition the Available condition the operator would write.
	Enforcement string               `json:"enforcement"`
	Condition   authpolicy.Condition `json:"condition"`
	// Recorded is the Available condition the object's status holds (written by the
	// operator of the cluster it comes from), when it has one.
	Recorded *authpolicy.Condition `json:"recordedCondition,omitempty"`
	// NotEnforced says why it is not enforced, or where not: each with a stable reason.
	NotEnforced []V1beta2Why `json:"notEnforced,omitempty"`
	// Hosts are the hosts its AuthConfig claims in Authorino's index; LostHosts those
	// an older policy holds.
	Hosts     []string               `json:"hosts,omitempty"`
	LostHosts []authpolicy.HostClaim `json:"lostHosts,omitempty"`
	// Covers are the route rules its top-level conditions cover, with file:line.
	Covers []V1beta2Rule `json:"covers,omitempty"`
	// OverriddenOn are, for a Gateway policy, the routes of the Gateway that have a
	// policy of their own (the Gateway's does not cover them).
	OverriddenOn []V1beta2Override `json:"overriddenOn,omitempty"`
	// RouteSelectors are its routeSelectors lists and what each selector selects.
	RouteSelectors []V1beta2Selectors `json:"routeSelectors,omitempty"`
	// Rules are its named patterns, when and rules with where each is written.
	Rules []AuthRule `json:"rules"`
	// V1Form is the kuadrant.io/v1 policy it becomes; NoV1FormWhy says why there is
	// none, as data (render writes NoV1Form, its text in -o json).
	V1Form      *authpolicy.V1Migration `json:"v1Form,omitempty"`
	NoV1FormWhy []authpolicy.Reason     `json:"-"`
	NoV1Form    string                  `json:"noV1Form,omitempty"`
}

// V1beta2Why is one reason a v1beta2 policy is not enforced (somewhere).
// Reason is its code (a V1beta2* constant, the policy's enforcement or its condition's
// reason) and the fields below its data; render writes Message, its sentence in -o json.
type V1beta2Why struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
	// By is the policy that takes its place, when one does.
	By string `json:"by,omitempty"`
	// Why are the policy's reasons (Unsupported, TargetNotFound, the fallback) or the
	// Gateway not programmed (V1beta2NotProgrammed, one).
	Why []authpolicy.Reason `json:"-"`
	// Condition is the message of the condition it fails with (V1beta2SecondOnTarget,
	// V1beta2SelectsNothing); Field the selector list that selects nothing; Route the
	// route with a policy of its own (V1beta2GatewayOverridden); Host the host another
	// policy claims (V1beta2HostnameClaimed).
	Condition string `json:"-"`
	Field     string `json:"-"`
	Route     string `json:"-"`
	Host      string `json:"-"`
}

// V1beta2Rule is one HTTPRouteRule with where it is written.
type V1beta2Rule struct {
	authpolicy.V1beta2RuleRef
	Source string `json:"source,omitempty"`
}

// V1beta2Override is a route of a Gateway with a policy of its own.
type V1beta2Override struct {
	Route  string `json:"route"`
	Policy string `json:"policy"`
}

// V1beta2Selectors is one routeSelectors list and what it selects.
type V1beta2Selectors struct {
	Field     string            `json:"field"`
	Source    string            `json:"source,omitempty"`
	Selectors []V1beta2Selector `json:"selectors"`
	// Miss is set when the operator fails the policy on this list; SelectsNothing is
	// its sentence (render.SelectorMissText), written by render for -o json.
	Miss           *authpolicy.SelectorMiss `json:"-"`
	SelectsNothing string                   `json:"selectsNothing,omitempty"`
	// NoSelection says why the selection was not computed; NotComputed is its
	// sentence (render.NoSelectionText), written by render for -o json.
	NoSelection *authpolicy.NoSelection `json:"-"`
	NotComputed string                  `json:"notComputed,omitempty"`
}

// V1beta2Selector is one selector: as written, and the rules and hostnames it selects.
type V1beta2Selector struct {
	Selector v1beta2.RouteSelector `json:"selector"`
	Source   string                `json:"source,omitempty"`
	Selects  []V1beta2Rule         `json:"selects,omitempty"`
	// Hostnames the built conditions name; ["*"]: every hostname of the route.
	Hostnames []string `json:"hostnames,omitempty"`
}

// findV1beta2 returns the v1beta2 AuthPolicy ns/name of s, or nil.
func findV1beta2(s *snapshot.Snapshot, ns, name string) *snapshot.AuthPolicy {
	for _, ap := range s.AuthPolicies {
		if ap.IsV1beta2() && ap.Namespace == ns && ap.Name == name {
			return ap
		}
	}
	return nil
}

// v1beta2PolicyView fills d with the view of the v1beta2 AuthPolicy d.Target names.
func v1beta2PolicyView(m *model.Model, d *View) (*View, error) {
	s, res := m.Snapshot, m.V1beta2()
	p := res.Policy(d.Name)
	if p == nil {
		return nil, notFound(s, "authpolicy", d.Target.Namespace, d.Target.Name)
	}
	d.Source = p.Object.Source.String()
	d.Semantics = V1beta2Semantics
	v := newV1beta2View(s, res, p, true)
	d.AuthPolicyV1beta2 = v
	return d, nil
}

// newV1beta2View builds the view of p; withV1Form adds its kuadrant.io/v1 form.
func newV1beta2View(s *snapshot.Snapshot, res *authpolicy.V1beta2Result, p *authpolicy.V1beta2Policy, withV1Form bool) *V1beta2AuthPolicyView {
	ap := p.Object
	v := &V1beta2AuthPolicyView{Policy: p.Ref, APIVersion: "kuadrant.io/v1beta2", Semantics: V1beta2Semantics,
		Target: p.Target, Enforcement: p.Enforcement, Condition: p.Condition, Hosts: p.Hosts, LostHosts: p.LostHosts, Rules: []AuthRule{}}
	for _, c := range ap.V1beta2.Status.Conditions {
		if c.Type == "Available" {
			v.Recorded = &authpolicy.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		}
	}
	routeSrc := map[string]*snapshot.HTTPRoute{}
	for _, rt := range s.HTTPRoutes {
		routeSrc[rt.Namespace+"/"+rt.Name] = rt
	}
	rule := func(r authpolicy.V1beta2RuleRef) V1beta2Rule {
		out := V1beta2Rule{V1beta2RuleRef: r}
		if rt := routeSrc[r.Route]; rt != nil {
			out.Source = s.FieldPosition(rt.Source, fmt.Sprintf("spec.rules[%d]", r.Index)).String()
		}
		return out
	}
	pos := func(field string) string { return s.FieldPosition(ap.Source, field).String() }

	for _, r := range p.CoveredRules() {
		v.Covers = append(v.Covers, rule(r))
	}
	tr := ap.V1beta2.Spec.TargetRef
	if tr.Kind == "Gateway" && p.Enforcement != authpolicy.TargetNotFound && p.Enforcement != authpolicy.Unsupported {
		routes := res.GatewayRoutes(ap.Namespace + "/" + string(tr.Name))
		for _, rt := range routes {
			if own := res.RoutePolicy(rt); own != nil {
				v.OverriddenOn = append(v.OverriddenOn, V1beta2Override{Route: rt, Policy: own.Ref})
			}
		}
	}
	v.NotEnforced = v1beta2Why(res, p, v.OverriddenOn)

	for _, sl := range p.Selections() {
		vs := V1beta2Selectors{Field: sl.Field, Source: pos(sl.Field), Miss: sl.Miss, NoSelection: sl.NoSelection}
		for _, sel := range sl.Selectors {
			one := V1beta2Selector{Selector: sel.Selector, Source: pos(fmt.Sprintf("%s[%d]", sl.Field, sel.Index)), Hostnames: sel.Hostnames}
			for _, r := range sel.Rules {
				one.Selects = append(one.Selects, rule(r))
			}
			vs.Selectors = append(vs.Selectors, one)
		}
		v.RouteSelectors = append(v.RouteSelectors, vs)
	}

	spec := &ap.V1beta2.Spec
	for _, n := range sortedPatternNames(spec.NamedPatterns) {
		v.Rules = append(v.Rules, AuthRule{Key: "patterns#" + n, Source: pos("spec.patterns." + n)})
	}
	if len(spec.Conditions) > 0 {
		v.Rules = append(v.Rules, AuthRule{Key: "conditions#", Source: pos("spec.when")})
	}
	for _, nr := range spec.AuthScheme.Rules() {
		v.Rules = append(v.Rules, AuthRule{Key: nr.Section + "#" + nr.Name, Source: pos("spec.rules." + nr.Section + "." + nr.Name)})
	}
	if withV1Form {
		if p.Enforcement == authpolicy.Unsupported {
			v.NoV1FormWhy = p.Why
		} else {
			v.V1Form = p.Migrate()
		}
	}
	return v
}

// v1beta2Why lists why p is not enforced, or where not, each with a stable reason.
func v1beta2Why(res *authpolicy.V1beta2Result, p *authpolicy.V1beta2Policy, overridden []V1beta2Override) []V1beta2Why {
	var out []V1beta2Why
	switch p.Enforcement {
	case authpolicy.Unsupported, authpolicy.TargetNotFound:
		return []V1beta2Why{{Reason: p.Enforcement, Why: p.Why}}
	}
	if p.SecondOn != "" {
		out = append(out, V1beta2Why{Reason: V1beta2SecondOnTarget, Condition: p.Condition.Message, By: p.SecondOn})
	}
	for _, m := range p.EmptySelectors {
		out = append(out, V1beta2Why{Reason: V1beta2SelectsNothing, Field: m.Field, Condition: p.Condition.Message})
		break
	}
	for _, o := range overridden {
		out = append(out, V1beta2Why{Reason: V1beta2GatewayOverridden, Route: o.Route, By: o.Policy})
	}
	if tr := p.Object.V1beta2.Spec.TargetRef; tr.Kind == "Gateway" && len(res.GatewayRoutes(p.Object.Namespace+"/"+string(tr.Name))) == 0 {
		out = append(out, V1beta2Why{Reason: V1beta2NoRoutes})
	}
	for _, l := range p.LostHosts {
		out = append(out, V1beta2Why{Reason: V1beta2HostnameClaimed, Host: l.Host, By: l.ClaimedBy})
	}
	for _, why := range p.Unprogrammed {
		out = append(out, V1beta2Why{Reason: V1beta2NotProgrammed, Why: []authpolicy.Reason{why}})
	}
	if p.Enforcement == authpolicy.NotEnforced && len(out) == 0 {
		reason := p.Condition.Reason
		if p.Built() && len(p.Hosts) == 0 && len(p.LostHosts) == 0 {
			reason = V1beta2NoHostname
		}
		out = append(out, V1beta2Why{Reason: reason, Why: p.Why})
	}
	return out
}

func sortedPatternNames(m map[string][]v1beta2.PatternExpression) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// v1beta2OnTarget lists the v1beta2 AuthPolicies bearing on a Gateway or an HTTPRoute:
// those targeting it (enforced or not, and why), and for a route without an enforced
// policy of its own, the Gateway policy covering it. Nil without v1beta2 policies.
func v1beta2OnTarget(m *model.Model, kind, ns, name string) []*V1beta2AuthPolicyView {
	s := m.Snapshot
	has := false
	for _, ap := range s.AuthPolicies {
		if ap.IsV1beta2() {
			has = true
			break
		}
	}
	if !has || (kind != KindGateway && kind != KindHTTPRoute) {
		return nil
	}
	res := m.V1beta2()
	var out []*V1beta2AuthPolicyView
	for _, tp := range res.ForTarget(kind, ns+"/"+name) {
		v := newV1beta2View(s, res, tp.Policy, false)
		v.Role = tp.Role
		if kind == KindHTTPRoute && tp.Role == "gateway" {
			// In a route's view, the Gateway policy's other routes are not the point.
			v.OverriddenOn = nil
			v.NotEnforced = slices.DeleteFunc(v.NotEnforced, func(w V1beta2Why) bool { return w.Reason == V1beta2GatewayOverridden })
			v.Covers = slices.DeleteFunc(v.Covers, func(r V1beta2Rule) bool { return r.Route != ns+"/"+name })
		}
		out = append(out, v)
	}
	return out
}
