package explain

import (
	"slices"
	"strconv"
	"strings"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// kuadrant-operator writes a Gateway's wasm action sets in an order that does not fix
// which of two tied action sets comes first (one route on two listeners, two rules of a
// route with equally specific matches), and the wasm-shim runs the first that matches:
// the AuthConfig of another path than the one Envoy routes the request to may decide
// (docs/semantics.md#kuadrant-tied). explain decides under each; the same verdict
// stands with a note, different verdicts make the request indeterminate.

// AuthPolicyTie is the effective AuthPolicy of a path whose action set ties with the
// request's path's, which the wasm-shim may run instead (AuthPolicyInfo.Tied).
type AuthPolicyTie struct {
	// Path is the Kuadrant path, named as AuthPolicyInfo.Path.
	Path string `json:"path"`
	// Policies are the AuthPolicies folded into its effective policy.
	Policies []string `json:"policies"`
	// Evaluation is the request under its effective policy.
	Evaluation *authpolicy.Evaluation `json:"evaluation"`
}

// AuthPolicyAnswer is what the data plane answers when the wasm-shim runs one tied
// path's AuthConfig (AuthPolicyCause.Tied): the request's own path first.
type AuthPolicyAnswer struct {
	Path     string   `json:"path"`
	Policies []string `json:"policies"`
	// Verdict is Allow, Deny or Indeterminate; Code the HTTP status of a deny, when known.
	Verdict string `json:"verdict"`
	Code    int    `json:"code,omitempty"`
}

// Events of a request whose path's action set ties with other paths'.
const (
	// CauseAuthPolicyTied: the tied paths' AuthPolicies answer differently, and which
	// one runs is not fixed: indeterminate (Policies, Tied).
	CauseAuthPolicyTied = "authpolicy-tied"
	// EventAuthPolicyTiedSame: which one runs is not fixed, and every one answers the
	// same (a step; Policies, Tied).
	EventAuthPolicyTiedSame = "authpolicy-tied-same"
)

// tiedAuthPolicies is the effective AuthPolicy of each path whose action set ties with
// pr's for req (authpolicy.Result.TiedPaths), evaluated on req.
func tiedAuthPolicies(res *authpolicy.Result, pr *authpolicy.PathResult, req authpolicy.Request) []AuthPolicyTie {
	var out []AuthPolicyTie
	for _, q := range res.TiedPaths(pr, req) {
		t := AuthPolicyTie{Path: q.Path.StringWithRule(routeRuleOf(res, q.Path)), Evaluation: authpolicy.Decide(q.Effective, req, res.Env)}
		for _, pol := range q.Effective.Policies {
			t.Policies = append(t.Policies, pol.Ref)
		}
		out = append(out, t)
	}
	return out
}

// routeRuleOf names a path's route rule as PathInfo.RouteRule does: "ns/r#name", or
// "ns/r[i]" for an unnamed rule (Kuadrant's rule-(i+1)).
func routeRuleOf(res *authpolicy.Result, p authpolicy.Path) string {
	if rn := res.Topology.Route(p.Route); rn != nil {
		for i, x := range rn.Object.Spec.Rules {
			if x.Name == nil && authpolicy.RuleName(i, "") == p.Rule {
				return p.Route + "[" + strconv.Itoa(i) + "]"
			}
		}
	}
	return p.Route + "#" + p.Rule
}

// tiedDecides decides d, the allow of DecidedOtherDataPlane, when the request's path
// has tied paths (ap.Tied): under each path's AuthPolicy as kuadrantDecides does; when
// every one gives the same verdict, the request's own path's decision stands with a step
// saying so, else the verdict is indeterminate, naming what each answers. It reports
// whether it decided.
func tiedDecides(d *Decision, ap *AuthPolicyInfo, traced bool) bool {
	if ap == nil || len(ap.Tied) == 0 || d.DecidedBy != DecidedOtherDataPlane || ap.Unprogrammed != nil {
		return false
	}
	own := *ap
	own.Tied = nil
	answers := []AuthPolicyAnswer{answerUnder(*d, &own)}
	for _, t := range ap.Tied {
		answers = append(answers, answerUnder(*d, &AuthPolicyInfo{Path: t.Path, Policies: t.Policies, Evaluation: t.Evaluation}))
	}
	kuadrantDecides(d, &own, traced)
	ap.Decides = own.Decides
	var policies []string
	same := true
	for _, a := range answers {
		same = same && a.Verdict == answers[0].Verdict
		for _, p := range a.Policies {
			if !slices.Contains(policies, p) {
				policies = append(policies, p)
			}
		}
	}
	if same {
		if traced {
			d.Trace = append(d.Trace, Step{Level: LevelAuthPolicy, Phase: "authpolicy", Outcome: OutcomeInfo, Event: EventAuthPolicyTiedSame,
				AuthPolicy: &AuthPolicyCause{Policies: own.Policies, Tied: answers}})
		}
		return true
	}
	ap.Decides = true
	d.Verdict, d.Explicit, d.Level, d.DecidedBy, d.Branches = Indeterminate, false, LevelAuthPolicy, strings.Join(policies, ","), nil
	if traced {
		authPolicyCause(d, "authpolicy", OutcomeInfo, CauseAuthPolicyTied, &AuthPolicyCause{Policies: policies, Tied: answers})
	}
	return true
}

// answerUnder is what kuadrantDecides makes of d under one path's AuthPolicy.
func answerUnder(d Decision, ap *AuthPolicyInfo) AuthPolicyAnswer {
	d.Trace = nil
	kuadrantDecides(&d, ap, true)
	a := AuthPolicyAnswer{Path: ap.Path, Policies: ap.Policies, Verdict: d.Verdict}
	if d.Verdict == Deny && d.Cause != nil {
		switch d.Cause.Event {
		case CauseAuthPolicyNoIdentity:
			a.Code = 401
		case CauseAuthPolicyAuthzFails:
			a.Code = 403
		case CauseAuthorino:
			if o := d.Cause.AuthPolicy.Outcome; o != nil {
				a.Code = o.Code
			}
		}
	}
	return a
}
