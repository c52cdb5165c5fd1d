// Routing a request: which gateway, listener, route rule and backend it reaches.

package explain

import (
	"fmt"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

func (sim *Simulator) gateway(n NamespacedName) *snapshot.Gateway {
	return sim.Graph.Gateway(topology.GatewayRef(n.Namespace, n.Name))
}

// listenerProtocol is the protocol of a gateway's listener by the name routing gives it:
// its own, or one a ListenerSet adds ("namespace/listenerset/listener"); "" for none.
func (sim *Simulator) listenerProtocol(gw *snapshot.Gateway, name string) string {
	if gw == nil {
		return ""
	}
	l, _ := sim.Graph.Listener(topology.GatewayRef(gw.Namespace, gw.Name), name)
	return string(l.Protocol)
}

// listenerPort is the port of the gateway's listener name, 0 without a listener.
func (rt *routing) listenerPort(name string) int {
	if name != "" && name == rt.res.Listener {
		return rt.res.ListenerPort // routing found it: no second scan of the gateway's listeners
	}
	return listenerPort(rt.gw, name)
}

// listenerPort is the port of a gateway's listener, 0 without a listener.
func listenerPort(gw *snapshot.Gateway, name string) int {
	if name == "" || gw == nil {
		return 0
	}
	for _, l := range gw.Spec.Listeners {
		if string(l.Name) == name {
			return int(l.Port)
		}
	}
	return 0
}

func (sim *Simulator) listenerPort(r *Request, info PathInfo) int {
	if info.Listener == "" || r.Gateway == nil {
		return 0
	}
	gw := sim.gateway(*r.Gateway)
	if p := listenerPort(gw, info.Listener); p != 0 || gw == nil {
		return p
	}
	l, _ := sim.Graph.Listener(topology.GatewayRef(gw.Namespace, gw.Name), info.Listener) // a ListenerSet's
	return int(l.Port)
}

// resolve finds the path(s) of a request into rt (rt.gw, rt.choices): explicit names
// skip routing. Without detail, the choices' PathInfo carries only Listener and
// Protocol, and no trace step is built: what an untraced decision reads.
func (sim *Simulator) resolve(r *Request, rt *routing, detail bool) error {
	rt.choices = rt.choices[:0]
	if r.Backend != nil && r.Service != nil {
		return fmt.Errorf("%w: give either a backend (XBackend) or a service, not both", ErrInput)
	}
	if r.Gateway == nil {
		gws, err := sim.inferGateway(r)
		if err != nil {
			return err
		}
		r.Gateway = gws
	}
	rt.req = topology.RouteRequest{Gateway: topology.GatewayRef(r.Gateway.Namespace, r.Gateway.Name), Listener: r.Listener,
		Port: r.HTTP.Port, Host: r.HTTP.Host, Path: r.HTTP.Path, Method: r.HTTP.Method, Headers: r.HTTP.Headers, Terse: !detail}
	rt.options, rt.assumed = nil, ""
	if r.Listener == "" && r.HTTP.Port == 0 {
		sim.chooseListener(r, rt, detail)
	}
	// Routing fails only for a missing gateway.
	if err := sim.Graph.RouteInto(&rt.req, &rt.res); err != nil {
		rt.gw = nil
		return sim.notFound(rt, "gateway", gatewaysResource, *r.Gateway)
	}
	routed := &rt.res
	gw := routed.Gateway
	rt.gw = gw
	rt.agentic = sim.Graph.DataPlane(gw).Agentic()
	var base PathInfo
	if detail {
		base.Gateway = routed.GatewayKey // r.Gateway's namespace/name, made once by the graph
	}
	if r.Listener != "" {
		if sim.listenerProtocol(gw, r.Listener) == "" {
			return fmt.Errorf("%w: gateway %s has no listener %q%s", ErrInput, r.Gateway, r.Listener, listenerHint(gw, r.Listener))
		}
	}
	base.Listener = r.Listener
	if base.Listener == "" {
		base.Listener = routed.Listener
	}
	if base.Listener == "" {
		// Without a listener, the caller's identity is only lost if every listener is plain HTTP.
		allHTTP := len(gw.Spec.Listeners) > 0
		for _, l := range gw.Spec.Listeners {
			if l.Protocol != gwapiv1.HTTPProtocolType {
				allHTTP = false
			}
		}
		if allHTTP {
			base.Protocol = string(gwapiv1.HTTPProtocolType)
		}
	} else if base.Listener == routed.Listener {
		base.Protocol = string(routed.Protocol) // no second scan of the gateway's listeners
	} else {
		base.Protocol = sim.listenerProtocol(gw, base.Listener)
	}
	if rt.assumed != "" {
		base.ListenerAssumed = rt.assumed
	}
	if dp := sim.Graph.DataPlane(gw); dp.Assumed && detail {
		base.DataPlaneAssumed = dp.Why
	}
	if r.Route != nil {
		if sim.Graph.HTTPRoute(topology.HTTPRouteRef(r.Route.Namespace, r.Route.Name)) == nil {
			return sim.notFound(rt, "httproute", httproutesResource, *r.Route)
		}
		if detail {
			base.Route = r.Route.String()
		}
	}
	switch {
	case r.Backend != nil:
		ref := topology.XBackendRef(r.Backend.Namespace, r.Backend.Name)
		if sim.Graph.XBackend(ref) == nil {
			return sim.notFound(rt, "xbackend", xbackendsResource, *r.Backend)
		}
		info := base
		info.BackendKind = "XBackend"
		ch := choice{info: info, backend: ref, hasBackend: true}
		if detail {
			ch.info.Backend, ch.info.BackendAssumed = "XBackend "+r.Backend.String(), sim.Graph.AssumedBackend(ref)
			ch.pre = assumedStep(topology.BackendTarget{Assumed: ch.info.BackendAssumed})
		}
		ch.uncertain = sim.Graph.UncertainRoute(rt.req.Gateway, base.Listener, ref)
		rt.choices = append(rt.choices, ch)
		return nil
	case r.Service != nil:
		info := base
		info.BackendKind = "Service"
		ch := choice{info: info, uncertain: sim.Graph.UncertainRoute(rt.req.Gateway, base.Listener, topology.ServiceRef(r.Service.Namespace, r.Service.Name))}
		if detail {
			ch.info.Backend = "Service " + r.Service.String()
			ch.info.BackendAssumed = sim.Graph.AssumedBackend(topology.ServiceRef(r.Service.Namespace, r.Service.Name))
			ch.pre = append(assumedStep(topology.BackendTarget{Assumed: ch.info.BackendAssumed}),
				Step{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackendLevel})
		}
		rt.choices = append(rt.choices, ch)
		return nil
	}
	base.Resolved = true
	if routed.Route == nil || (r.Route != nil && (routed.Route.Namespace != r.Route.Namespace || routed.Route.Name != r.Route.Name)) {
		if r.Route != nil {
			if sim.onlyRule(r, rt, base, detail) {
				return nil
			}
		}
		if r.Route != nil && routed.Route != nil {
			return fmt.Errorf("%w: the request routes to %s/%s, not to %s; give --backend or --service", ErrInput, routed.Route.Namespace, routed.Route.Name, r.Route)
		}
		info := base
		info.Route = ""
		ch := choice{info: info, refused: DecidedNoRoute, uncertain: routed.Uncertain}
		if detail {
			ch.info.Problem = "no route"
			ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackend,
				NoBackend: &topology.NoBackend{Why: topology.NoBackendNoRoute, Problem: routed.Reason, GatewayLevelRuns: rt.agentic}}}
		}
		rt.choices = append(rt.choices, ch)
		return nil
	}
	if detail {
		base.Route = routed.RouteKey
		idx := routed.RuleIndex
		base.RuleIndex, base.RuleName = &idx, routed.RuleName
	}
	if routed.RouteListener != "" && base.Listener == "" {
		base.Listener = routed.RouteListener
	}
	first := len(rt.choices)
	sim.backendChoices(rt, base, routed.Backends, routed.RuleProblem, routed.Redirect, detail)
	for i := first; i < len(rt.choices) && routed.Uncertain != ""; i++ {
		rt.choices[i].uncertain = routed.Uncertain
	}
	if detail && routed.IgnoredMethod != "" {
		rule := routed.RuleName
		if rule == "" {
			rule = fmt.Sprintf("%d", routed.RuleIndex)
		}
		note := Step{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo,
			Reason: fmt.Sprintf("HTTPRoute %s rule %s matches method %s only, yet takes this %s request: the data plane does not check HTTPRoute method matches (the kube-agentic-networking translator drops them)",
				base.Route, rule, routed.IgnoredMethod, r.HTTP.Method)}
		for i := first; i < len(rt.choices); i++ {
			rt.choices[i].pre = append([]Step{note}, rt.choices[i].pre...)
		}
	}
	return nil
}

// chooseListener picks the listener of a request that names no listener and no port
// the way a real caller arrives: a caller with an identity presents it over mTLS, so
// it takes an HTTPS listener that reaches a route; an anonymous caller takes a
// plain-HTTP one when there is one. Routing alone would take the first listener in
// spec order among the most specific hostnames. It sets rt.req.Listener: to the one
// listener kind that reaches a route, or, when both do (or neither does), by the
// caller's identity, with rt.assumed saying so and rt.options (both reach a route) for
// otherListeners.
func (sim *Simulator) chooseListener(r *Request, rt *routing, detail bool) {
	rt.optBuf = sim.Graph.ListenerOptions(rt.req, rt.optBuf[:0])
	opts := rt.optBuf
	// The first listener of each kind that reaches a route, and of each kind at all.
	var plain, tls, anyPlain, anyTLS *topology.ListenerOption
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
	identity := r.From.Kind == CallerServiceAccount || r.From.Kind == CallerSPIFFE
	switch {
	case plain != nil && tls != nil:
		rt.options = opts // the verdict may differ on the other kind: otherListeners
	case plain != nil || tls != nil:
		// One kind of listener reaches a route: the caller uses it, whatever its identity.
		if plain == nil {
			plain = tls
		}
		rt.req.Listener = plain.Name
		return
	case anyPlain != nil && anyTLS != nil:
		plain, tls = anyPlain, anyTLS // no route either way: the caller still picks by kind
	default:
		return
	}
	pick, other := plain, tls
	if identity {
		pick, other = tls, plain
	}
	rt.req.Listener = pick.Name
	if !detail {
		return
	}
	if identity {
		rt.assumed = fmt.Sprintf("no listener or port given: the caller %s presents its identity over mTLS, so it arrives on HTTPS listener %s (port %d), not on plain-HTTP listener %s (port %d)",
			r.From.String(), pick.Name, pick.Port, other.Name, other.Port)
	} else {
		rt.assumed = fmt.Sprintf("no listener or port given: an anonymous caller arrives on plain-HTTP listener %s (port %d), not on HTTPS listener %s (port %d)",
			pick.Name, pick.Port, other.Name, other.Port)
	}
}

func first(have, o *topology.ListenerOption) *topology.ListenerOption {
	if have != nil {
		return have
	}
	return o
}

// otherListeners decides r on each other listener of rt.options that reaches a route
// and reports, for each result of the request (out[from:], in the order explain made
// them), the listeners where the primary semantics' verdict would differ.
func (sim *Simulator) otherListeners(r *Request, rt *routing, out []*Result) {
	chosen := rt.req.Listener
	for _, o := range rt.options {
		if !o.Routed || o.Name == chosen {
			continue
		}
		alt := *r
		alt.Listener = o.Name
		var art routing
		if err := sim.resolve(&alt, &art, true); err != nil {
			continue
		}
		for k := range art.choices {
			ch := &art.choices[k]
			sim.initChoice(&art.c, &alt, &art, ch)
			var d Decision
			d, art.buf = sim.decideOn(0, art.gw, ch, &art.c, alt.ExtAuth, false, nil, art.buf)
			end := sim.pathEnd(&alt, &art, ch, sim.authPolicyOf(&alt, &art, ch, false))
			end.finish(&d, false, certOf(alt.From))
			for _, res := range out {
				if !res.Primary || res.Path.BackendKind != ch.info.BackendKind || res.Path.Backend != ch.info.Backend {
					continue
				}
				if d.Verdict != res.Verdict {
					res.OtherListeners = append(res.OtherListeners, ListenerVerdict{Listener: o.Name, Protocol: string(o.Protocol),
						Decision: d.Verdict, Level: d.Level, DecidedBy: d.DecidedBy})
				}
			}
		}
	}
}

func (sim *Simulator) backendChoices(rt *routing, base PathInfo, backends []topology.BackendTarget, ruleProblem string, redirect, detail bool) {
	// gwOnly is a choice that reaches no backend: problem is how the path line ends, nb
	// why, said once in the answer (see refuse).
	gwOnly := func(problem string, nb topology.NoBackend) {
		ch := choice{info: base, refused: DecidedNoBackend}
		if detail {
			nb.GatewayLevelRuns = rt.agentic
			ch.info.Problem, ch.noBackend = problem, &nb
			ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackend, NoBackend: &nb}}
		}
		rt.choices = append(rt.choices, ch)
	}
	switch {
	case redirect:
		gwOnly("the rule answers with a redirect (no backend)", topology.NoBackend{Why: topology.NoBackendRedirect})
		return
	case ruleProblem != "":
		gwOnly(noBackend500, topology.NoBackend{Why: topology.NoBackendRule, Problem: ruleProblem})
		return
	case len(backends) == 0:
		gwOnly("the rule has no backend", topology.NoBackend{Why: topology.NoBackendNone})
		return
	}
	for i := range backends {
		b := &backends[i]
		ch := choice{info: base}
		ch.info.BackendKind = b.Kind
		if b.Kind == topology.BackendOther {
			ch.info.BackendKind = b.Ref.Kind
		}
		if detail {
			if len(backends) > 1 {
				w := b.Weight
				ch.info.Weight = &w
			}
			ch.info.Backend, ch.info.BackendAssumed = b.Name, b.Assumed
		}
		switch {
		case b.Problem != "":
			ch.refused = DecidedNoBackend
			if detail {
				ch.info.Problem = noBackend500
				ch.noBackend = &topology.NoBackend{Why: topology.NoBackendRef, Problem: b.Problem, GatewayLevelRuns: rt.agentic}
				ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackend, NoBackend: ch.noBackend}}
			}
		case b.Kind == topology.BackendXBackend:
			ch.backend, ch.hasBackend, ch.target = topology.XBackendRef(b.Ref.Namespace, b.Ref.Name), true, b
			if detail {
				ch.pre = assumedStep(*b)
			}
		default:
			if detail {
				st := Step{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackendLevel}
				if b.Kind == topology.BackendOther {
					kind := topology.Ref{Group: b.Ref.Group, Kind: b.Ref.Kind}
					st.BackendKind = &kind
				}
				ch.pre = append(assumedStep(*b), st)
			}
		}
		rt.choices = append(rt.choices, ch)
	}
}

// assumedStep notes a backend object that is not in the input and was assumed to exist.
func assumedStep(b topology.BackendTarget) []Step {
	if b.Assumed == "" {
		return nil
	}
	return []Step{{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo, Reason: b.Assumed}}
}

// onlyRule handles --route when routing did not pick that route: a route with a single
// rule is unambiguous.
func (sim *Simulator) onlyRule(r *Request, rt *routing, base PathInfo, detail bool) bool {
	var match []topology.Path
	for _, p := range sim.Graph.Paths(topology.GatewayRef(r.Gateway.Namespace, r.Gateway.Name)) {
		if p.Route != nil && p.Route.Namespace == r.Route.Namespace && p.Route.Name == r.Route.Name {
			match = append(match, p)
		}
	}
	if len(match) == 0 {
		return false
	}
	idx := match[0].RuleIndex
	var backends []topology.BackendTarget
	for _, p := range match {
		if p.RuleIndex != idx {
			return false
		}
		if p.Backend.Kind != topology.BackendNone {
			backends = append(backends, p.Backend)
		}
	}
	base.RuleName = match[0].RuleName
	if detail {
		base.Route, base.RuleIndex = r.Route.String(), &idx
	}
	base.Resolved = false
	if base.Listener == "" {
		base.Listener = match[0].Listener
		base.Protocol = sim.listenerProtocol(match[0].Gateway, base.Listener)
	}
	// The targets are copies: no pointer into the graph keys their chains.
	sim.backendChoices(rt, base, backends, match[0].RuleProblem, false, detail)
	for i := range rt.choices {
		rt.choices[i].target = nil
	}
	return true
}

func (sim *Simulator) inferGateway(r *Request) (*NamespacedName, error) {
	var cands []topology.Ref
	switch {
	case r.Route != nil:
		for _, a := range sim.Graph.AttachmentsOfRoute(topology.HTTPRouteRef(r.Route.Namespace, r.Route.Name)) {
			if a.Accepted {
				cands = appendRef(cands, topology.GatewayRef(a.Gateway.Namespace, a.Gateway.Name))
			}
		}
	case r.Backend != nil:
		cands = sim.Graph.GatewaysOfBackend(topology.XBackendRef(r.Backend.Namespace, r.Backend.Name))
	default:
		for _, g := range sim.Graph.Gateways() {
			cands = appendRef(cands, topology.GatewayRef(g.Namespace, g.Name))
		}
	}
	if len(cands) == 1 {
		return &NamespacedName{Namespace: cands[0].Namespace, Name: cands[0].Name}, nil
	}
	var names []string
	for _, c := range cands {
		names = append(names, c.Namespace+"/"+c.Name)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no gateway given and none can be inferred", ErrInput)
	}
	return nil, fmt.Errorf("%w: no gateway given; candidates: %s", ErrInput, strings.Join(names, ", "))
}

func appendRef(l []topology.Ref, r topology.Ref) []topology.Ref {
	for _, x := range l {
		if x == r {
			return l
		}
	}
	return append(l, r)
}

// noBackend500 ends the path line of a rule or backendRef the data plane answers 500 for;
// the reason is in the decision (refuse) or, when the gateway denies first, in the trace.
const noBackend500 = "no backend (500)"
