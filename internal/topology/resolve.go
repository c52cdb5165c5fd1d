// Resolving a request: the gateway, listener, route rule and backends it reaches, with
// what was assumed or ignored on the way, as data. explain decides on a Resolution; render
// writes its notes (docs/routing.md).

package topology

import (
	"sort"
	"strconv"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
)

// Query is a request's way through the gateways as the request names it: the fields of a
// RouteRequest (a zero Gateway when it names none: Resolve infers it), the objects it
// names, and whether its caller presents an identity (a SPIFFE SVID) over mTLS.
type Query struct {
	RouteRequest
	// Route, Backend (an XBackend) and Service are the objects the request names, nil
	// when it names none.
	Route, Backend, Service *Ref
	// Identity: the caller presents an identity, so it arrives on an HTTPS listener
	// when the request names neither a listener nor a port (chooseListener).
	Identity bool
}

// Why a request cannot be resolved (Unresolved.Why).
const (
	UnresolvedNoGateway       = "no-gateway"       // no gateway named, and not exactly one inferred (Candidates)
	UnresolvedGateway         = "gateway"          // the named gateway is not in the graph (Ref)
	UnresolvedListener        = "listener"         // the gateway has no listener of the named one (Listener)
	UnresolvedRoute           = "route"            // the named HTTPRoute is not in the graph (Ref)
	UnresolvedXBackend        = "xbackend"         // the named XBackend is not in the graph (Ref)
	UnresolvedRoutesElsewhere = "routes-elsewhere" // the request routes to another route than the named one (Ref: that route)
)

// Unresolved says why a request's way cannot be resolved, as data.
type Unresolved struct {
	// Why is an Unresolved* constant, "" when the request is resolved.
	Why string
	// Ref is the object Why names.
	Ref Ref
	// Listener is the listener named that the gateway lacks (UnresolvedListener).
	Listener string
	// Candidates are the gateways the request could go through (UnresolvedNoGateway):
	// none, or more than one.
	Candidates []Ref
}

// ListenerChoice is how Resolve chose the listener of a request that names neither a
// listener nor a port, on a gateway with a plain-HTTP and an HTTPS listener for its host
// that both (or neither) reach a route: a caller with an identity presents it over mTLS
// and arrives on HTTPS, an anonymous caller on plain HTTP (docs/semantics.md, "The
// listener a caller arrives on"). Picked is the listener taken, Other the one not.
type ListenerChoice struct {
	Identity      bool
	Picked, Other ListenerOption
}

// IgnoredMethod is a route rule that takes a request whose method its match does not
// name: the reference data plane does not check HTTPRoute method matches (the
// kube-agentic-networking translator drops them).
type IgnoredMethod struct {
	// Route is the route ("namespace/name"), Rule the rule's name or its index in spec.rules.
	Route string `json:"route"`
	Rule  string `json:"rule"`
	// Method is the method the rule's match names, RequestMethod the request's.
	Method        string `json:"method"`
	RequestMethod string `json:"requestMethod"`
}

// Target is one end of a request's way: a backend it reaches, or the reason it reaches
// none.
type Target struct {
	// Backend is the routed backendRef, nil when the request names the backend or the
	// way reaches none. It points into the graph, except for a rule taken by name
	// (Resolution.RuleByName), where it points into the Resolution.
	Backend *BackendTarget
	// Named is the XBackend or the Service the request names (Kind set), zero otherwise.
	Named Ref
	// NoBackend says why the way reaches no backend (Why "" when it reaches one, or may:
	// a named backend); Why NoBackendNoRoute: no route takes the request.
	NoBackend NoBackend
	// Uncertain says why Route answers the way to this target only uncertainly (a match
	// Envoy and Go read differently comes first, UncertainRoute; docs/limits.md), nil
	// when it does not or the rule was taken by name.
	Uncertain *RegexDiffers
	// Assumed is what agpol assumes of the named backend (AssumedBackend): nothing when
	// the input shows it, the target is routed (see Backend.Assumed) or the query is terse.
	Assumed Assumption
}

// Resolution is where a request goes. When Unresolved.Why is set, the fields after it
// are not.
type Resolution struct {
	Unresolved Unresolved
	// Gateway is the gateway the request goes through, named or inferred.
	Gateway Ref
	// Request is what was routed: the query's, with the listener chosen (chooseListener).
	Request RouteRequest
	// URLPath is the request's path without its query or fragment (QueryStart): what
	// path matches read.
	URLPath string
	// Routed is routing's answer for Request.
	Routed RouteResult
	// Agentic: the reference data plane serves the gateway (its XAccessPolicies run).
	Agentic bool
	// Listener is the listener of the way: named, else routed, else that of the route
	// (for a rule taken by name, its path's); "" when none. Protocol is its protocol,
	// or HTTP without a listener on a gateway whose listeners are all plain HTTP.
	Listener string
	Protocol gwapiv1.ProtocolType
	// Chosen says how the listener was chosen among a plain-HTTP and an HTTPS one (nil
	// when the request left no choice, or the query is terse); Options are the
	// listeners that take the request when both kinds reach a route (the verdict may
	// differ on the other).
	Chosen  *ListenerChoice
	Options []ListenerOption
	// Rule: the way takes a route rule (RuleIndex, RuleName), routed or, with
	// RuleByName, the only rule on the gateway of a route the request names that
	// routing does not reach.
	Rule       bool
	RuleByName bool
	RuleIndex  int
	RuleName   string
	// Targets are the ends of the way, in the rule's backendRef order.
	Targets []Target
	// IgnoredMethod is set when the rule takes the request though its match names
	// another method (nil when terse).
	IgnoredMethod *IgnoredMethod

	chosen ListenerChoice
	named  []BackendTarget
}

// Resolve finds where a request goes: the gateway (InferGateway when the query names
// none), the listener (chooseListener when it names neither a listener nor a port), the
// route rule (Route, or the only rule of a route the request names that routing does
// not reach) and the backends (a named XBackend or Service, else the rule's). It writes
// into res, whose buffers it reuses, so that a terse query that reaches a backend
// allocates nothing.
func (g *Graph) Resolve(q *Query, res *Resolution) {
	*res = Resolution{Options: res.Options[:0], Targets: res.Targets[:0], named: res.named[:0], URLPath: URLPath(q.Path)}
	if q.Gateway == (Ref{}) {
		cands := g.InferGateway(q.Route, q.Backend)
		if len(cands) != 1 {
			res.Unresolved = Unresolved{Why: UnresolvedNoGateway, Candidates: cands}
			return
		}
		q.Gateway = cands[0]
	}
	res.Gateway = q.Gateway
	res.Request = q.RouteRequest
	if q.Listener == "" && q.Port == 0 {
		g.chooseListener(q, res)
	}
	if err := g.RouteInto(&res.Request, &res.Routed); err != nil {
		res.Unresolved = Unresolved{Why: UnresolvedGateway, Ref: q.Gateway}
		return
	}
	routed := &res.Routed
	gw := routed.Gateway
	res.Agentic = g.DataPlane(gw).Agentic()
	if q.Listener != "" && g.listenerProtocol(gw, q.Listener) == "" {
		res.Unresolved = Unresolved{Why: UnresolvedListener, Ref: q.Gateway, Listener: q.Listener}
		return
	}
	res.Listener = q.Listener
	if res.Listener == "" {
		res.Listener = routed.Listener
	}
	switch {
	case res.Listener == "":
		// Without a listener, the caller's identity is only lost if every listener is plain HTTP.
		allHTTP := len(gw.Spec.Listeners) > 0
		for _, l := range gw.Spec.Listeners {
			if l.Protocol != gwapiv1.HTTPProtocolType {
				allHTTP = false
			}
		}
		if allHTTP {
			res.Protocol = gwapiv1.HTTPProtocolType
		}
	case res.Listener == routed.Listener:
		res.Protocol = routed.Protocol // no second scan of the gateway's listeners
	default:
		res.Protocol = gwapiv1.ProtocolType(g.listenerProtocol(gw, res.Listener))
	}
	if q.Route != nil && g.HTTPRoute(*q.Route) == nil {
		res.Unresolved = Unresolved{Why: UnresolvedRoute, Ref: *q.Route}
		return
	}
	switch {
	case q.Backend != nil:
		if g.XBackend(*q.Backend) == nil {
			res.Unresolved = Unresolved{Why: UnresolvedXBackend, Ref: *q.Backend}
			return
		}
		res.Targets = append(res.Targets, g.namedTarget(q, res, *q.Backend))
		return
	case q.Service != nil:
		res.Targets = append(res.Targets, g.namedTarget(q, res, *q.Service))
		return
	}
	if routed.Route == nil || (q.Route != nil && (routed.Route.Namespace != q.Route.Namespace || routed.Route.Name != q.Route.Name)) {
		if q.Route != nil && g.onlyRule(q, res) {
			return
		}
		if q.Route != nil && routed.Route != nil {
			res.Unresolved = Unresolved{Why: UnresolvedRoutesElsewhere, Ref: HTTPRouteRef(routed.Route.Namespace, routed.Route.Name)}
			return
		}
		nb := NoBackend{Why: NoBackendNoRoute, Miss: routed.Miss, GatewayLevelRuns: res.Agentic}
		if q.Route == nil && !q.Terse {
			nb.HostsThatRoute, nb.Host = g.hostsThatRoute(res.Gateway, StripPort(q.Host)), q.Host
		}
		res.Targets = append(res.Targets, Target{NoBackend: nb, Uncertain: routed.Uncertain})
		return
	}
	res.Rule, res.RuleIndex, res.RuleName = true, routed.RuleIndex, routed.RuleName
	if routed.RouteListener != "" && res.Listener == "" {
		res.Listener = routed.RouteListener
	}
	res.targets(routed.Backends, routed.RuleProblem, routed.Redirect)
	for i := range res.Targets {
		res.Targets[i].Uncertain = routed.Uncertain
	}
	if routed.IgnoredMethod != "" && !q.Terse {
		rule := routed.RuleName
		if rule == "" {
			rule = strconv.Itoa(routed.RuleIndex)
		}
		res.IgnoredMethod = &IgnoredMethod{Route: routed.RouteKey, Rule: rule, Method: routed.IgnoredMethod, RequestMethod: q.Method}
	}
}

// namedTarget is the one end of a way to a backend the query names (an XBackend or a
// Service): whether routing to it is uncertain on the way's listener, and (unless
// terse) what agpol assumes of it.
func (g *Graph) namedTarget(q *Query, res *Resolution, named Ref) Target {
	t := Target{Named: named, Uncertain: g.UncertainRoute(res.Gateway, res.Listener, named)}
	if !q.Terse {
		t.Assumed = g.AssumedBackend(named)
	}
	return t
}

// targets appends the ends of a rule's way: one per backendRef, or one that reaches no
// backend (a redirect, a rule the data plane answers 500 for, no backendRef).
func (res *Resolution) targets(backends []BackendTarget, ruleProblem *RuleProblem, redirect bool) {
	gwOnly := func(nb NoBackend) {
		nb.GatewayLevelRuns = res.Agentic
		res.Targets = append(res.Targets, Target{NoBackend: nb})
	}
	switch {
	case redirect:
		gwOnly(NoBackend{Why: NoBackendRedirect})
		return
	case ruleProblem != nil:
		gwOnly(NoBackend{Why: NoBackendRule, Rule: ruleProblem})
		return
	case len(backends) == 0:
		gwOnly(NoBackend{Why: NoBackendNone})
		return
	}
	for i := range backends {
		b := &backends[i]
		t := Target{Backend: b}
		if b.Problem != nil {
			t.NoBackend = NoBackend{Why: NoBackendRef, Backend: b.Problem, GatewayLevelRuns: res.Agentic}
		}
		res.Targets = append(res.Targets, t)
	}
}

// onlyRule takes the rule of a route the request names when routing did not reach it: a
// route with a single rule on the gateway is unambiguous. It reports whether it did.
func (g *Graph) onlyRule(q *Query, res *Resolution) bool {
	var match []Path
	for _, p := range g.Paths(q.Gateway) {
		if p.Route != nil && p.Route.Namespace == q.Route.Namespace && p.Route.Name == q.Route.Name {
			match = append(match, p)
		}
	}
	if len(match) == 0 {
		return false
	}
	idx := match[0].RuleIndex
	for _, p := range match {
		if p.RuleIndex != idx {
			return false
		}
		if p.Backend.Kind != BackendNone {
			res.named = append(res.named, p.Backend) // copies: no pointer into the graph keys a chain
		}
	}
	res.Rule, res.RuleByName, res.RuleIndex, res.RuleName = true, true, idx, match[0].RuleName
	if res.Listener == "" {
		res.Listener = match[0].Listener
		res.Protocol = gwapiv1.ProtocolType(g.listenerProtocol(match[0].Gateway, res.Listener))
	}
	res.targets(res.named, match[0].RuleProblem, false)
	return true
}

// chooseListener picks the listener of a request that names no listener and no port the
// way a real caller arrives: a caller with an identity presents it over mTLS, so it takes
// an HTTPS listener that reaches a route; an anonymous caller takes a plain-HTTP one when
// there is one. Routing alone would take the first listener in spec order among the most
// specific hostnames. It sets res.Request.Listener: to the one listener kind that reaches
// a route, or, when both do (or neither does), by the caller's identity, with res.Chosen
// saying so (unless terse) and res.Options (both reach a route) the listeners explain
// also decides on.
func (g *Graph) chooseListener(q *Query, res *Resolution) {
	res.Options = g.ListenerOptions(res.Request, res.Options[:0])
	opts := res.Options
	// The first listener of each kind that reaches a route, and of each kind at all.
	var plain, tls, anyPlain, anyTLS *ListenerOption
	for i := range opts {
		o := &opts[i]
		if o.Protocol == gwapiv1.HTTPProtocolType {
			anyPlain = first(anyPlain, o)
			if o.Routed {
				plain = first(plain, o)
			}
		} else {
			anyTLS = first(anyTLS, o)
			if o.Routed {
				tls = first(tls, o)
			}
		}
	}
	keep := false
	switch {
	case plain != nil && tls != nil:
		keep = true // the verdict may differ on the other kind
	case plain != nil || tls != nil:
		// One kind of listener reaches a route: the caller uses it, whatever its identity.
		if plain == nil {
			plain = tls
		}
		res.Request.Listener = plain.Name
		res.Options = opts[:0]
		return
	case anyPlain != nil && anyTLS != nil:
		plain, tls = anyPlain, anyTLS // no route either way: the caller still picks by kind
	default:
		res.Options = opts[:0]
		return
	}
	pick, other := plain, tls
	if q.Identity {
		pick, other = tls, plain
	}
	res.Request.Listener = pick.Name
	if !q.Terse {
		res.chosen = ListenerChoice{Identity: q.Identity, Picked: *pick, Other: *other}
		res.Chosen = &res.chosen
	}
	if !keep {
		res.Options = opts[:0]
	}
}

func first(have, o *ListenerOption) *ListenerOption {
	if have != nil {
		return have
	}
	return o
}

// listenerProtocol is the protocol of a gateway's listener by the name routing gives it:
// its own, or one a ListenerSet adds ("namespace/listenerset/listener"); "" for none.
func (g *Graph) listenerProtocol(gw *snapshot.Gateway, name string) string {
	if gw == nil {
		return ""
	}
	l, _ := g.Listener(GatewayRef(gw.Namespace, gw.Name), name)
	return string(l.Protocol)
}

// InferGateway is the gateways a request that names none may go through: those route
// is accepted by when it names a route, those that reach backend when it names an
// XBackend, else every gateway; in graph order, each once.
func (g *Graph) InferGateway(route, backend *Ref) []Ref {
	var cands []Ref
	switch {
	case route != nil:
		for _, a := range g.AttachmentsOfRoute(*route) {
			if a.Accepted {
				cands = appendRef(cands, GatewayRef(a.Gateway.Namespace, a.Gateway.Name))
			}
		}
	case backend != nil:
		cands = g.GatewaysOfBackend(*backend)
	default:
		for _, gw := range g.Gateways() {
			cands = appendRef(cands, GatewayRef(gw.Namespace, gw.Name))
		}
	}
	return cands
}

func appendRef(l []Ref, r Ref) []Ref {
	for _, x := range l {
		if x == r {
			return l
		}
	}
	return append(l, r)
}

// hostsThatRoute are the hostnames that accepted routes serve on gateway gw, sorted,
// when none of them takes host (so the host, not the path or a policy, is why no route
// takes the request); nil when one does.
func (g *Graph) hostsThatRoute(gw Ref, host string) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range g.Attachments(gw) {
		if !a.Accepted {
			continue
		}
		for _, h := range a.Hostnames {
			if h == "*" || (host != "" && HostMatches(h, host)) {
				return nil
			}
			if h != "" && !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	sort.Strings(out)
	return out
}
