package explain

import (
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
)

// PathEnd is what decides a call on one path beside the chain's verdict. Every decision
// explain, simulate and the decision space of can-i, who-can, matrix and diff make on a
// path is finished by its PathEnd (finish), in one order.
type PathEnd struct {
	// refused is set when the data plane answers the request itself (DecidedNoRoute,
	// DecidedNoBackend), problem says why (PathInfo.Problem).
	refused, problem string
	// unread are the kinds a live read could not read that the decision depends on.
	unread []snapshot.Warning
	// authPolicy is what Kuadrant's effective AuthPolicy asks of the request on a
	// routed path of a Gateway another data plane serves: it decides there.
	authPolicy *AuthPolicyInfo
	// authPolicies are the AuthPolicies that decide on a Gateway another data plane
	// serves but that agpol cannot evaluate (the request names the backend, not the
	// route; the decision space's callers present no credentials).
	authPolicies []string
}

// finish turns the chain's verdict d into the decision the caller gets, in this order:
// the data plane's own refusal (no route, no backend), then objects agpol could not
// read (indeterminate), then, on a Gateway another data plane serves, Kuadrant's
// AuthPolicy. traced says whether d is traced: only then are sentences written.
func (e *PathEnd) finish(d *Decision, traced bool) {
	if e.refused != "" {
		refuse(d, e.refused, e.problem, traced)
	}
	if len(e.unread) > 0 {
		*d = UnreadDecision(*d, e.unread)
	}
	if e.authPolicy != nil {
		kuadrantDecides(d, e.authPolicy, traced)
	}
	if len(e.authPolicies) > 0 {
		authPolicyUnevaluated(d, e.authPolicies, traced)
	}
}

// TargetEnd is the PathEnd of a routed path of the decision space: through gw's
// listener on the given routes ("ns/name") to a backend in namespace backendNS, for
// callers whose credentials are not known.
func (sim *Simulator) TargetEnd(gw *snapshot.Gateway, listener string, routes []string, backendNS string) PathEnd {
	e := PathEnd{authPolicies: sim.AuthPoliciesOn(gw, listener, routes)}
	if gw != nil {
		e.unread = Unread(sim.Snapshot, gw.Namespace, backendNS)
	}
	return e
}

// pathEnd is the PathEnd of choice ch of request r, routed in rt; ap is the AuthPolicy
// view of the path when computed (on another data plane, or when asked for).
func (sim *Simulator) pathEnd(r *Request, rt *routing, ch *choice, ap *AuthPolicyInfo) PathEnd {
	e := PathEnd{refused: ch.refused, problem: ch.info.Problem, unread: sim.unread(rt.gw, ch)}
	if rt.agentic {
		return e
	}
	e.authPolicy = ap
	if ap == nil && ch.info.Route == "" && ch.info.Backend != "" {
		// The request names the backend, not the route: the AuthPolicies of the routes
		// to it decide, with credentials agpol does not know.
		e.authPolicies = sim.authPoliciesToward(rt.gw, ch.info.Listener, ch.info.Backend)
	}
	return e
}

// authPolicyOf is the AuthPolicy view of choice ch when the decision needs it (on a
// Gateway another data plane serves) or the caller asks for it (want).
func (sim *Simulator) authPolicyOf(r *Request, rt *routing, ch *choice, want bool) *AuthPolicyInfo {
	if rt.agentic && !want {
		return nil
	}
	return sim.authPolicyFor(r, ch.info)
}

// refuse turns the decision on a path that reaches no backend (refused: DecidedNoRoute,
// DecidedNoBackend, problem saying why) into the deny the caller gets: a gateway-level
// deny stands (403 before routing); an allow or an answer that waits on the authorizer
// becomes a deny by the data plane's own answer, since neither authorizer answer lets
// the call reach a tool.
func refuse(d *Decision, refused, problem string, traced bool) {
	if d.Verdict == Deny {
		return
	}
	was, wasBy := d.Verdict, d.DecidedBy
	d.Verdict, d.Explicit, d.Level, d.DecidedBy, d.Branches = Deny, false, string(effective.LevelGateway), refused, nil
	if !traced {
		return // no text
	}
	d.Cause = nil // the reason below replaces it
	switch refused {
	case DecidedNoRoute:
		d.Reason = "no route takes the request: the data plane answers 404"
	default:
		d.Reason = "the request reaches no backend: " + problem
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
