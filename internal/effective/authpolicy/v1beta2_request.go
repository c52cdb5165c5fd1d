package authpolicy

import (
	"encoding/json"
	"net"
	"sort"
	"strings"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// V1beta2Decision is what the v1beta2 AuthPolicies do to one request routed through a
// Gateway and an HTTPRoute.
type V1beta2Decision struct {
	// CheckedBy is the policy whose data-plane configuration sends the request to
	// Authorino: the route's own policy, else the Gateway's. Empty: no v1beta2
	// AuthPolicy applies to the request.
	CheckedBy string `json:"checkedBy,omitempty"`
	// AuthConfig is the policy whose AuthConfig Authorino finds for the request's host
	// (HostKey: the exact host or the most specific wildcard it is indexed under). It can
	// differ from CheckedBy when an older policy holds the host.
	AuthConfig string `json:"authConfig,omitempty"`
	HostKey    string `json:"hostKey,omitempty"`
	// NotFound: no AuthConfig holds the host; Authorino answers NOT_FOUND (a denial).
	NotFound bool `json:"notFound,omitempty"`
	// Evaluation is the AuthConfig's conditions and rules on the request.
	Evaluation *Evaluation `json:"evaluation,omitempty"`
	// Found is how the policy was found (a Found* code), Route the request's HTTPRoute
	// ("ns/name"), Host the request's host ("" when not known) and NotEnforced why the
	// route's own policy is not enforced (FoundRouteNotEnforced); render writes Reason,
	// the sentence of -o json, from them and the fields above.
	Found       string   `json:"-"`
	Route       string   `json:"-"`
	Host        string   `json:"-"`
	NotEnforced []Reason `json:"-"`
	// Unindexed: no AuthConfig holds Host (as NotFound, but kept where the decision is
	// left out for kuadrant.io/v1 policies, which clears NotFound).
	Unindexed bool   `json:"-"`
	Reason    string `json:"reason"`
	// Unprogrammed says why kuadrant-operator v0.6.1 never programs the request's
	// Gateway (ReasonUnprogrammedV1beta2): the policy is computed, and no data plane
	// runs it; render writes NotProgrammed, its text in -o json.
	Unprogrammed  *Reason `json:"-"`
	NotProgrammed string  `json:"notProgrammed,omitempty"`
	// Ignored is set when kuadrant.io/v1 AuthPolicies apply on the same path: no
	// Kuadrant release enforces both versions together, and agpol decides with v1.
	Ignored bool `json:"ignored,omitempty"`
}

// How a request's v1beta2 AuthPolicy is found (V1beta2Decision.Found).
const (
	// FoundRoutePolicy: the route has an AuthPolicy of its own (CheckedBy).
	FoundRoutePolicy = "route-policy"
	// FoundRouteNotEnforced: the route's own AuthPolicy is not enforced (NotEnforced):
	// it configures no check.
	FoundRouteNotEnforced = "route-policy-not-enforced"
	// FoundGatewayPolicy: the route has none of its own, and the Gateway's covers it.
	FoundGatewayPolicy = "gateway-policy"
)

// Lookup finds the AuthConfig for a host as Authorino's index does: the exact host, else
// the wildcard of the most specific domain above it (AU15 pkg/index/index.go:L153-L174,
// which also tries "*.<host>" first), else "*"; a port is ignored when the host with it
// is not indexed (AU15 pkg/service/auth.go:L260-L265).
func (r *V1beta2Result) Lookup(host string) (*V1beta2Policy, string) {
	if p, k := r.lookup(host); p != nil {
		return p, k
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		return r.lookup(h)
	}
	return nil, ""
}

func (r *V1beta2Result) lookup(host string) (*V1beta2Policy, string) {
	host = strings.ToLower(host)
	if p := r.index[host]; p != nil {
		return p, host
	}
	labels := strings.Split(host, ".")
	for i := 0; i < len(labels); i++ {
		k := "*." + strings.Join(labels[i:], ".")
		if p := r.index[k]; p != nil {
			return p, k
		}
	}
	if p := r.index["*"]; p != nil {
		return p, "*"
	}
	return nil, ""
}

// ForRequest decides which v1beta2 AuthPolicy a request routed through gateway and
// route ("ns/name") meets, and evaluates it. It returns nil when no v1beta2 AuthPolicy
// covers the route.
func (r *V1beta2Result) ForRequest(gateway, route string, req Request) *V1beta2Decision {
	d := &V1beta2Decision{Unprogrammed: r.unprogrammed[gateway], Route: route, Host: req.Host}
	switch p := r.byRoute[route]; {
	case p != nil && p.built:
		d.CheckedBy, d.Found = p.Ref, FoundRoutePolicy
	case p != nil:
		d.CheckedBy, d.Found, d.NotEnforced = p.Ref, FoundRouteNotEnforced, p.Why
		return d
	default:
		g := r.byGateway[gateway]
		if g == nil || !g.built || !g.covers(route) {
			return nil
		}
		d.CheckedBy, d.Found = g.Ref, FoundGatewayPolicy
	}
	p, key := r.Lookup(req.Host)
	if req.Host == "" {
		d.Evaluation = &Evaluation{Applies: Unknown, Offline: []string{"request.host"}}
		return d
	}
	if p == nil {
		d.NotFound, d.Unindexed = true, true
		return d
	}
	d.AuthConfig, d.HostKey = p.Ref, key
	d.Evaluation = p.Evaluate(req, r.env)
	return d
}

func (p *V1beta2Policy) covers(route string) bool {
	for _, r := range p.Routes {
		if r.Route == route {
			return true
		}
	}
	return false
}

// Evaluate evaluates the policy's AuthConfig on a request: the top-level conditions
// (its `when`, then the conditions its routeSelectors or its route's rules make), and
// each rule with its own `when` and the conditions of its routeSelectors. A request
// that carries an identity is decided as Authorino decides a v1 policy's AuthConfig
// (Decide, with env), except that kuadrant-operator v0.6.1 writes a v1beta2 policy's
// AuthConfig into the policy's own namespace (controllers/authpolicy_authconfig.go:54-57
// @0d571de), which is where an apiKey or x509 rule without allNamespaces looks.
func (p *V1beta2Policy) Evaluate(req Request, env *Env) *Evaluation {
	e := p.Effective()
	var inPolicyNS *Env
	if env != nil {
		cp := *env
		cp.AuthConfigNamespace, cp.NamespaceAssumed, cp.policyNamespace = p.Object.Namespace, false, true
		inPolicyNS = &cp
	}
	ev := Decide(e, req, inPolicyNS)
	c := newConditionEvaluator(e, req)
	checks, applies := c.conditions(p.conditions)
	ev.Applies, ev.Predicates = applies, checks
	if len(p.conditions) == 0 {
		ev.Applies = True
	}
	seen := map[string]bool{}
	for _, o := range append(ev.Offline, c.offline()...) {
		seen[o] = true
	}
	ev.Offline = ev.Offline[:0]
	for o := range seen {
		ev.Offline = append(ev.Offline, o)
	}
	sort.Strings(ev.Offline)
	return ev
}

// Effective is the policy's rules as an effective policy (one source, no fold): named
// patterns as "patterns#<name>", each rule with its routeSelectors turned into the
// conditions the operator adds to it (KO61 controllers/authpolicy_authconfig.go:L183-L273).
func (p *V1beta2Policy) Effective() *Effective {
	e := &Effective{Rules: map[string]Rule{}}
	names := make([]string, 0, len(p.spec.NamedPatterns))
	for n := range p.spec.NamedPatterns {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		body, _ := json.Marshal(map[string]any{"allOf": p.spec.NamedPatterns[n]})
		e.Rules["patterns#"+n] = Rule{Key: "patterns#" + n, Group: "patterns", Name: n, Spec: body, Source: p.Ref}
	}
	for _, nr := range p.spec.AuthScheme.Rules() {
		body := nr.Rule.Raw
		if len(nr.Rule.RouteSelectors) > 0 && p.route != nil {
			_, conds := p.selected(nr.Rule.RouteSelectors)
			body = withConditions(body, conds)
		}
		key := nr.Section + "#" + nr.Name
		e.Rules[key] = Rule{Key: key, Group: nr.Section, Name: nr.Name, Spec: body, Source: p.Ref}
	}
	return e
}

// withConditions appends {any: conds} to a rule body's `when` and drops routeSelectors.
func withConditions(raw json.RawMessage, conds []kuadrantv1.PatternExpressionOrRef) json.RawMessage {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return raw
	}
	delete(m, "routeSelectors")
	when, _ := m["when"].([]any)
	var extra any
	b, _ := json.Marshal(kuadrantv1.PatternExpressionOrRef{Any: conds})
	_ = json.Unmarshal(b, &extra)
	m["when"] = append(when, extra)
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// V1beta2TargetPolicy is a v1beta2 AuthPolicy bearing on a Gateway or HTTPRoute.
type V1beta2TargetPolicy struct {
	Policy *V1beta2Policy `json:"policy"`
	// Role is "own" (the target's policy), "gateway" (a route without its own policy,
	// covered by its Gateway's) or "covers" (a Gateway policy, with the routes it covers).
	Role string `json:"role"`
}

// ForTarget lists the v1beta2 AuthPolicies that bear on a Gateway or an HTTPRoute
// ("ns/name"): every policy targeting it (enforced or not), and for a route without
// an enforced policy of its own, the Gateway policies that cover it.
func (r *V1beta2Result) ForTarget(kind, key string) []V1beta2TargetPolicy {
	var out []V1beta2TargetPolicy
	for _, p := range r.Policies {
		if p.Target == kind+"/"+key {
			out = append(out, V1beta2TargetPolicy{Policy: p, Role: "own"})
		}
	}
	if kind != "HTTPRoute" || (r.byRoute[key] != nil && r.byRoute[key].built) {
		return out
	}
	for _, p := range r.Policies {
		if p.built && p.Object.V1beta2.Spec.TargetRef.Kind == "Gateway" && p.covers(key) {
			out = append(out, V1beta2TargetPolicy{Policy: p, Role: "gateway"})
		}
	}
	return out
}
