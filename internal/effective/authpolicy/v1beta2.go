package authpolicy

// AuthPolicy kuadrant.io/v1beta2, as kuadrant-operator v0.6.1 enforced it
// (Kuadrant/kuadrant-operator@0d571de7e44fe5315c51ec3729fe17740b030ced, "KO61" below) with
// Authorino v0.15.0 (Kuadrant/authorino@15dd3444b325ee44dd4fec3df69343392eb4d280, "AU15"):
//
//   - one AuthPolicy per target: the operator writes the back-reference annotation
//     kuadrant.io/authpolicy on the target of the first policy it reconciles, and every
//     other policy on that target fails with "the <kind> target <ns/name> is already
//     referenced by policy <ns/name>" (KO61 pkg/reconcilers/targetref_reconciler.go:L157-L181);
//   - routeSelectors select the HTTPRouteRules with at least one match that states what
//     the selector states, identically (KO61 pkg/common/gatewayapi_utils.go:L100-L138), and
//     only when the selector's hostnames, if any, intersect the route's
//     (KO61 api/v1beta2/route_selectors.go:L26-L52); a selector list that selects nothing
//     is a reconciliation error (KO61 controllers/authpolicy_authconfig.go:L275-L296);
//   - the selected rules and hostnames become Authorino conditions (the same file,
//     L298-L480), evaluated here on the simulated request as Authorino would;
//   - a Gateway policy covers the rules of every route of the Gateway that has no policy
//     of its own, under the Gateway's listener hostnames ("*" when none), and builds no
//     AuthConfig when every route has one (KO61 controllers/authpolicy_authconfig.go:L63-L99);
//   - an AuthConfig claims its hosts in Authorino's index: a host another AuthConfig
//     holds is not linked (first created wins) and the AuthConfig is not ready
//     (AU15 controllers/auth_config_controller.go:L600-L640), so the AuthPolicy's
//     Available condition is False, AuthSchemeNotReady (KO61 controllers/authpolicy_status.go);
//   - a request's host finds the AuthConfig by exact host, else the most specific
//     wildcard ("most specific hostname wins"; AU15 pkg/index/index.go:L153-L174,
//     pkg/service/auth.go:L255-L270: a host without any is answered NOT_FOUND).
//
// Not modelled: the defaults/overrides blocks of v0.7 to v0.11 (reported Unsupported),
// route acceptance by the Gateway (parentRefs are taken as attached), and the Istio
// AuthorizationPolicy's own filter (the check request is assumed sent for every
// request routed through a covered route; Authorino's conditions then decide).

import (
	"fmt"
	"sort"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
	"github.com/agpol/agpol/internal/apis/kuadrant/v1beta2"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Labels of v1beta2 enforcement, beside Enforced, PartiallyEnforced and TargetNotFound.
const (
	// NotEnforced: the policy is read and its target exists, but the operator builds
	// no AuthConfig for it, or Authorino links none of its hosts.
	NotEnforced = "NotEnforced"
	// Unsupported: the policy uses what agpol does not model at v1beta2.
	Unsupported = "Unsupported"
)

// V1beta2Policy is what agpol computed about one v1beta2 AuthPolicy.
type V1beta2Policy struct {
	Object *snapshot.AuthPolicy `json:"-"`
	// Ref is "ns/name".
	Ref string `json:"policy"`
	// Target is "Kind/ns/name".
	Target string `json:"target"`
	// Enforcement is Enforced, PartiallyEnforced, NotEnforced, TargetNotFound or Unsupported.
	Enforcement string `json:"enforcement"`
	// Condition is the Available condition kuadrant-operator v0.6.1 would write.
	Condition Condition `json:"condition"`
	// Why explains every label but Enforced, as data; render writes Reasons, the text
	// of -o json, from it (render.AuthPolicyReasonText).
	Why     []Reason `json:"-"`
	Reasons []string `json:"reasons,omitempty"`
	// Hosts are the AuthConfig hosts it links; LostHosts those an older policy holds.
	Hosts     []string    `json:"hosts,omitempty"`
	LostHosts []HostClaim `json:"lostHosts,omitempty"`
	// Routes are the routes it covers, each with the rules its top-level selectors select.
	Routes []V1beta2Route `json:"routes,omitempty"`
	// EmptySelectors are the selector lists that select nothing (a reconciliation error).
	EmptySelectors []SelectorMiss `json:"emptySelectors,omitempty"`
	// SecondOn is set when another policy holds the target: the policy that does.
	SecondOn string `json:"secondOn,omitempty"`
	// Unprogrammed are the Gateways of its target that kuadrant-operator v0.6.1 never
	// programs (it configures Istio only: ReasonUnprogrammedV1beta2); render writes
	// NotProgrammed, the text of -o json, from them.
	Unprogrammed  []Reason `json:"-"`
	NotProgrammed []string `json:"notProgrammed,omitempty"`

	spec       *v1beta2.AuthPolicySpec
	route      *gwapiv1.HTTPRoute // the route the conditions are built from (synthetic for a Gateway)
	routeHosts []gwapiv1.Hostname
	conditions []kuadrantv1.PatternExpressionOrRef // top-level, as the AuthConfig carries them
	built      bool                                // an AuthConfig exists
	origins    []V1beta2RuleRef                    // the route rule each rule of route comes from
}

// HostClaim is a host and the policy whose AuthConfig holds it.
type HostClaim struct {
	Host      string `json:"host"`
	ClaimedBy string `json:"claimedBy"`
}

// V1beta2Route is one covered route and the rules (indexes) selected in it.
type V1beta2Route struct {
	Route string `json:"route"`
	Rules []int  `json:"rules"`
}

// SelectorMiss is a routeSelectors list that selects no rule of the route.
type SelectorMiss struct {
	// Field is the path of the list, e.g. "spec.routeSelectors" or
	// "spec.rules.authentication.api-key.routeSelectors".
	Field string `json:"field"`
	Route string `json:"route"`
	// CatchAll is set when the list selects rules, but only catch-all rules (no
	// matches) under all of the route's hostnames: the operator builds no condition
	// from them and fails the same way as for a list that selects nothing.
	CatchAll bool `json:"catchAll,omitempty"`
	// OutsideTarget is set when a hostname of the list is not within the target's
	// hostnames: the operator rejects the policy before selecting anything.
	OutsideTarget bool `json:"outsideTarget,omitempty"`
}

// V1beta2Result is the v1beta2 AuthPolicies of a snapshot, computed.
type V1beta2Result struct {
	// Policies in ns/name order.
	Policies []*V1beta2Policy
	byRef    map[string]*V1beta2Policy
	// index is Authorino's host index: host key → the policy whose AuthConfig holds it.
	index map[string]*V1beta2Policy
	// byRoute and byGateway are the policies that hold their target.
	byRoute, byGateway map[string]*V1beta2Policy
	// gwRoutes are each Gateway's routes ("ns/name"), in ns/name order.
	gwRoutes map[string][]*snapshot.HTTPRoute
	// unprogrammed says, per Gateway, why kuadrant-operator v0.6.1 never programs it.
	unprogrammed map[string]*Reason
	// env is what Authorino reads besides the request (Secrets, RBAC objects).
	env *Env
}

// Policy returns the computed policy "ns/name", or nil.
func (r *V1beta2Result) Policy(ref string) *V1beta2Policy { return r.byRef[ref] }

// ComputeV1beta2 computes every kuadrant.io/v1beta2 AuthPolicy of g's snapshot, reading
// each Gateway's data plane from g.
func ComputeV1beta2(g *topology.Graph) *V1beta2Result {
	s := g.Snapshot()
	r := &V1beta2Result{byRef: map[string]*V1beta2Policy{}, index: map[string]*V1beta2Policy{},
		byRoute: map[string]*V1beta2Policy{}, byGateway: map[string]*V1beta2Policy{}, gwRoutes: map[string][]*snapshot.HTTPRoute{}, env: NewEnv(s)}
	gateways := map[string]*snapshot.Gateway{}
	for _, g := range s.Gateways {
		gateways[g.Namespace+"/"+g.Name] = g
	}
	routes := map[string]*snapshot.HTTPRoute{}
	for _, rt := range s.HTTPRoutes {
		routes[rt.Namespace+"/"+rt.Name] = rt
		for _, gw := range parentGateways(rt) {
			r.gwRoutes[gw] = append(r.gwRoutes[gw], rt)
		}
	}
	for _, rs := range r.gwRoutes {
		sort.Slice(rs, func(i, j int) bool { return rs[i].Namespace+"/"+rs[i].Name < rs[j].Namespace+"/"+rs[j].Name })
	}
	var ps []*V1beta2Policy
	for _, ap := range s.AuthPolicies {
		if !ap.IsV1beta2() {
			continue
		}
		p := &V1beta2Policy{Object: ap, Ref: ap.Namespace + "/" + ap.Name, spec: &ap.V1beta2.Spec}
		if _, dup := r.byRef[p.Ref]; dup {
			continue
		}
		tr := ap.V1beta2.Spec.TargetRef
		p.Target = string(tr.Kind) + "/" + ap.Namespace + "/" + string(tr.Name)
		r.byRef[p.Ref] = p
		ps = append(ps, p)
	}
	// The operator reconciles in no fixed order; agpol takes creation order (then
	// ns/name), the order in which a running operator meets new policies.
	sort.SliceStable(ps, func(i, j int) bool { return createdBefore(ps[i].Object, ps[j].Object) })

	// Each policy as the operator reconciles it (KO61 controllers/authpolicy_controller.go:
	// L133-L164): validate, build the AuthConfig (which may fail), then claim the target
	// with the back-reference annotation (which fails for a second policy: its AuthConfig
	// exists all the same). Route policies first: a Gateway policy covers the routes no
	// policy claimed (the operator recomputes it whenever a route's claim changes).
	holders := map[string]*V1beta2Policy{}
	var valid []*V1beta2Policy
	for _, p := range ps {
		ap := p.Object.V1beta2
		tr := ap.Spec.TargetRef
		key := ap.Namespace + "/" + string(tr.Name)
		switch {
		case ap.Spec.ExplicitDefaultsOrOverrides():
			p.fail(Unsupported, "Unsupported", "spec.defaults and spec.overrides (kuadrant-operator v0.7 to v0.11) are not modelled by agpol at v1beta2")
		case tr.Namespace != nil && string(*tr.Namespace) != ap.Namespace:
			p.fail(NotEnforced, "ReconciliationError", fmt.Sprintf("invalid targetRef.Namespace %s. Currently only supporting references to the same namespace", *tr.Namespace))
		case string(tr.Group) != GatewayGroup || (tr.Kind != "HTTPRoute" && tr.Kind != "Gateway"):
			p.fail(TargetNotFound, "ReconciliationError", fmt.Sprintf("FetchValidTargetRef: targetRef (%s/%s %s) to unknown network resource", tr.Group, tr.Kind, tr.Name))
		case tr.Kind == "HTTPRoute" && routes[key] == nil, tr.Kind == "Gateway" && gateways[key] == nil:
			p.fail(TargetNotFound, "ReconciliationError", fmt.Sprintf("%s %s not found", tr.Kind, key))
		default:
			if tr.Kind == "HTTPRoute" {
				p.route = &routes[key].HTTPRoute
				p.Routes = []V1beta2Route{{Route: key}}
			}
			if err := p.validateHostnames(targetHostnames(routes[key], gateways[key], tr.Kind)); err != nil {
				p.fail(NotEnforced, "ReconciliationError", err.Error())
				continue
			}
			valid = append(valid, p)
		}
	}
	claim := func(p *V1beta2Policy) {
		ap := p.Object.V1beta2
		tkey := string(ap.Spec.TargetRef.Kind) + "/" + ap.Namespace + "/" + string(ap.Spec.TargetRef.Name)
		holder := holders[tkey]
		if holder == nil {
			if a := annotatedHolder(r, valid, routes[ap.Namespace+"/"+string(ap.Spec.TargetRef.Name)], gateways[ap.Namespace+"/"+string(ap.Spec.TargetRef.Name)], ap.Spec.TargetRef.Kind); a != nil && a != p {
				holder = a // the target names another policy: it holds the target
			} else {
				holder = p
			}
			holders[tkey] = holder
		}
		if holder != p {
			p.SecondOn = holder.Ref
			p.fail(NotEnforced, "ReconciliationError", fmt.Sprintf("the %s target %s is already referenced by policy %s", ap.Spec.TargetRef.Kind, ap.Namespace+"/"+string(ap.Spec.TargetRef.Name), holder.Ref))
		}
	}
	var built []*V1beta2Policy
	for _, p := range valid {
		if p.Object.V1beta2.Spec.TargetRef.Kind != "HTTPRoute" {
			continue
		}
		if err := p.buildConditions(); err != nil {
			p.fail(NotEnforced, "ReconciliationError", err.Error())
			continue
		}
		p.built = true
		built = append(built, p)
		claim(p)
	}
	for _, h := range holders {
		if h.built && h.Enforcement == "" {
			r.byRoute[h.Routes[0].Route] = h
		}
	}
	for _, p := range valid {
		ap := p.Object.V1beta2
		if ap.Spec.TargetRef.Kind != "Gateway" {
			continue
		}
		key := ap.Namespace + "/" + string(ap.Spec.TargetRef.Name)
		gwHosts := gatewayHostnames(gateways[key])
		if len(gwHosts) == 0 {
			gwHosts = []gwapiv1.Hostname{"*"}
		}
		fake := &gwapiv1.HTTPRoute{}
		fake.Spec.Hostnames = gwHosts
		for _, rt := range r.gwRoutes[key] {
			if r.byRoute[rt.Namespace+"/"+rt.Name] != nil {
				continue // a route with an AuthPolicy of its own
			}
			fake.Spec.Rules = append(fake.Spec.Rules, rt.Spec.Rules...)
			for i := range rt.Spec.Rules {
				p.origins = append(p.origins, V1beta2RuleRef{Route: rt.Namespace + "/" + rt.Name, Index: i})
			}
			p.Routes = append(p.Routes, V1beta2Route{Route: rt.Namespace + "/" + rt.Name})
		}
		if len(fake.Spec.Rules) == 0 {
			p.fail(NotEnforced, "AuthSchemeNotReady", "every route of Gateway "+key+" has an AuthPolicy of its own (or it has none): no AuthConfig is built for the Gateway policy")
			continue
		}
		p.route = fake
		if err := p.buildConditions(); err != nil {
			p.fail(NotEnforced, "ReconciliationError", err.Error())
			continue
		}
		p.built = true
		p.fillGatewayRules()
		built = append(built, p)
		claim(p)
		if p.Enforcement == "" {
			r.byGateway[key] = p
		}
	}

	// Host claims, in creation order: Authorino links a host to the first AuthConfig
	// that holds it (a second policy's AuthConfig takes part: it exists).
	sort.SliceStable(built, func(i, j int) bool { return createdBefore(built[i].Object, built[j].Object) })
	for _, p := range built {
		ap := p.Object.V1beta2
		var hosts []string
		if ap.Spec.TargetRef.Kind == "HTTPRoute" {
			hosts = routeHosts(routes[ap.Namespace+"/"+string(ap.Spec.TargetRef.Name)], gateways)
		} else {
			hosts = hostStrings(p.route.Spec.Hostnames)
		}
		p.routeHosts = p.route.Spec.Hostnames
		for _, h := range hosts {
			if holder, taken := r.index[h]; taken && holder != p {
				p.LostHosts = append(p.LostHosts, HostClaim{Host: h, ClaimedBy: holder.Ref})
				continue
			}
			r.index[h] = p
			p.Hosts = append(p.Hosts, h)
		}
		for _, l := range p.LostHosts {
			p.Why = append(p.Why, Reason{Code: ReasonHostClaimed, Host: l.Host, Policy: l.ClaimedBy})
		}
		if p.Enforcement != "" {
			continue // a second policy on its target: not enforced, whatever its hosts
		}
		switch {
		case len(hosts) == 0:
			p.Enforcement = NotEnforced
			p.Condition = Condition{Type: "Available", Status: "False", Reason: "AuthSchemeNotReady", Message: "AuthScheme is not ready yet"}
			p.Why = append(p.Why, Reason{Code: ReasonNoHostname})
		case len(p.LostHosts) == 0:
			p.Enforcement = Enforced
			p.Condition = Condition{Type: "Available", Status: "True", Reason: string(ap.Spec.TargetRef.Kind) + "Protected", Message: string(ap.Spec.TargetRef.Kind) + " is protected"}
		case len(p.Hosts) == 0:
			p.Enforcement = NotEnforced
			p.Condition = Condition{Type: "Available", Status: "False", Reason: "AuthSchemeNotReady", Message: "AuthScheme is not ready yet"}
		default:
			p.Enforcement = PartiallyEnforced
			p.Condition = Condition{Type: "Available", Status: "False", Reason: "AuthSchemeNotReady", Message: "AuthScheme is not ready yet"}
		}
	}
	for _, p := range ps {
		if p.Enforcement == "" { // valid, but never built (cannot happen) — say so rather than guess
			p.fail(NotEnforced, "Unknown", "not computed")
		}
	}
	r.unprogrammed = unprogrammedV1beta2(g.DataPlanes())
	for _, p := range ps {
		r.applyDataPlanes(p, routes)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].Ref < ps[j].Ref })
	r.Policies = ps
	return r
}

func (p *V1beta2Policy) fail(label, reason, message string) {
	p.Enforcement = label
	p.Condition = Condition{Type: "Available", Status: "False", Reason: reason, Message: message}
	p.Why = append(p.Why, Reason{Code: ReasonCondition, Message: message})
}

func createdBefore(a, b *snapshot.AuthPolicy) bool {
	ta, tb := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	if !ta.Equal(tb) {
		return ta.Before(tb)
	}
	return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
}

// annotatedHolder is the policy the target's kuadrant.io/authpolicy annotation names,
// when it names one of the input's v1beta2 policies.
func annotatedHolder(r *V1beta2Result, ps []*V1beta2Policy, rt *snapshot.HTTPRoute, gw *snapshot.Gateway, kind gwapiv1.Kind) *V1beta2Policy {
	var ann string
	if kind == "HTTPRoute" && rt != nil {
		ann = rt.GetAnnotations()[v1beta2.BackRefAnnotation]
	} else if gw != nil {
		ann = gw.GetAnnotations()[v1beta2.BackRefAnnotation]
	}
	if ann == "" {
		return nil
	}
	p := r.byRef[ann]
	if p == nil || p.Enforcement != "" {
		return nil
	}
	for _, q := range ps {
		if q == p {
			return p
		}
	}
	return nil
}

func parentGateways(rt *snapshot.HTTPRoute) []string {
	var out []string
	seen := map[string]bool{}
	for _, ref := range rt.Spec.ParentRefs {
		if (ref.Kind != nil && *ref.Kind != "Gateway") || (ref.Group != nil && *ref.Group != GatewayGroup) {
			continue
		}
		ns := rt.Namespace
		if ref.Namespace != nil {
			ns = string(*ref.Namespace)
		}
		k := ns + "/" + string(ref.Name)
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}

func gatewayHostnames(g *snapshot.Gateway) []gwapiv1.Hostname {
	var out []gwapiv1.Hostname
	for _, l := range g.Spec.Listeners {
		if l.Hostname != nil {
			out = append(out, *l.Hostname)
		}
	}
	return out
}

// routeHosts are an HTTPRoute policy's AuthConfig hosts: the route's hostnames, else its
// Gateways' listener hostnames (KO61 pkg/common/gatewayapi_utils.go:L544-L568).
func routeHosts(rt *snapshot.HTTPRoute, gateways map[string]*snapshot.Gateway) []string {
	if len(rt.Spec.Hostnames) > 0 {
		return hostStrings(rt.Spec.Hostnames)
	}
	var out []string
	for _, k := range parentGateways(rt) {
		if g := gateways[k]; g != nil {
			out = append(out, hostStrings(gatewayHostnames(g))...)
		}
	}
	return out
}

func hostStrings(hs []gwapiv1.Hostname) []string {
	out := make([]string, 0, len(hs))
	for _, h := range hs {
		out = append(out, string(h))
	}
	return out
}
