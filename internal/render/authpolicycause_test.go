package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
)

// The decision Kuadrant's AuthPolicy makes and the trace step that says so get the same
// sentence, written here from the event and its data.
func TestAuthPolicySentences(t *testing.T) {
	pol := []string{"ns/a", "ns/b"}
	for _, tt := range []struct {
		event string
		a     *explain.AuthPolicyCause
		want  string
	}{
		{explain.CauseAuthPolicyNotFound, &explain.AuthPolicyCause{Policies: []string{"ns/a"}, V1beta2: &authpolicy.V1beta2Decision{
			Found: authpolicy.FoundRoutePolicy, Route: "ns/r", CheckedBy: "ns/a", Host: "x", NotFound: true, Unindexed: true}},
			"Kuadrant AuthPolicy ns/a (v1beta2): HTTPRoute ns/r has the AuthPolicy ns/a; no AuthConfig holds host x: Authorino answers NOT_FOUND"},
		{explain.CauseAuthPolicyNoIdentity, &explain.AuthPolicyCause{Policies: pol},
			"every authentication rule of Kuadrant AuthPolicy ns/a, ns/b is skipped by its when conditions: Authorino finds no identity and the data plane answers 401"},
		{explain.CauseAuthPolicyAuthzFails, &explain.AuthPolicyCause{Policies: pol, Rule: "admins", Source: "ns/b"},
			"authorization admins of Kuadrant AuthPolicy ns/b fails: the data plane answers 403"},
		{explain.CauseAuthPolicyUnknown, &explain.AuthPolicyCause{Policies: pol, Unknown: []explain.AuthPolicyUnknown{
			{What: explain.UnknownAuthentication, Rules: []string{"jwt", "key"}}, {What: explain.UnknownWhen},
			{What: explain.UnknownAuthorization, Rules: []string{"opa"}, Need: authpolicy.Need{Code: authpolicy.NeedOPA}}}},
			"Kuadrant AuthPolicy ns/a, ns/b decides on this Gateway, and cannot be known offline: authentication jwt or key (the request's credentials); whether the policy's when conditions hold; authorization opa: an OPA policy must allow it (cannot be known offline)"},
		{explain.CauseAuthPolicyUnevaluated, &explain.AuthPolicyCause{Policies: pol},
			"Kuadrant AuthPolicy ns/a, ns/b decides on this Gateway (no XAccessPolicy runs on its data plane) on the routes to this backend, and its outcome depends on the caller's credentials, which are not known: name the request's host and path instead of the backend to see what it asks"},
		{explain.CauseAuthorino, &explain.AuthPolicyCause{Policies: pol, Outcome: &authpolicy.Outcome{Verdict: "deny", Code: 401,
			Why:      authpolicy.Why{Code: authpolicy.WhyUnauthenticated, Parts: []authpolicy.RuleWhy{{Rule: "kc", Why: authpolicy.Why{Code: authpolicy.WhyAuthnNoExp}}}},
			NoteWhys: []authpolicy.Why{{Code: authpolicy.NoteSameAnswer, Rules: []string{"a", "b"}, Priority: 1}, {Code: authpolicy.NoteIssuerMismatch, Claim: "x", Issuer: "y"}}}},
			"Kuadrant AuthPolicy ns/a, ns/b, as Authorino decides it: deny (HTTP 401): no authentication rule verifies the identity (kc: the token has no exp claim, and Authorino rejects it as expired (go-oidc v3.14.1 oidc/verify.go:285-293: a missing exp reads as the zero time)): Authorino answers UNAUTHENTICATED (auth_pipeline.go:475-479); note: rules a, b all verify the identity at priority 1; Authorino takes the first to finish, and each gives this answer; the token's iss \"x\" is not the rule's issuerUrl \"y\", and it does not matter: " + citeIssuer},
		{explain.CauseAuthorino, &explain.AuthPolicyCause{Policies: pol, Outcome: &authpolicy.Outcome{Verdict: "indeterminate",
			Why: authpolicy.Why{Code: authpolicy.WhyAuthnUnknown, Parts: []authpolicy.RuleWhy{{Rule: "kc", Why: authpolicy.Why{Code: authpolicy.WhyAuthnNoTime}}}}}},
			"Kuadrant AuthPolicy ns/a, ns/b, as Authorino decides it: indeterminate: authentication cannot be known: kc (whether the token has expired depends on the time: give the request's time (--time, or http.time in a request file))"},
		{explain.CauseAuthPolicyUnknown, &explain.AuthPolicyCause{Policies: pol, Unknown: []explain.AuthPolicyUnknown{
			{What: explain.UnknownAuthorization, Rules: []string{"zed"}, Need: authpolicy.Need{Code: authpolicy.NeedSpiceDB}, Why: &authpolicy.Why{Code: authpolicy.WhySpiceDB}}}},
			"Kuadrant AuthPolicy ns/a, ns/b decides on this Gateway, and cannot be known offline: authorization zed: SpiceDB's answer cannot be known offline: give it in the request's decisions"},
	} {
		d := explain.Decision{Cause: &explain.Cause{Event: tt.event, AuthPolicy: tt.a}}
		if got := DecisionReason(&d); got != tt.want {
			t.Errorf("DecisionReason(%s)\n got %q\nwant %q", tt.event, got, tt.want)
		}
		if got := StepReason(explain.Step{Event: tt.event, AuthPolicy: tt.a}); got != tt.want {
			t.Errorf("StepReason(%s)\n got %q\nwant %q", tt.event, got, tt.want)
		}
	}
}

// A kuadrant.io/v1beta2 AuthPolicy left out for kuadrant.io/v1 ones says why in render's
// view (-o json) and text; explain's result is left as it is (data, no sentence).
func TestV1beta2LeftOut(t *testing.T) {
	const found = "HTTPRoute app/blog has no AuthPolicy of its own: the Gateway's AuthPolicy infra/gw covers it; the request's host is not known, so which AuthConfig Authorino uses cannot be known"
	r := &explain.Result{AuthPolicy: &explain.AuthPolicyInfo{Path: "p", V1beta2: &authpolicy.V1beta2Decision{
		Found: authpolicy.FoundGatewayPolicy, Route: "app/blog", CheckedBy: "infra/gw", Ignored: true}}}
	want := "left out: " + found + "; kuadrant.io/v1 AuthPolicies apply on this path too, and no Kuadrant release enforces both versions together: agpol decides with the kuadrant.io/v1 ones"
	if got := Sentences(r).AuthPolicy.V1beta2.Reason; got != want {
		t.Errorf("Sentences: v1beta2 reason %q, want %q", got, want)
	}
	if r.AuthPolicy.V1beta2.Reason != "" {
		t.Errorf("Sentences edited explain's result: %q", r.AuthPolicy.V1beta2.Reason)
	}
	var b strings.Builder
	writeAuthPolicy(&b, r.AuthPolicy, Styler{})
	if words := strings.Join(strings.Fields(b.String()), " "); !strings.Contains(words, "kuadrant.io/v1beta2: "+want) {
		t.Errorf("text:\n%s\nwant the left-out reason", b.String())
	}
	r.AuthPolicy.V1beta2.Ignored = false
	if got := Sentences(r).AuthPolicy.V1beta2.Reason; got != found {
		t.Errorf("not left out: reason %q, want %q", got, found)
	}
}
