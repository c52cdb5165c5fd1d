package render

import (
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// TestAuthorinoTextEveryCode: every code of Authorino's evaluation reasons has a
// sentence (a code render does not know is shown as "(code)").
func TestAuthorinoTextEveryCode(t *testing.T) {
	seen := map[string]bool{}
	for _, code := range authpolicy.WhyCodes {
		if seen[code] {
			t.Errorf("code %q listed twice", code)
		}
		seen[code] = true
		if got := AuthorinoText(authpolicy.Why{Code: code, Err: "e", Checks: []authpolicy.Check{{Expression: "x", Result: authpolicy.True}}}); got == "" || got == "("+code+")" {
			t.Errorf("code %q has no sentence: %q", code, got)
		}
	}
	if got := AuthorinoText(authpolicy.Why{Code: "new-code"}); got != "(new-code)" {
		t.Errorf("unknown code: %q", got)
	}
}

// TestAuthorinoText writes nested reasons: the rules' results in an answer, the status
// override, a race's alternatives, a SubjectAccessReview, notes.
func TestAuthorinoText(t *testing.T) {
	jwt := authpolicy.Why{Code: authpolicy.WhyAuthnJWT, Issuer: "https://idp"}
	for _, tc := range []struct {
		name string
		why  authpolicy.Why
		want string
	}{
		{"unauthenticated with override", authpolicy.Why{Code: authpolicy.WhyUnauthenticated,
			Parts: []authpolicy.RuleWhy{
				{Rule: "a", Why: authpolicy.Why{Code: authpolicy.WhyAuthnSkipped}},
				{Rule: "b", Why: authpolicy.Why{Code: authpolicy.WhyAuthnExpired, Time: time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)}}},
			Override: &authpolicy.StatusOverride{Response: "unauthenticated", Source: "app/p", Code: 404}},
			"no authentication rule verifies the identity (a: skipped (its when conditions do not hold); b: the token expired at 2026-05-01T09:00:00Z, before the request's time (go-oidc oidc/verify.go:292)): Authorino answers UNAUTHENTICATED (auth_pipeline.go:475-479); response.unauthenticated of app/p sets the status to 404"},
		{"allowed", authpolicy.Why{Code: authpolicy.WhyAllowed, Identity: "kc", Authn: &jwt,
			Parts: []authpolicy.RuleWhy{{Rule: "r", Why: authpolicy.Why{Code: authpolicy.WhyRuleGiven, Decision: "allow"}}}},
			"authenticated by kc (a JWT verified as if signed by a key of https://idp's JWKS; auth.identity is its claims (pkg/evaluators/identity/jwt.go:41-65)); every authorization rule that runs passes (r: the request's decisions give allow)"},
		{"race", authpolicy.Why{Code: authpolicy.WhyAuthnRace, Rules: []string{"a", "b"}, Priority: 1, Alternatives: []*authpolicy.Outcome{
			{Verdict: authpolicy.OutcomeAllow, Code: 200, Identity: "a", Why: authpolicy.Why{Code: authpolicy.WhyAllowed, Identity: "a", Authn: &authpolicy.Why{Code: authpolicy.WhyAuthnAnonymous}}},
			{Verdict: authpolicy.OutcomeIndeterminate, Identity: "b", Why: authpolicy.Why{Code: authpolicy.WhyExtensionFails, Err: "boom"}}}},
			"a race: rules a, b all verify the identity at priority 1, Authorino takes whichever finishes first (auth_pipeline.go:207-262), and the answers differ: with a's identity: allow 200 (authenticated by a (anonymous access (pkg/evaluators/identity/noop.go))); with b's identity: indeterminate (the identity's defaults/overrides cannot be resolved: boom)"},
		{"review of a resource", authpolicy.Why{Code: authpolicy.WhySARDenied, Review: &authpolicy.Review{User: "alice", Verb: "get", Resource: "toys", Group: "x.io", Namespace: "ns", ResourceRequest: true}},
			"no Role or ClusterRole of the input bound to alice (or its groups) allows get toys.x.io in ns (from files, Kubernetes' default roles are read only when given)"},
		{"the privileged group", authpolicy.Why{Code: authpolicy.WhySARAllowed, RBACGroup: "system:masters", Review: &authpolicy.Review{User: "bob", Verb: "delete", Resource: "secrets", Namespace: "ns", ResourceRequest: true}},
			"bob may delete secrets in ns (the group system:masters, which the API server allows everything of the input)"},
		{"a role", authpolicy.Why{Code: authpolicy.WhySARAllowed, RBACRole: "Role ns/reader", Review: &authpolicy.Review{User: "alice", Verb: "get", Resource: "toys", Namespace: "ns", ResourceRequest: true}},
			"alice may get toys in ns (Role ns/reader of the input)"},
		{"OPA's whole input", authpolicy.Why{Code: authpolicy.WhyOPAInputUnknown, Input: "", Attr: authpolicy.AttrWholeInput},
			"the policy reads input., and the whole input is not known"},
		{"unread Secrets", authpolicy.Why{Code: authpolicy.WhyAuthnSecretMissing, Secret: "app/k", Unread: []string{"cannot list secrets: forbidden"}},
			"Secret app/k is not in the input (cannot list secrets: forbidden)"},
		{"assumed form", authpolicy.Why{Code: authpolicy.NoteAssumedForm, Identity: "a1", Forms: []authpolicy.CredentialForm{{Rule: "a1", Prefix: "Bearer"}, {Rule: "a2", Prefix: "APIKEY"}}},
			`the identity names no rule, and rules of its kind read one Authorization header with different prefixes (a1 reads "Authorization: Bearer ..."; a2 reads "Authorization: APIKEY ..."), while a request carries one Authorization header and Authorino reads only each rule's own prefix (pkg/auth/credentials.go:134-145): agpol assumed the credential presented to each rule in its own form; this answer is the one for a1's form; name the rule with identity.rule (--identity-rule) for the answer of one form`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AuthorinoText(tc.why); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestEvaluationView: the view carries the sentences, and the evaluation it copies is
// left as effective made it.
func TestEvaluationView(t *testing.T) {
	rule := authpolicy.Why{Code: authpolicy.WhySpiceDB}
	e := &authpolicy.Evaluation{
		Authorization:  []authpolicy.Requirement{{Name: "zed", Need: authpolicy.Need{Code: authpolicy.NeedSpiceDB}, Why: &rule}},
		Authentication: []authpolicy.Requirement{{Name: "anon", Need: authpolicy.Need{Code: authpolicy.NeedAnonymous}}},
		Outcome: &authpolicy.Outcome{Verdict: authpolicy.OutcomeIndeterminate,
			Why:           authpolicy.Why{Code: authpolicy.WhyAuthzUnknown, Identity: "anon", Authn: &authpolicy.Why{Code: authpolicy.WhyAuthnAnonymous}, Parts: []authpolicy.RuleWhy{{Rule: "zed", Why: rule}}},
			NoteWhys:      []authpolicy.Why{{Code: authpolicy.NoteSameAnswer, Rules: []string{"a", "b"}}},
			Authorization: []authpolicy.RuleOutcome{{Name: "zed", Runs: authpolicy.True, Passes: authpolicy.Unknown, Why: rule}}},
	}
	v := evaluationView(e)
	spicedb := "SpiceDB's answer cannot be known offline: give it in the request's decisions"
	if v.Authorization[0].Present != spicedb || v.Outcome.Authorization[0].Reason != spicedb {
		t.Errorf("rule: present %q, reason %q", v.Authorization[0].Present, v.Outcome.Authorization[0].Reason)
	}
	if !strings.HasPrefix(v.Outcome.Reason, "authenticated by anon (anonymous access") || !strings.HasSuffix(v.Outcome.Reason, "authorization cannot be known: zed: "+spicedb) {
		t.Errorf("reason %q", v.Outcome.Reason)
	}
	if v.Authentication[0].Present != "nothing (anonymous access)" {
		t.Errorf("authentication: present %q", v.Authentication[0].Present)
	}
	if len(v.Outcome.Notes) != 1 || !strings.HasPrefix(v.Outcome.Notes[0], "rules a, b all verify") {
		t.Errorf("notes %q", v.Outcome.Notes)
	}
	if e.Outcome.Reason != "" || e.Outcome.Notes != nil || e.Outcome.Authorization[0].Reason != "" || e.Authorization[0].Present != "" || e.Authentication[0].Present != "" {
		t.Errorf("the view edited the evaluation: %+v", e.Outcome)
	}
}
