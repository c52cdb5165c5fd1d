package explain

import (
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// AuthPolicyInfo is what Kuadrant's effective AuthPolicy on the request's path asks of the
// request. On the reference data plane it is reported beside the decision, which is the
// access policies' (XAccessPolicy). On a Gateway another data plane serves it is the
// decision (kuadrantDecides); whether the request's credentials satisfy it cannot be
// known offline.
type AuthPolicyInfo struct {
	// Path is the Kuadrant path (gateway|listener|route|rule).
	Path string `json:"path"`
	// Policies are the AuthPolicies folded into the effective policy, least specific first.
	Policies []string `json:"policies"`
	// Evaluation is the request-time view: conditions and what must be presented.
	Evaluation *authpolicy.Evaluation `json:"evaluation"`
	// Decides is true on a Gateway that another data plane serves (Istio, Envoy
	// Gateway): no XAccessPolicy runs there, and the AuthPolicy is the decision.
	Decides bool `json:"decides,omitempty"`
	// Unprogrammed says why Kuadrant never programs the path's Gateway (it programs
	// Istio and Envoy Gateway only): the policy is computed, and no data plane runs it;
	// render writes NotProgrammed, its text in -o json (render.Sentences).
	Unprogrammed  *authpolicy.Reason `json:"-"`
	NotProgrammed string             `json:"notProgrammed,omitempty"`
	// V1beta2 is set when a kuadrant.io/v1beta2 AuthPolicy applies (kuadrant-operator
	// v0.6.1 semantics: one policy per route, else the Gateway's; Authorino picks the
	// AuthConfig by host).
	V1beta2 *authpolicy.V1beta2Decision `json:"v1beta2,omitempty"`
	// Tied are the paths whose wasm action set ties with this path's for the request:
	// the wasm-shim may run their AuthConfig instead (authpolicytied.go).
	Tied []AuthPolicyTie `json:"tied,omitempty"`
}

// kuadrant keeps the effective AuthPolicy of each path looked up in the model's result
// (model.Model.AuthPolicy, computed once): many requests take the same path.
type kuadrant struct {
	paths sync.Map // kuadrantPath → *authpolicy.PathResult (nil when the path has no effective policy)
}

type kuadrantPath struct{ gateway, listener, route, rule string }

// forPrefix is res.ForPrefix, kept per path; nil when no AuthPolicy applies there.
func (k *kuadrant) forPrefix(res *authpolicy.Result, gateway, listener, route, rule string) *authpolicy.PathResult {
	key := kuadrantPath{gateway, listener, route, rule}
	if v, ok := k.paths.Load(key); ok {
		return v.(*authpolicy.PathResult)
	}
	pr, err := res.ForPrefix(gateway, listener, route, rule)
	if err != nil || pr == nil || pr.Effective == nil || len(pr.Effective.Policies) == 0 {
		pr = nil
	}
	v, _ := k.paths.LoadOrStore(key, pr)
	return v.(*authpolicy.PathResult)
}

// authPolicyFor returns the AuthPolicy view of a request on a routed path, or nil when no
// AuthPolicy applies there.
func (sim *Simulator) authPolicyFor(r *Request, p PathInfo) *AuthPolicyInfo {
	if len(sim.Snapshot.AuthPolicies) == 0 || p.Route == "" || p.RuleIndex == nil {
		return nil
	}
	req := authRequest(r) // the request as Kuadrant sees it, made once before effective/authpolicy is asked
	res := sim.Model.AuthPolicy()
	rule := authpolicy.RuleName(*p.RuleIndex, p.RuleName)
	pr := sim.kuadrant.forPrefix(res, p.Gateway, p.Listener, p.Route, rule)
	if pr == nil {
		return sim.v1beta2For(req, p)
	}
	info := &AuthPolicyInfo{Path: pr.Path.StringWithRule(p.RouteRule()), Unprogrammed: pr.Unprogrammed}
	for _, pol := range pr.Effective.Policies {
		info.Policies = append(info.Policies, pol.Ref)
	}
	info.Evaluation = authpolicy.Decide(pr.Effective, req, res.Env)
	info.Tied = tiedAuthPolicies(res, pr, req)
	if v := sim.v1beta2For(req, p); v != nil && v.V1beta2 != nil {
		// Mixed input: the v1beta2 policy is left out (Ignored; render says so), rather
		// than dropped.
		d := *v.V1beta2
		d.Ignored, d.Evaluation, d.NotFound = true, nil, false
		info.V1beta2 = &d
	}
	return info
}

// v1beta2For is authPolicyFor for kuadrant.io/v1beta2 AuthPolicies, used where no v1
// AuthPolicy applies; req is the request as Kuadrant sees it.
func (sim *Simulator) v1beta2For(req authpolicy.Request, p PathInfo) *AuthPolicyInfo {
	hasV1beta2 := false
	for _, ap := range sim.Snapshot.AuthPolicies {
		if ap.IsV1beta2() {
			hasV1beta2 = true
			break
		}
	}
	if !hasV1beta2 {
		return nil
	}
	d := sim.Model.V1beta2().ForRequest(p.Gateway, p.Route, req)
	if d == nil {
		return nil
	}
	info := &AuthPolicyInfo{Path: p.Gateway + "|" + p.Route, V1beta2: d, Evaluation: d.Evaluation, Unprogrammed: d.Unprogrammed}
	switch {
	case d.AuthConfig != "":
		info.Policies = []string{d.AuthConfig}
	default:
		info.Policies = []string{d.CheckedBy}
	}
	return info
}

// kuadrantDecides makes Kuadrant's AuthPolicy the decision on a Gateway that another data
// plane serves (Istio, Envoy Gateway), where no XAccessPolicy runs: an authorization rule
// that runs and fails denies (403); a rule whose outcome needs the request's credentials
// or an external service leaves the verdict indeterminate; a policy that is skipped, or
// no policy, leaves the allow. d is the allow of DecidedOtherDataPlane; other decisions
// are left as they are.
func kuadrantDecides(d *Decision, ap *AuthPolicyInfo, traced bool) {
	if tiedDecides(d, ap, traced) {
		return
	}
	if d.DecidedBy != DecidedOtherDataPlane || ap == nil || ap.Unprogrammed != nil {
		return
	}
	if ap.V1beta2 != nil && ap.V1beta2.NotFound {
		ap.Decides = true
		d.Verdict, d.Explicit, d.Level, d.DecidedBy = Deny, true, LevelAuthPolicy, ap.V1beta2.CheckedBy
		if traced {
			authPolicyCause(d, "authpolicy", OutcomeMatched, CauseAuthPolicyNotFound, &AuthPolicyCause{Policies: []string{ap.V1beta2.CheckedBy}, V1beta2: ap.V1beta2})
		}
		return
	}
	if ap.Evaluation == nil || ap.Evaluation.Applies == authpolicy.False {
		return
	}
	ap.Decides = true
	ev := ap.Evaluation
	if o := ev.Outcome; o != nil && ev.Applies == authpolicy.True {
		authorinoDecides(d, ap, o, traced)
		return
	}
	var unknown []AuthPolicyUnknown
	if ev.Applies == authpolicy.Unknown {
		unknown = append(unknown, AuthPolicyUnknown{What: UnknownWhen})
	}
	if ev.Applies == authpolicy.True && len(ev.Authentication) > 0 && allSkipped(ev.Authentication) {
		// Authorino's identity phase fails when no identity rule succeeds, also when
		// every one is skipped by its when (docs/kuadrant-differential.md).
		d.Verdict, d.Explicit, d.Level, d.DecidedBy = Deny, true, LevelAuthPolicy, strings.Join(ap.Policies, ",")
		if traced {
			authPolicyCause(d, "authentication", OutcomeMatched, CauseAuthPolicyNoIdentity, &AuthPolicyCause{Policies: ap.Policies})
		}
		return
	}
	for _, r := range ev.Authorization {
		if r.Runs == authpolicy.False {
			continue
		}
		if r.Runs == authpolicy.True && r.Passes == authpolicy.False && ev.Applies == authpolicy.True {
			d.Verdict, d.Explicit, d.Level, d.DecidedBy = Deny, true, LevelAuthPolicy, r.Source
			if traced {
				authPolicyCause(d, "authorization", OutcomeMatched, CauseAuthPolicyAuthzFails, &AuthPolicyCause{Policies: ap.Policies, Rule: r.Name, Source: r.Source})
			}
			return
		}
		if r.Passes != authpolicy.True {
			unknown = append(unknown, AuthPolicyUnknown{What: UnknownAuthorization, Rules: []string{r.Name}, Need: r.Need, Why: r.Why})
		}
	}
	var auth []string
	for _, r := range ev.Authentication {
		if r.Runs != authpolicy.False {
			auth = append(auth, r.Name)
		}
	}
	if len(auth) > 0 {
		unknown = append([]AuthPolicyUnknown{{What: UnknownAuthentication, Rules: auth}}, unknown...)
	}
	if len(unknown) == 0 {
		return
	}
	d.Verdict, d.Explicit, d.Level, d.DecidedBy = Indeterminate, false, LevelAuthPolicy, strings.Join(ap.Policies, ",")
	if traced {
		authPolicyCause(d, "authpolicy", OutcomeInfo, CauseAuthPolicyUnknown, &AuthPolicyCause{Policies: ap.Policies, Unknown: unknown})
	}
}

// allSkipped reports whether every rule is skipped for the request (its when is false).
func allSkipped(rules []authpolicy.Requirement) bool {
	for _, r := range rules {
		if r.Runs != authpolicy.False {
			return false
		}
	}
	return true
}

// AuthPoliciesOn lists the Kuadrant AuthPolicies that decide calls through gw's listener
// on the given routes ("ns/name"): those effective on any of their rules, when another
// data plane serves gw (no XAccessPolicy runs there) and Kuadrant programs it. kuadrant.io/v1beta2
// policies count where no kuadrant.io/v1 one applies, as in authPolicyFor. Nil otherwise.
func (sim *Simulator) AuthPoliciesOn(gw *snapshot.Gateway, listener string, routes []string) []string {
	if len(sim.Snapshot.AuthPolicies) == 0 || gw == nil || sim.Graph.DataPlane(gw).Agentic() {
		return nil
	}
	res := sim.Model.AuthPolicy()
	gref := gw.Namespace + "/" + gw.Name
	seen := map[string]bool{}
	for _, route := range routes {
		rn := res.Topology.Route(route)
		if rn == nil {
			continue
		}
		found := false
		for _, rule := range rn.Rules {
			if pr := sim.kuadrant.forPrefix(res, gref, listener, route, rule); pr != nil && pr.Unprogrammed == nil {
				for _, p := range pr.Effective.Policies {
					seen[p.Ref], found = true, true
				}
			}
		}
		if !found && sim.hasV1beta2() {
			if d := sim.Model.V1beta2().ForRequest(gref, route, authpolicy.Request{}); d != nil && d.Unprogrammed == nil && d.Evaluation != nil {
				seen[d.CheckedBy] = true
			}
		}
	}
	if len(seen) == 0 {
		return nil
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// authPoliciesToward is AuthPoliciesOn for the routes through gw (on listener, when
// given) whose rules send traffic to backend ("Kind ns/name", PathInfo.Backend): a
// request that names the backend, not the route.
func (sim *Simulator) authPoliciesToward(gw *snapshot.Gateway, listener, backend string) []string {
	if len(sim.Snapshot.AuthPolicies) == 0 {
		return nil
	}
	var routes []string
	for _, p := range sim.Graph.Paths(topology.GatewayRef(gw.Namespace, gw.Name)) {
		if (listener != "" && p.Listener != listener) || p.Backend.Kind+" "+p.Backend.Ref.Namespace+"/"+p.Backend.Ref.Name != backend {
			continue
		}
		if r := p.Route.Namespace + "/" + p.Route.Name; !slices.Contains(routes, r) {
			routes = append(routes, r)
		}
	}
	return sim.AuthPoliciesOn(gw, listener, routes)
}

func (sim *Simulator) hasV1beta2() bool {
	for _, ap := range sim.Snapshot.AuthPolicies {
		if ap.IsV1beta2() {
			return true
		}
	}
	return false
}

// authPolicyUnevaluated finishes the decision of a call through a Gateway of another
// data plane where Kuadrant AuthPolicies apply that agpol does not evaluate (the request
// names the backend, not the route; the decision space's callers present no
// credentials): no XAccessPolicy runs there, so the AuthPolicies decide, and the verdict
// is indeterminate, naming them. Decisions other than the other-data-plane allow are
// left as they are.
func authPolicyUnevaluated(d *Decision, policies []string, traced bool) {
	if d.DecidedBy != DecidedOtherDataPlane || len(policies) == 0 {
		return
	}
	d.Verdict, d.Explicit, d.Level, d.DecidedBy = Indeterminate, false, LevelAuthPolicy, strings.Join(policies, ",")
	d.Branches = nil
	if traced {
		authPolicyCause(d, "authpolicy", OutcomeInfo, CauseAuthPolicyUnevaluated, &AuthPolicyCause{Policies: policies})
	}
}

// LevelAuthPolicy is the level of a decision that Kuadrant's AuthPolicy makes.
const LevelAuthPolicy = "authpolicy"

// authorinoDecides makes Authorino's answer to a request that carries an identity the
// decision (authpolicy.Outcome): allow, deny with 401/403 (or the policy's override), or
// indeterminate, with the reason and what surprises.
func authorinoDecides(d *Decision, ap *AuthPolicyInfo, o *authpolicy.Outcome, traced bool) {
	policies := strings.Join(ap.Policies, ",")
	switch o.Verdict {
	case authpolicy.OutcomeAllow:
		d.Level = LevelAuthPolicy
		d.DecidedBy = policies
	case authpolicy.OutcomeDeny:
		d.Verdict, d.Explicit, d.Level, d.DecidedBy = Deny, true, LevelAuthPolicy, policies
		if o.Source != "" {
			d.DecidedBy = o.Source
		}
	default:
		d.Verdict, d.Explicit, d.Level, d.DecidedBy = Indeterminate, false, LevelAuthPolicy, policies
	}
	if !traced {
		return
	}
	outcome := OutcomeInfo
	if o.Verdict == authpolicy.OutcomeDeny {
		outcome = OutcomeMatched
	}
	authPolicyCause(d, "authpolicy", outcome, CauseAuthorino, &AuthPolicyCause{Policies: ap.Policies, Outcome: o})
}

// authPolicyCause gives d, which Kuadrant's AuthPolicy decided, its cause and the trace
// step saying the same (event and data; render writes the sentence of both).
func authPolicyCause(d *Decision, phase, outcome, event string, a *AuthPolicyCause) {
	d.Reason, d.Cause = "", &Cause{Event: event, AuthPolicy: a}
	d.Trace = append(d.Trace, Step{Level: LevelAuthPolicy, Phase: phase, Outcome: outcome, Event: event, AuthPolicy: a})
}

// AuthPolicyCause is what Kuadrant's AuthPolicy decided, as data (Cause.AuthPolicy and
// Step.AuthPolicy of the CauseAuthPolicy* and CauseAuthorino events).
type AuthPolicyCause struct {
	// Policies are the AuthPolicies that decide.
	Policies []string `json:"policies"`
	// Rule and Source: the authorization rule that fails and its policy
	// (CauseAuthPolicyAuthzFails).
	Rule   string `json:"rule,omitempty"`
	Source string `json:"source,omitempty"`
	// Unknown is what cannot be known offline (CauseAuthPolicyUnknown).
	Unknown []AuthPolicyUnknown `json:"unknown,omitempty"`
	// V1beta2 is the kuadrant.io/v1beta2 policy's decision (CauseAuthPolicyNotFound);
	// render writes Found, how the policy was found, from it (render.Sentences).
	V1beta2 *authpolicy.V1beta2Decision `json:"-"`
	Found   string                      `json:"found,omitempty"`
	// Outcome is Authorino's answer to a request that carries an identity
	// (CauseAuthorino); -o json shows it under authPolicy.evaluation.outcome.
	Outcome *authpolicy.Outcome `json:"-"`
	// Tied is what each path whose action set ties with the request's answers, its
	// own first (CauseAuthPolicyTied, EventAuthPolicyTiedSame).
	Tied []AuthPolicyAnswer `json:"tied,omitempty"`
}

// AuthPolicyUnknown is one thing a Kuadrant AuthPolicy's verdict depends on that cannot
// be known offline.
type AuthPolicyUnknown struct {
	// What is an Unknown* constant.
	What string `json:"what"`
	// Rules are the authentication rules that run (UnknownAuthentication, any of
	// them), or the authorization rule (UnknownAuthorization).
	Rules []string `json:"rules,omitempty"`
	// Need is what the authorization rule asks of the request (UnknownAuthorization).
	Need authpolicy.Need `json:"-"`
	// Present is Need's sentence, or where Authorino decided the rule Why's: empty
	// here, written by render.
	Present string `json:"present,omitempty"`
	// Why is the rule's result where Authorino decided it (authpolicy.Requirement.Why).
	Why *authpolicy.Why `json:"-"`
}

// What a Kuadrant AuthPolicy's verdict depends on (AuthPolicyUnknown.What).
const (
	UnknownWhen           = "when"           // whether the policy's when conditions hold
	UnknownAuthentication = "authentication" // the request's credentials
	UnknownAuthorization  = "authorization"  // an authorization rule's outcome
)
