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
}

type choice struct {
	info    PathInfo
	backend *topology.Ref // XBackend whose policies apply
	pre     []Step
}

// Explain decides one request. It returns one result per (backend, semantics): a
// weighted route rule yields one result per backend, each semantics one result per
// backend, primary semantics first. A request that names missing objects is an error
// wrapping ErrInput.
func (sim *Simulator) Explain(r *Request) ([]*Result, error) {
	r.Normalize()
	choices, err := sim.resolve(r)
	if err != nil {
		return nil, err
	}
	var out []*Result
	for _, ch := range choices {
		principal := r.From.Principal(sim.TrustDomain)
		pre := append([]Step(nil), ch.pre...)
		if principal != "" && ch.info.Protocol == string(gwapiv1.HTTPProtocolType) {
			pre = append(pre, Step{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo,
				Reason: fmt.Sprintf("listener %s is plain HTTP: no client certificate, the caller %s is seen as anonymous", ch.info.Listener, r.From.String())})
			principal = ""
		}
		port := r.HTTP.Port
		if port == 0 {
			port = sim.listenerPort(r, ch.info)
		}
		c := newCtx(r, principal, port)
		gw := effective.GatewayRef(r.Gateway.Namespace, r.Gateway.Name)
		var group []*Result
		for i, e := range sim.Engines {
			chain := e.Chain(gw, ch.info.Listener, ch.backend)
			d := decide(chain, c, r.ExtAuth, true, pre)
			group = append(group, &Result{Name: r.Name, Decision: d, Request: r, Path: ch.info, Primary: i == 0})
		}
		for _, g := range group[1:] {
			if g.Verdict != group[0].Verdict || g.Level != group[0].Level || g.DecidedBy != group[0].DecidedBy {
				for _, x := range group {
					x.Disagreement = true
				}
				break
			}
		}
		group[0].Expect = check(r, &group[0].Decision)
		if ap := sim.authPolicyFor(r, ch.info); ap != nil {
			for _, g := range group {
				g.AuthPolicy = ap
			}
		}
		out = append(out, group...)
	}
	return out, nil
}

// Simulate decides a batch, reusing compiled chains. It stops at the first request that
// names missing objects.
func (sim *Simulator) Simulate(reqs []*Request) ([]*Result, error) {
	var out []*Result
	for _, r := range reqs {
		res, err := sim.Explain(r)
		if err != nil {
			if r.Line > 0 {
				return nil, fmt.Errorf("request %q (line %d): %w", r.Name, r.Line, err)
			}
			return nil, fmt.Errorf("request %q: %w", r.Name, err)
		}
		out = append(out, res...)
	}
	return out, nil
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

func (sim *Simulator) listenerPort(r *Request, info PathInfo) int {
	if info.Listener == "" || r.Gateway == nil {
		return 0
	}
	if gw := sim.gateway(*r.Gateway); gw != nil {
		for _, l := range gw.Spec.Listeners {
			if string(l.Name) == info.Listener {
				return int(l.Port)
			}
		}
	}
	return 0
}

// resolve finds the path(s) of a request: explicit names skip routing.
func (sim *Simulator) resolve(r *Request) ([]choice, error) {
	if r.Backend != nil && r.Service != nil {
		return nil, fmt.Errorf("%w: give either a backend (XBackend) or a service, not both", ErrInput)
	}
	if r.Gateway == nil {
		gws, err := sim.inferGateway(r)
		if err != nil {
			return nil, err
		}
		r.Gateway = gws
	}
	gw := sim.gateway(*r.Gateway)
	if gw == nil {
		return nil, fmt.Errorf("%w: gateway %s not found", ErrInput, r.Gateway)
	}
	base := PathInfo{Gateway: r.Gateway.String()}
	if r.Listener != "" {
		if listenerProtocol(gw, r.Listener) == "" {
			return nil, fmt.Errorf("%w: gateway %s has no listener %q", ErrInput, r.Gateway, r.Listener)
		}
	}
	rr := topology.RouteRequest{Gateway: topology.GatewayRef(r.Gateway.Namespace, r.Gateway.Name), Listener: r.Listener,
		Port: r.HTTP.Port, Host: r.HTTP.Host, Path: r.HTTP.Path, Method: r.HTTP.Method, Headers: r.HTTP.Headers}
	var routed *topology.RouteResult
	if res, err := sim.Graph.Route(rr); err == nil {
		routed = res
	}
	base.Listener = r.Listener
	if base.Listener == "" && routed != nil {
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
	} else {
		base.Protocol = listenerProtocol(gw, base.Listener)
	}
	if r.Route != nil {
		if sim.Graph.HTTPRoute(topology.HTTPRouteRef(r.Route.Namespace, r.Route.Name)) == nil {
			return nil, fmt.Errorf("%w: httproute %s not found", ErrInput, r.Route)
		}
		base.Route = r.Route.String()
	}
	switch {
	case r.Backend != nil:
		ref := topology.XBackendRef(r.Backend.Namespace, r.Backend.Name)
		if sim.Graph.XBackend(ref) == nil {
			return nil, fmt.Errorf("%w: xbackend %s not found", ErrInput, r.Backend)
		}
		info := base
		info.Backend, info.BackendKind = "XBackend "+r.Backend.String(), "XBackend"
		return []choice{{info: info, backend: &ref}}, nil
	case r.Service != nil:
		info := base
		info.Backend, info.BackendKind = "Service "+r.Service.String(), "Service"
		return []choice{{info: info, pre: []Step{{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo,
			Reason: "backend is a core Service: no backend-level policies"}}}}, nil
	}
	base.Resolved = true
	if routed == nil || routed.Route == nil || (r.Route != nil && (routed.Route.Namespace != r.Route.Namespace || routed.Route.Name != r.Route.Name)) {
		if r.Route != nil {
			if ch, ok := sim.onlyRule(r, base); ok {
				return ch, nil
			}
		}
		info := base
		info.Problem = "no route"
		reason := "no route matches the request: the data plane answers 404; only gateway-level policies run"
		if routed != nil && routed.Reason != "" {
			reason = "no route: " + routed.Reason + "; only gateway-level policies run (RBAC runs before routing)"
		}
		if r.Route != nil && routed != nil && routed.Route != nil {
			reason = fmt.Sprintf("the request routes to %s/%s, not to %s; give --backend or --service", routed.Route.Namespace, routed.Route.Name, r.Route)
			return nil, fmt.Errorf("%w: %s", ErrInput, reason)
		}
		info.Route = ""
		return []choice{{info: info, pre: []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo, Reason: reason}}}}, nil
	}
	base.Route = routed.Route.Namespace + "/" + routed.Route.Name
	idx := routed.RuleIndex
	base.RuleIndex, base.RuleName = &idx, routed.RuleName
	if routed.RouteListener != "" && base.Listener == "" {
		base.Listener = routed.RouteListener
	}
	return sim.backendChoices(base, routed.Backends, routed.RuleProblem, routed.Redirect), nil
}

func (sim *Simulator) backendChoices(base PathInfo, backends []topology.BackendTarget, ruleProblem string, redirect bool) []choice {
	gwOnly := func(problem string) []choice {
		info := base
		info.Problem = problem
		return []choice{{info: info, pre: []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo,
			Reason: problem + "; only gateway-level policies run"}}}}
	}
	switch {
	case redirect:
		return gwOnly("the rule answers with a redirect (no backend)")
	case ruleProblem != "":
		return gwOnly("the data plane answers 500: " + ruleProblem)
	case len(backends) == 0:
		return gwOnly("the rule has no backend")
	}
	var out []choice
	for _, b := range backends {
		info := base
		w := b.Weight
		if len(backends) > 1 {
			info.Weight = &w
		}
		info.BackendKind = b.Kind
		info.Backend = b.Kind + " " + b.Ref.Namespace + "/" + b.Ref.Name
		switch {
		case b.Problem != "":
			info.Problem = b.Problem
			out = append(out, choice{info: info, pre: []Step{{Level: string(effective.LevelGateway), Phase: "route", Outcome: OutcomeInfo,
				Reason: "the data plane answers 500: " + b.Problem + "; only gateway-level policies run"}}})
		case b.Kind == topology.BackendXBackend:
			ref := topology.XBackendRef(b.Ref.Namespace, b.Ref.Name)
			out = append(out, choice{info: info, backend: &ref, pre: assumedStep(b)})
		default:
			out = append(out, choice{info: info, pre: append(assumedStep(b), Step{Level: string(effective.LevelBackend), Phase: "route", Outcome: OutcomeInfo,
				Reason: "backend is a core Service: no backend-level policies"})})
		}
	}
	return out
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
func (sim *Simulator) onlyRule(r *Request, base PathInfo) ([]choice, bool) {
	var match []topology.Path
	for _, p := range sim.Graph.Paths(topology.GatewayRef(r.Gateway.Namespace, r.Gateway.Name)) {
		if p.Route != nil && p.Route.Namespace == r.Route.Namespace && p.Route.Name == r.Route.Name {
			match = append(match, p)
		}
	}
	if len(match) == 0 {
		return nil, false
	}
	idx := match[0].RuleIndex
	var backends []topology.BackendTarget
	for _, p := range match {
		if p.RuleIndex != idx {
			return nil, false
		}
		if p.Backend.Kind != topology.BackendNone {
			backends = append(backends, p.Backend)
		}
	}
	base.Route, base.RuleIndex, base.RuleName = r.Route.String(), &idx, match[0].RuleName
	base.Resolved = false
	if base.Listener == "" {
		base.Listener = match[0].Listener
		base.Protocol = listenerProtocol(match[0].Gateway, base.Listener)
	}
	return sim.backendChoices(base, backends, match[0].RuleProblem, false), true
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
