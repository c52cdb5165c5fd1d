// Routing a request: explain's side of topology.Resolve, which finds the gateway,
// listener, route rule and backends a request reaches; here they become the choices
// explain decides on.

package explain

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// listenerPort is the port of the gateway's listener name, 0 without a listener.
func (rt *routing) listenerPort(name string) int {
	if name != "" && name == rt.res.Routed.Listener {
		return rt.res.Routed.ListenerPort // routing found it: no second scan of the gateway's listeners
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

// resolve finds the path(s) of a request (topology.Resolve) and makes them rt.choices,
// with rt.gw the gateway. Without detail, the choices' PathInfo carries only Listener
// and Protocol, and no trace step is built: what an untraced decision reads.
func (sim *Simulator) resolve(r *Request, rt *routing, detail bool) error {
	rt.choices, rt.options = rt.choices[:0], nil
	if r.Backend != nil && r.Service != nil {
		return fmt.Errorf("%w: give either a backend (XBackend) or a service, not both", ErrInput)
	}
	q := &rt.q
	*q = topology.Query{RouteRequest: topology.RouteRequest{Listener: r.Listener, Port: r.HTTP.Port, Host: r.HTTP.Host, Path: r.HTTP.Path,
		Method: r.HTTP.Method, Headers: r.HTTP.Headers, Terse: !detail}, Identity: r.From.Kind == CallerServiceAccount || r.From.Kind == CallerSPIFFE}
	if r.Gateway != nil {
		q.Gateway = topology.GatewayRef(r.Gateway.Namespace, r.Gateway.Name)
	}
	if r.Route != nil {
		rt.named[0] = topology.HTTPRouteRef(r.Route.Namespace, r.Route.Name)
		q.Route = &rt.named[0] // in rt: no allocation per request
	}
	switch {
	case r.Backend != nil:
		rt.named[1] = topology.XBackendRef(r.Backend.Namespace, r.Backend.Name)
		q.Backend = &rt.named[1]
	case r.Service != nil:
		rt.named[1] = topology.ServiceRef(r.Service.Namespace, r.Service.Name)
		q.Service = &rt.named[1]
	}
	res := &rt.res
	sim.Graph.Resolve(q, res)
	if res.Unresolved.Why != topology.UnresolvedNoGateway && r.Gateway == nil {
		r.Gateway = &NamespacedName{Namespace: res.Gateway.Namespace, Name: res.Gateway.Name}
	}
	rt.gw = res.Routed.Gateway
	if err := sim.unresolved(rt); err != nil || res.Unresolved.Why != "" {
		return err
	}
	rt.agentic = res.Agentic
	rt.options = res.Options
	var base PathInfo
	if detail {
		base.Gateway = res.Routed.GatewayKey // r.Gateway's namespace/name, made once by the graph
		if res.Chosen != nil {
			c := *res.Chosen
			base.ListenerChoice = &c
		}
		if dp := sim.Graph.DataPlane(rt.gw); dp.Assumed {
			base.DataPlaneAssumption = &dp
		}
		if r.Route != nil {
			base.Route = r.Route.String()
		}
	}
	base.Listener, base.Protocol = res.Listener, string(res.Protocol)
	if res.Rule {
		base.RuleName = res.RuleName
		if detail {
			if !res.RuleByName {
				base.Route = res.Routed.RouteKey
			}
			idx := res.RuleIndex
			base.RuleIndex = &idx
		}
	}
	base.Resolved = !res.RuleByName
	for i := range res.Targets {
		rt.choices = append(rt.choices, sim.choiceOf(rt, base, &res.Targets[i], len(res.Targets) > 1, detail))
	}
	if detail && res.IgnoredMethod != nil {
		note := Step{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventIgnoredMethod, IgnoredMethod: res.IgnoredMethod}
		for i := range rt.choices {
			rt.choices[i].pre = append([]Step{note}, rt.choices[i].pre...)
		}
	}
	return nil
}

// unresolved is the error of a request topology.Resolve could not resolve (rt.res,
// rt.q): an input error, or nil with rt's one choice of a named object agpol could not
// read (notFound).
func (sim *Simulator) unresolved(rt *routing) error {
	u := &rt.res.Unresolved
	named := NamespacedName{Namespace: u.Ref.Namespace, Name: u.Ref.Name}
	switch u.Why {
	case "":
		return nil
	case topology.UnresolvedNoGateway:
		if len(u.Candidates) == 0 {
			return fmt.Errorf("%w: no gateway given and none can be inferred", ErrInput)
		}
		names := make([]string, len(u.Candidates))
		for i, c := range u.Candidates {
			names[i] = c.Namespace + "/" + c.Name
		}
		return fmt.Errorf("%w: no gateway given; candidates: %s", ErrInput, strings.Join(names, ", "))
	case topology.UnresolvedGateway:
		rt.gw = nil
		return sim.notFound(rt, "gateway", gatewaysResource, named)
	case topology.UnresolvedListener:
		return sim.notFound(rt, "listener", "", NamespacedName{Name: u.Listener})
	case topology.UnresolvedRoute:
		return sim.notFound(rt, "httproute", httproutesResource, named)
	case topology.UnresolvedXBackend:
		return sim.notFound(rt, "xbackend", xbackendsResource, named)
	case topology.UnresolvedRoutesElsewhere:
		return fmt.Errorf("%w: the request routes to %s, not to %s/%s; give --backend or --service", ErrInput, named, rt.q.Route.Namespace, rt.q.Route.Name)
	}
	return fmt.Errorf("%w: %s", ErrInput, u.Why)
}

// choiceOf is the choice of target t of rt's request: the path base leads to, with its
// backend, why the data plane refuses it (no route, no backend), and the routing steps
// of its trace (when detail). weighted: the rule has several backends.
func (sim *Simulator) choiceOf(rt *routing, base PathInfo, t *topology.Target, weighted, detail bool) choice {
	ch := choice{info: base, uncertain: t.Uncertain}
	switch {
	case t.Named.Kind != "":
		ch.info.BackendKind = t.Named.Kind
		ch.info.Resolved = false
		if t.Named.Kind == topology.BackendXBackend {
			ch.backend, ch.hasBackend = t.Named, true
		}
		if detail {
			ch.info.Backend, ch.info.BackendAssumption = t.Named.Kind+" "+t.Named.Namespace+"/"+t.Named.Name, assumption(t.Assumed)
			ch.pre = assumedStep(t.Assumed)
			if t.Named.Kind == topology.BackendService {
				ch.pre = append(ch.pre, Step{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackendLevel})
			}
		}
		return ch
	case t.NoBackend.Why == topology.NoBackendNoRoute:
		ch.info.Route, ch.refused = "", DecidedNoRoute
		if detail {
			nb := t.NoBackend
			ch.info.NoBackend = nb.Why
			if len(nb.HostsThatRoute) > 0 {
				ch.noBackend = &nb // the headline says the request names no host
			}
			ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackend, NoBackend: &nb}}
		}
		return ch
	case t.Backend == nil:
		ch.refused = DecidedNoBackend
		if detail {
			nb := t.NoBackend
			ch.info.NoBackend, ch.noBackend = nb.Why, &nb
			ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackend, NoBackend: &nb}}
		}
		return ch
	}
	b := t.Backend
	ch.info.BackendKind = b.Kind
	if b.Kind == topology.BackendOther {
		ch.info.BackendKind = b.Ref.Kind
	}
	if detail {
		if weighted {
			w := b.Weight
			ch.info.Weight = &w
		}
		ch.info.Backend, ch.info.BackendAssumption = b.Name, assumption(b.Assumed)
	}
	switch {
	case t.NoBackend.Why != "":
		ch.refused = DecidedNoBackend
		if detail {
			nb := t.NoBackend
			ch.info.NoBackend, ch.noBackend = nb.Why, &nb
			ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackend, NoBackend: ch.noBackend}}
		}
	case b.Kind == topology.BackendXBackend:
		ch.backend, ch.hasBackend = topology.XBackendRef(b.Ref.Namespace, b.Ref.Name), true
		if !rt.res.RuleByName {
			ch.target = b // a pointer into the graph: it keys the chain cache
		}
		if detail {
			ch.pre = assumedStep(b.Assumed)
		}
	default:
		if detail {
			st := Step{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo, Event: EventNoBackendLevel}
			if b.Kind == topology.BackendOther {
				kind := topology.Ref{Group: b.Ref.Group, Kind: b.Ref.Kind}
				st.BackendKind = &kind
			}
			ch.pre = append(assumedStep(b.Assumed), st)
		}
	}
	return ch
}

// otherListeners decides r on each other listener of rt.options that reaches a route
// and reports, for each result of the request (out[from:], in the order explain made
// them), the listeners where the primary semantics' verdict would differ.
func (sim *Simulator) otherListeners(r *Request, rt *routing, out []*Result) {
	chosen := rt.res.Request.Listener
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
			end := sim.pathEnd(&alt, &art, ch, sim.authPolicyOf(&alt, &art, ch, false))
			d := sim.decideChoice(0, &alt, &art, ch, &end, false, nil)
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

// assumedStep notes a backend object that is not in the input and was assumed to exist.
func assumedStep(a topology.Assumption) []Step {
	if a.Why == "" {
		return nil
	}
	return []Step{{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo, Event: EventBackendAssumed, Assumed: &a}}
}

// assumption is a, nil when it assumes nothing.
func assumption(a topology.Assumption) *topology.Assumption {
	if a.Why == "" {
		return nil
	}
	return &a
}
