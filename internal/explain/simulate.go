package explain

import (
	"errors"
	"fmt"
	"strconv"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// ErrInput marks a request that cannot be evaluated (a missing gateway, route or backend).
var ErrInput = errors.New("invalid request")

// Simulator decides requests against one snapshot under one or more semantics. Chains
// are compiled once per (gateway, listener, backend) and reused across requests.
type Simulator struct {
	// Model is the snapshot and what is derived from it, built once (internal/model);
	// Snapshot and Graph are its parts.
	Model       *model.Model
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
	// programs keeps the compiled chains no routed path keys (see programOf).
	programs programCache
	// syms interns the strings compiled chains compare (see symbols).
	syms symbols
}

// New prepares a simulator on model m. sems must not be empty; the first is the primary
// semantics.
func New(m *model.Model, sems []effective.Semantics, trustDomain string) *Simulator {
	if trustDomain == "" {
		trustDomain = effective.DefaultTrustDomain
	}
	s := m.Snapshot
	sim := &Simulator{Model: m, Snapshot: s, Graph: m.Graph(), TrustDomain: trustDomain}
	if len(sems) == 0 {
		sems = []effective.Semantics{effective.Reference()}
	}
	for _, sem := range sems {
		sim.Engines = append(sim.Engines, effective.NewEngineOn(sim.Graph, s, sem, trustDomain)) // data planes classified once
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
	// NoBackend says why the data plane would not reach a backend, a topology.NoBackend*
	// constant (no route: 404, broken rule or backendRef: 500, a redirect, no
	// backendRef); "" when it reaches one. Problem is its short text, written by render
	// (render.PathProblem) for -o json|yaml; explain leaves it empty.
	NoBackend string `json:"-"`
	Problem   string `json:"problem,omitempty"`
	// ListenerAssumed says which listener agpol chose for a request that named none,
	// and why; empty when the request left no choice. render writes it from
	// ListenerChoice, how topology.Resolve chose.
	ListenerAssumed string                   `json:"listenerAssumed,omitempty"`
	ListenerChoice  *topology.ListenerChoice `json:"-"`
	// DataPlaneAssumed says which data plane agpol assumed serves the Gateway, and why,
	// when its GatewayClass is not in the input: render writes it from
	// DataPlaneAssumption (topology.ClassifyGateways).
	DataPlaneAssumed    string                     `json:"dataPlaneAssumed,omitempty"`
	DataPlaneAssumption *topology.GatewayDataPlane `json:"-"`
	// BackendAssumed says which backend object agpol assumed exists, when the input
	// cannot tell; render writes it from BackendAssumption (topology.BackendTarget.Assumed).
	BackendAssumed    string               `json:"backendAssumed,omitempty"`
	BackendAssumption *topology.Assumption `json:"-"`
}

// ListenerVerdict is the decision the same request would get on another listener.
type ListenerVerdict struct {
	Listener  string `json:"listener"`
	Protocol  string `json:"protocol"`
	Decision  string `json:"decision"`
	Level     string `json:"level"`
	DecidedBy string `json:"decidedBy"`
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
	// noBackend is why a choice reaches no backend, as data (info.NoBackend is its
	// Why, which the path line ends with).
	noBackend *topology.NoBackend
	// refused is set when the data plane answers the request itself instead of sending
	// it to a backend: DecidedNoRoute (404) or DecidedNoBackend (500, redirect). The
	// gateway level's policies still run first (RBAC runs before routing), so their
	// deny stands; any other outcome becomes this deny.
	refused string
	// uncertain says why Envoy may route the request otherwise (topology.RouteResult.Uncertain).
	uncertain *topology.RegexDiffers
}

// routing is the scratch space of resolve, reused across requests by one goroutine so
// that routing a request allocates nothing.
type routing struct {
	gw *snapshot.Gateway
	// agentic: the reference data plane serves gw, so XAccessPolicies run there.
	agentic bool
	choices []choice
	q       topology.Query
	res     topology.Resolution
	// named holds the route and the backend the request names, for q to point to.
	named [2]topology.Ref

	// What explain reuses from one request to the next: the request prepared for
	// matching (nothing a decision returns points into it), the caller's principal,
	// and the results not yet handed out (see results).
	c   reqCtx
	buf []byte
	// options are the listeners that take a request naming no listener and no port
	// when both a plain-HTTP and an HTTPS one reach a route (topology.Resolution.Options):
	// otherListeners decides on them.
	options   []topology.ListenerOption
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

// Options says what Explain builds beside each result's verdict, explicitness, level,
// deciding rule and path, and where the results go.
type Options struct {
	// Trace makes every decision traced: its Reason and Trace. Without it decisions are
	// made untraced (as Decide makes them: same verdict, explicitness, level, deciding
	// rule and branches), except those whose expectation fails, which are traced so
	// that the failure can say why.
	Trace bool
	// AuthPolicy adds what Kuadrant's effective AuthPolicy asks of each request
	// (Result.AuthPolicy).
	AuthPolicy bool
	// Emit, when set, receives each result as soon as it is decided, in order, and
	// Explain keeps none: memory stays that of one request's results however many
	// requests there are. Every request of a batch is routed first, so a request that
	// names missing objects is an error before anything is emitted.
	Emit func(*Result) error
}

// Full is what the explain command asks for: traced decisions and the AuthPolicy view.
var Full = Options{Trace: true, AuthPolicy: true}

// Explain decides requests, in order, building what o asks for; it is explain's and
// simulate's one entry point (Decider is the untraced one). Each request gives one
// result per (backend, semantics): a weighted route rule one result per backend, each
// semantics one result per backend, primary semantics first. Compiled chains are reused
// across requests. It stops at the first request that names missing objects: an error
// wrapping ErrInput, naming the request when it is one of a request file or a batch.
func (sim *Simulator) Explain(o Options, reqs ...*Request) ([]*Result, error) {
	var rt routing
	if o.Emit != nil && len(reqs) > 1 {
		for _, r := range reqs {
			r.Normalize()
			if err := sim.resolve(r, &rt, false); err != nil {
				return nil, requestError(r, err, true)
			}
		}
	}
	var out []*Result
	for _, r := range reqs {
		var err error
		if out, err = sim.explain(r, &rt, o, out); err != nil {
			return nil, requestError(r, err, len(reqs) > 1)
		}
		if o.Emit == nil {
			continue
		}
		for _, res := range out {
			if err := o.Emit(res); err != nil {
				return nil, err
			}
		}
		clear(out)
		out = out[:0]
	}
	return out, nil
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
		var pre []Step
		if o.Trace {
			pre = sim.tracedPre(r, rt, ch)
		}
		sim.initChoice(&rt.c, r, rt, ch)
		ap := sim.authPolicyOf(r, rt, ch, o.AuthPolicy)
		end := sim.pathEnd(r, rt, ch, ap)
		group := rt.results(len(sim.Engines))
		for i := range sim.Engines {
			group[i] = Result{Name: r.Name, Decision: sim.decideChoice(i, r, rt, ch, &end, o.Trace, pre), Request: r, Path: ch.info, Primary: i == 0}
		}
		for _, g := range group[1:] {
			if g.Verdict != group[0].Verdict || g.Level != group[0].Level || g.DecidedBy != group[0].DecidedBy {
				for i := range group {
					group[i].Disagreement = true
				}
				break
			}
		}
		if x := check(r, &group[0].Decision); x != nil {
			if !x.Passed && !o.Trace {
				// The failure is printed with its reason: decide it again, traced (the
				// traced decision replaces the untraced one; both give the same verdict,
				// level and deciding rule, which the expectation was checked against).
				group[0].Decision = sim.decideChoice(0, r, rt, ch, &end, true, sim.tracedPre(r, rt, ch))
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

// decideChoice decides choice ch of request r (routed in rt, rt.c prepared by
// initChoice) under Engines[i], traced when traced (the trace starting with pre), and
// finishes the decision with the path's end: every decision explain and simulate make
// on a routed choice is made here.
func (sim *Simulator) decideChoice(i int, r *Request, rt *routing, ch *choice, end *PathEnd, traced bool, pre []Step) Decision {
	var d Decision
	d, rt.buf = sim.decideOn(i, rt.gw, ch, &rt.c, r.ExtAuth, traced, pre, rt.buf)
	end.finish(&d, traced, certOf(r.From))
	return d
}

// tracedPre is the trace steps that precede a traced decision of choice ch: the
// choice's own (a fresh copy), then, on a plain-HTTP listener, the step that says the
// caller's identity is lost (on the reference data plane, whose policies read it).
func (sim *Simulator) tracedPre(r *Request, rt *routing, ch *choice) []Step {
	pre := append([]Step(nil), ch.pre...)
	if rt.agentic && ch.info.Protocol == string(gwapiv1.HTTPProtocolType) && r.From.Principal(sim.TrustDomain) != "" {
		pre = append(pre, Step{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Event: EventPlainHTTP,
			Listener: ch.info.Listener, Caller: r.From.String()})
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
	c.initCaller(r, rt.res.URLPath, sim.TrustDomain, ch.info.Protocol == string(gwapiv1.HTTPProtocolType), port)
}

// requestError names request r in err: by its line in a request file, or by its name
// among those of a batch; the one request of the explain command is not named.
func requestError(r *Request, err error, batch bool) error {
	switch {
	case r.Line > 0:
		return fmt.Errorf("request %q (line %d): %w", r.Name, r.Line, err)
	case batch:
		return fmt.Errorf("request %q: %w", r.Name, err)
	}
	return err
}

// Decider decides requests one after another without building results: routing, chain
// lookup and untraced decisions, with scratch space reused from one request to the
// next, so that a request that routes to a backend allocates nothing (CEL conditions
// aside). It is the untraced entry point beside Explain; use one Decider per goroutine.
type Decider struct {
	sim *Simulator
	rt  routing
	out []Decision
}

// Decider returns a Decider deciding with sim.
func (sim *Simulator) Decider() *Decider { return &Decider{sim: sim} }

// Decide normalizes r, routes it, and decides it on each backend it reaches under the
// primary semantics, as Explain would (verdict, explicitness, level, deciding rule and
// branches; no reason or trace). The decisions are in the order of Explain's primary
// results and valid until the next call.
func (b *Decider) Decide(r *Request) ([]Decision, error) {
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
		sim.initChoice(&b.rt.c, r, &b.rt, ch)
		end := sim.pathEnd(r, &b.rt, ch, sim.authPolicyOf(r, &b.rt, ch, false))
		b.out = append(b.out, sim.decideChoice(0, r, &b.rt, ch, &end, false, nil))
	}
	return b.out, nil
}

// RouteRule names the path's route and rule as one answer names it everywhere: "ns/name#rule"
// when the rule has a name, else "ns/name[i]" (the index of spec.rules), else the route alone.
func (p PathInfo) RouteRule() string {
	switch {
	case p.Route == "":
		return ""
	case p.RuleName != "":
		return p.Route + "#" + p.RuleName
	case p.RuleIndex != nil:
		return p.Route + "[" + strconv.Itoa(*p.RuleIndex) + "]"
	}
	return p.Route
}
