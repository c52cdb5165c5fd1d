package explain

import (
	"errors"
	"fmt"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// ErrInput marks a request that cannot be evaluated (a missing gateway, route or backend).
var ErrInput = errors.New("invalid request")

// Simulator decides requests against one snapshot under one or more semantics. Chains
// are compiled once per (gateway, listener, backend) and reused across requests.
type Simulator struct {
	Snapshot    *snapshot.Snapshot
	Graph       *topology.Graph
	Engines     []*effective.Engine
	TrustDomain string

	kuadrant kuadrant
	// activations are the CEL variables of queries without headers or time, shared by
	// every query of the same request line and MCP call (see Query).
	activations activationCache
	// chains[i] caches the chains of Engines[i] by routed path (see chain).
	chains []chainCache
	// syms interns the strings compiled chains compare (see symbols).
	syms symbols
}

// New prepares a simulator. sems must not be empty; the first is the primary semantics.
func New(s *snapshot.Snapshot, sems []effective.Semantics, trustDomain string) *Simulator {
	if trustDomain == "" {
		trustDomain = "cluster.local"
	}
	sim := &Simulator{Snapshot: s, Graph: topology.BuildGraph(s), TrustDomain: trustDomain}
	if len(sems) == 0 {
		sems = []effective.Semantics{effective.Reference()}
	}
	for _, sem := range sems {
		sim.Engines = append(sim.Engines, effective.NewEngine(s, sem, trustDomain))
	}
	sim.chains = make([]chainCache, len(sim.Engines))
	return sim
}

// PathInfo is where the request went.
type PathInfo struct {
	Gateway  string `json:"gateway"`
	Listener string `json:"listener,omitempty"`
	// Protocol of the listener, when known.
	Protocol  string `json:"protocol,omitempty"`
	Route     string `json:"route,omitempty"`
	RuleIndex *int   `json:"ruleIndex,omitempty"`
	RuleName  string `json:"ruleName,omitempty"`
	// Backend is "XBackend ns/name" or "Service ns/name"; empty without a backend.
	Backend     string `json:"backend,omitempty"`
	BackendKind string `json:"backendKind,omitempty"`
	Weight      *int32 `json:"weight,omitempty"`
	// Resolved is true when routing chose the path, false when the request named it.
	Resolved bool `json:"resolved"`
	// Problem says why the data plane would not reach a backend (no route: 404, broken rule: 500).
	Problem string `json:"problem,omitempty"`
	// ListenerAssumed says which listener agpol chose for a request that named none,
	// and why; empty when the request left no choice.
	ListenerAssumed string `json:"listenerAssumed,omitempty"`
	// DataPlaneAssumed says which data plane agpol assumed serves the Gateway, and why,
	// when its GatewayClass is not in the input (topology.ClassifyGateways).
	DataPlaneAssumed string `json:"dataPlaneAssumed,omitempty"`
}

// ListenerVerdict is the decision the same request would get on another listener.
type ListenerVerdict struct {
	Listener  string `json:"listener"`
	Protocol  string `json:"protocol"`
	Decision  string `json:"decision"`
	Level     string `json:"level"`
	DecidedBy string `json:"decidedBy"`
}

// Expectation is the outcome of a request's expect fields.
type Expectation struct {
	Decision  string   `json:"decision,omitempty"`
	DecidedBy string   `json:"decidedBy,omitempty"`
	Level     string   `json:"level,omitempty"`
	Passed    bool     `json:"passed"`
	Failures  []string `json:"failures,omitempty"`
}

// Other is the decision under a non-primary semantics.
type Other struct {
	Semantics string `json:"semantics"`
	Decision  string `json:"decision"`
	Level     string `json:"level"`
	DecidedBy string `json:"decidedBy"`
}

// Result is the decision for one request on one backend under one semantics.
type Result struct {
	Name string `json:"name"`
	Decision
	Request *Request `json:"request"`
	Path    PathInfo `json:"path"`
	// Disagreement is true when the semantics evaluated disagree on this request and path.
	Disagreement bool         `json:"disagreement,omitempty"`
	Primary      bool         `json:"-"`
	Expect       *Expectation `json:"expect,omitempty"`
	// AuthPolicy is what Kuadrant's effective AuthPolicy asks of the request, beside the decision.
	AuthPolicy *AuthPolicyInfo `json:"authPolicy,omitempty"`
	// OtherListeners are the listeners, other than the one agpol assumed for a request
	// that named none, that also take the request and would decide it otherwise (the
	// answer depends on how the agent connects).
	OtherListeners []ListenerVerdict `json:"otherListeners,omitempty"`
}

// choice is one backend a request reaches (or the gateway alone, without a route).
type choice struct {
	// info holds the names only when resolved with detail; Listener and Protocol always.
	info PathInfo
	// unread is set when the request names an object that is not among those read and
	// its kind could not be read: nothing can be decided (NotReadDecision).
	unread []snapshot.Warning
	// backend is the XBackend whose policies apply, when hasBackend.
	backend    topology.Ref
	hasBackend bool
	// target is the routed backendRef of an XBackend (a pointer into the graph), nil
	// when the request named the backend: it keys the chain cache.
	target *topology.BackendTarget
	pre    []Step
	// refused is set when the data plane answers the request itself instead of sending
	// it to a backend: DecidedNoRoute (404) or DecidedNoBackend (500, redirect). The
	// gateway level's policies still run first (RBAC runs before routing), so their
	// deny stands; any other outcome becomes this deny.
	refused string
}

// refuse turns the decision on a choice that reaches no backend into the deny the
// caller gets: a gateway-level deny stands (403 before routing); an allow or an answer
// that waits on the authorizer becomes a deny by the data plane's own answer, since
// neither authorizer answer lets the call reach a tool.
func refuse(d *Decision, ch *choice) {
	if ch.refused == "" || d.Verdict == Deny {
		return
	}
	was, wasBy := d.Verdict, d.DecidedBy
	d.Verdict, d.Explicit, d.Level, d.DecidedBy, d.Branches = Deny, false, string(effective.LevelGateway), ch.refused, nil
	if d.Trace == nil && d.Reason == "" && d.Cause == nil {
		return // untraced: no text
	}
	d.Cause = nil // the reason below replaces it
	switch ch.refused {
	case DecidedNoRoute:
		d.Reason = "no route takes the request: the data plane answers 404"
	default:
		d.Reason = "the request reaches no backend: " + ch.info.Problem
	}
	switch {
	case wasBy == DecidedOtherDataPlane:
	case was == Indeterminate:
		d.Reason += ", whatever the gateway authorizer answers (403 if it denies)"
	default:
		d.Reason += ", after the gateway-level policies let it through"
	}
	d.Trace = append(d.Trace, Step{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Reason: d.Reason})
}

// routing is the scratch space of resolve, reused across requests by one goroutine so
// that routing a request allocates nothing.
type routing struct {
	gw *snapshot.Gateway
	// agentic: the reference data plane serves gw, so XAccessPolicies run there.
	agentic bool
	choices []choice
	req     topology.RouteRequest
	res     topology.RouteResult

	// What explain reuses from one request to the next: the request prepared for
	// matching (nothing a decision returns points into it), the caller's principal,
	// and the results not yet handed out (see results).
	c   reqCtx
	buf []byte
	// options are the listeners that take a request naming no listener and no port
	// (when there is a choice between a plain-HTTP and an HTTPS one), and assumed says
	// which one resolve chose, and why (empty when the request left no choice).
	options   []topology.ListenerOption
	assumed   string
	optBuf    []topology.ListenerOption
	slab      []Result
	lastChunk int
}

// maxResultChunk is the most results allocated at once for a batch.
const maxResultChunk = 64

// results returns n zeroed results carved from rt's slab, so that a batch allocates
// its results a chunk at a time; chunks grow from n to maxResultChunk, so a single
// request allocates only its own.
func (rt *routing) results(n int) []Result {
	if len(rt.slab) < n {
		size := max(n, min(2*rt.lastChunk, maxResultChunk))
		rt.lastChunk = size
		rt.slab = make([]Result, size)
	}
	g := rt.slab[:n:n]
	rt.slab = rt.slab[n:]
	return g
}

// Options says what Simulate builds beside each result's verdict, explicitness, level,
// deciding rule and path.
type Options struct {
	// Trace makes every decision traced: its Reason and Trace, as Explain gives them.
	// Without it decisions are made untraced (as Decide makes them: same verdict,
	// explicitness, level, deciding rule and branches), except those whose expectation
	// fails, which are traced so that the failure can say why.
	Trace bool
	// AuthPolicy adds what Kuadrant's effective AuthPolicy asks of each request
	// (Result.AuthPolicy).
	AuthPolicy bool
}

// Full is what Explain gives: traced decisions and the AuthPolicy view.
var Full = Options{Trace: true, AuthPolicy: true}

// Explain decides one request. It returns one result per (backend, semantics): a
// weighted route rule yields one result per backend, each semantics one result per
// backend, primary semantics first. A request that names missing objects is an error
// wrapping ErrInput.
func (sim *Simulator) Explain(r *Request) ([]*Result, error) {
	var rt routing
	return sim.explain(r, &rt, Full, nil)
}

func (sim *Simulator) explain(r *Request, rt *routing, o Options, out []*Result) ([]*Result, error) {
	r.Normalize()
	if err := sim.resolve(r, rt, true); err != nil {
		return out, err
	}
	first := len(out)
	for k := range rt.choices {
		ch := &rt.choices[k]
		if ch.unread != nil {
			for i, e := range sim.Engines {
				d := NotReadDecision(ch.info, ch.unread)
				d.Semantics = e.Semantics.Name
				res := &Result{Name: r.Name, Decision: d, Request: r, Path: ch.info, Primary: i == 0}
				if i == 0 {
					res.Expect = check(r, &res.Decision)
				}
				out = append(out, res)
			}
			continue
		}
		pre := ch.pre
		if o.Trace {
			pre = sim.tracedPre(r, rt, ch)
		}
		c := &rt.c
		sim.initChoice(c, r, rt, ch)
		group := rt.results(len(sim.Engines))
		for i := range sim.Engines {
			var d Decision
			if o.Trace {
				d = decide(sim.chain(i, rt.gw, ch), c, r.ExtAuth, true, pre)
			} else {
				d, rt.buf = sim.decideUntraced(i, rt.gw, ch, c, r.ExtAuth, rt.buf)
			}
			refuse(&d, ch)
			group[i] = Result{Name: r.Name, Decision: d, Request: r, Path: ch.info, Primary: i == 0}
		}
		if unread := sim.unread(rt.gw, ch); len(unread) > 0 {
			for i := range group {
				group[i].Decision = UnreadDecision(group[i].Decision, unread)
			}
		}
		for _, g := range group[1:] {
			if g.Verdict != group[0].Verdict || g.Level != group[0].Level || g.DecidedBy != group[0].DecidedBy {
				for i := range group {
					group[i].Disagreement = true
				}
				break
			}
		}
		var ap *AuthPolicyInfo
		if !rt.agentic || o.AuthPolicy {
			ap = sim.authPolicyFor(r, ch.info)
		}
		if !rt.agentic {
			for i := range group {
				kuadrantDecides(&group[i].Decision, ap)
			}
			if ap == nil && ch.info.Route == "" && ch.info.Backend != "" {
				// The request names the backend, not the route: the AuthPolicies of the
				// routes to it decide, with credentials agpol does not know.
				if aps := sim.authPoliciesToward(rt.gw, ch.info.Listener, ch.info.Backend); aps != nil {
					for i := range group {
						group[i].Decision = AuthPolicyUnevaluated(group[i].Decision, aps)
					}
				}
			}
		}
		if x := check(r, &group[0].Decision); x != nil {
			if !x.Passed && !o.Trace {
				// The failure is printed with its reason: decide it again, traced (the
				// traced decision replaces the untraced one; both give the same verdict,
				// level and deciding rule, which the expectation was checked against).
				group[0].Decision = decide(sim.chain(0, rt.gw, ch), c, r.ExtAuth, true, sim.tracedPre(r, rt, ch))
				refuse(&group[0].Decision, ch)
				if unread := sim.unread(rt.gw, ch); len(unread) > 0 {
					group[0].Decision = UnreadDecision(group[0].Decision, unread)
				}
			}
			group[0].Expect = x
		}
		if o.AuthPolicy && ap != nil {
			for i := range group {
				group[i].AuthPolicy = ap
			}
		}
		for i := range group {
			out = append(out, &group[i])
		}
	}
	if len(rt.options) > 0 {
		sim.otherListeners(r, rt, out[first:])
	}
	return out, nil
}

// tracedPre is the trace steps that precede a traced decision of choice ch: the
// choice's own (a fresh copy), then, on a plain-HTTP listener, the step that says the
// caller's identity is lost (on the reference data plane, whose policies read it).
func (sim *Simulator) tracedPre(r *Request, rt *routing, ch *choice) []Step {
	pre := append([]Step(nil), ch.pre...)
	if rt.agentic && ch.info.Protocol == string(gwapiv1.HTTPProtocolType) && r.From.Principal(sim.TrustDomain) != "" {
		pre = append(pre, Step{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo,
			Reason: fmt.Sprintf("listener %s is plain HTTP: no client certificate, the caller %s is seen as anonymous", ch.info.Listener, r.From.String())})
	}
	return pre
}

// initChoice prepares c for request r on choice ch: the caller as the listener sees it
// (anonymous on plain HTTP), the port the request gives or else the listener's.
func (sim *Simulator) initChoice(c *reqCtx, r *Request, rt *routing, ch *choice) {
	port := r.HTTP.Port
	if port == 0 {
		port = rt.listenerPort(ch.info.Listener)
	}
	c.initCaller(r, sim.TrustDomain, ch.info.Protocol == string(gwapiv1.HTTPProtocolType), port)
}

// Simulate decides a batch as Explain does each request (traced, with the AuthPolicy
// view), reusing compiled chains. It stops at the first request that names missing
// objects.
func (sim *Simulator) Simulate(reqs []*Request) ([]*Result, error) {
	return sim.SimulateWith(reqs, Full)
}

// SimulateWith is Simulate building what o asks for beside each decision: a batch whose
// output needs no trace is decided untraced.
func (sim *Simulator) SimulateWith(reqs []*Request, o Options) ([]*Result, error) {
	var out []*Result
	var rt routing
	for _, r := range reqs {
		var err error
		if out, err = sim.explain(r, &rt, o, out); err != nil {
			return nil, requestError(r, err)
		}
	}
	return out, nil
}

// SimulateEach is SimulateWith handing each result to emit as soon as it is decided,
// in the same order, instead of keeping them: memory stays that of one request's
// results however many requests there are. Every request is routed first, so a request
// that names missing objects is an error before anything is emitted.
func (sim *Simulator) SimulateEach(reqs []*Request, o Options, emit func(*Result) error) error {
	var rt routing
	for _, r := range reqs {
		r.Normalize()
		if err := sim.resolve(r, &rt, false); err != nil {
			return requestError(r, err)
		}
	}
	var out []*Result
	for _, r := range reqs {
		var err error
		if out, err = sim.explain(r, &rt, o, out[:0]); err != nil {
			return requestError(r, err)
		}
		for _, res := range out {
			if err := emit(res); err != nil {
				return err
			}
		}
		clear(out)
	}
	return nil
}

func requestError(r *Request, err error) error {
	if r.Line > 0 {
		return fmt.Errorf("request %q (line %d): %w", r.Name, r.Line, err)
	}
	return fmt.Errorf("request %q: %w", r.Name, err)
}

// Batch decides requests one after another without building results: routing, chain
// lookup and untraced decisions, with scratch space reused from one request to the
// next, so that a request that routes to a backend allocates nothing (CEL conditions
// aside). Use one Batch per goroutine.
type Batch struct {
	sim *Simulator
	rt  routing
	c   reqCtx
	out []Decision
	buf []byte // scratch for the caller's principal
}

// Batch returns a Batch deciding with sim.
func (sim *Simulator) Batch() *Batch { return &Batch{sim: sim} }

// Decide normalizes r, routes it, and decides it on each backend it reaches under the
// primary semantics, as Explain would (verdict, explicitness, level, deciding rule and
// branches; no reason or trace). The decisions are in the order of Explain's primary
// results and valid until the next call.
func (b *Batch) Decide(r *Request) ([]Decision, error) {
	sim := b.sim
	r.Normalize()
	if err := sim.resolve(r, &b.rt, false); err != nil {
		return nil, err
	}
	b.out = b.out[:0]
	for k := range b.rt.choices {
		ch := &b.rt.choices[k]
		if ch.unread != nil {
			b.out = append(b.out, NotReadDecision(ch.info, ch.unread))
			continue
		}
		sim.initChoice(&b.c, r, &b.rt, ch)
		var d Decision
		d, b.buf = sim.decideUntraced(0, b.rt.gw, ch, &b.c, r.ExtAuth, b.buf)
		refuse(&d, ch)
		if unread := sim.unread(b.rt.gw, ch); len(unread) > 0 {
			d = UnreadDecision(d, unread)
		}
		b.out = append(b.out, d)
	}
	return b.out, nil
}

func check(r *Request, d *Decision) *Expectation {
	if r.Expect == "" && r.ExpectDecidedBy == "" && r.ExpectLevel == "" {
		return nil
	}
	x := &Expectation{Decision: r.Expect, DecidedBy: r.ExpectDecidedBy, Level: r.ExpectLevel, Passed: true}
	if r.Expect != "" && r.Expect != d.Verdict {
		x.Failures = append(x.Failures, fmt.Sprintf("decision: expected %s, got %s", r.Expect, d.Verdict))
	}
	if r.ExpectDecidedBy != "" && r.ExpectDecidedBy != d.DecidedBy {
		x.Failures = append(x.Failures, fmt.Sprintf("decidedBy: expected %s, got %s", r.ExpectDecidedBy, d.DecidedBy))
	}
	if r.ExpectLevel != "" && r.ExpectLevel != d.Level {
		x.Failures = append(x.Failures, fmt.Sprintf("level: expected %s, got %s", r.ExpectLevel, d.Level))
	}
	x.Passed = len(x.Failures) == 0
	return x
}

func (sim *Simulator) gateway(n NamespacedName) *snapshot.Gateway {
	return sim.Graph.Gateway(topology.GatewayRef(n.Namespace, n.Name))
}

func listenerProtocol(gw *snapshot.Gateway, name string) string {
	for _, l := range gw.Spec.Listeners {
		if string(l.Name) == name {
			return string(l.Protocol)
		}
	}
	return ""
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
	return listenerPort(sim.gateway(*r.Gateway), info.Listener)
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
		if listenerProtocol(gw, r.Listener) == "" {
			return fmt.Errorf("%w: gateway %s has no listener %q", ErrInput, r.Gateway, r.Listener)
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
		base.Protocol = listenerProtocol(gw, base.Listener)
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
		if detail {
			info.Backend = "XBackend " + r.Backend.String()
		}
		rt.choices = append(rt.choices, choice{info: info, backend: ref, hasBackend: true})
		return nil
	case r.Service != nil:
		info := base
		info.BackendKind = "Service"
		ch := choice{info: info}
		if detail {
			ch.info.Backend = "Service " + r.Service.String()
			ch.pre = []Step{{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo,
				Reason: "backend is a core Service: no backend-level policies"}}
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
		ch := choice{info: info, refused: DecidedNoRoute}
		if detail {
			ch.info.Problem = "no route"
			reason := "no route matches the request: the data plane answers 404" + rt.gatewayOnly()
			if routed.Reason != "" {
				reason = "no route: " + routed.Reason + rt.gatewayOnly()
				if rt.agentic {
					reason += " (RBAC runs before routing)"
				}
			}
			ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Reason: reason}}
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
			d, art.buf = sim.decideUntraced(0, art.gw, ch, &art.c, alt.ExtAuth, art.buf)
			refuse(&d, ch)
			if unread := sim.unread(art.gw, ch); len(unread) > 0 {
				d = UnreadDecision(d, unread)
			}
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
	gwOnly := func(problem string) {
		ch := choice{info: base, refused: DecidedNoBackend}
		if detail {
			ch.info.Problem = problem
			ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo,
				Reason: problem + rt.gatewayOnly()}}
		}
		rt.choices = append(rt.choices, ch)
	}
	switch {
	case redirect:
		gwOnly("the rule answers with a redirect (no backend)")
		return
	case ruleProblem != "":
		if detail {
			gwOnly("the data plane answers 500: " + ruleProblem)
		} else {
			gwOnly("")
		}
		return
	case len(backends) == 0:
		gwOnly("the rule has no backend")
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
			ch.info.Backend = b.Name
		}
		switch {
		case b.Problem != "":
			ch.refused = DecidedNoBackend
			if detail {
				ch.info.Problem = b.Problem
				ch.pre = []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo,
					Reason: "the data plane answers 500: " + b.Problem + rt.gatewayOnly()}}
			}
		case b.Kind == topology.BackendXBackend:
			ch.backend, ch.hasBackend, ch.target = topology.XBackendRef(b.Ref.Namespace, b.Ref.Name), true, b
			if detail {
				ch.pre = assumedStep(*b)
			}
		default:
			if detail {
				what := "backend is a core Service: no backend-level policies"
				if b.Kind == topology.BackendOther {
					what = fmt.Sprintf("backend is a %s of the Gateway's data plane: no backend-level policies", kindName(b.Ref))
				}
				ch.pre = append(assumedStep(*b), Step{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo, Reason: what})
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
		base.Protocol = listenerProtocol(match[0].Gateway, base.Listener)
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

// gatewayOnly is what a request that reaches no backend still meets: the gateway-level
// XAccessPolicies, on the reference data plane only.
func (rt *routing) gatewayOnly() string {
	if rt.agentic {
		return "; only gateway-level policies run"
	}
	return ""
}

// kindName is "Kind (group)" for a backend kind of another data plane.
func kindName(r topology.Ref) string {
	if r.Group == "" {
		return r.Kind
	}
	return r.Kind + " (" + r.Group + ")"
}
