package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/topology"
)

// A path that reaches no backend has one sentence, said once: the routing step, the
// refusal and describe's line name the data plane's 500 once each.
func TestNoBackendSentences(t *testing.T) {
	foo := &topology.BackendProblem{Why: topology.BrokenKindUnsupported, Ref: topology.Ref{Group: "example.com", Kind: "Foo", Namespace: "app", Name: "f"}}
	rule := &topology.NoBackend{Why: topology.NoBackendRule, Rule: &topology.RuleProblem{Why: topology.RuleBackendFails, Backend: foo}, GatewayLevelRuns: true}
	ref := &topology.NoBackend{Why: topology.NoBackendRef, Backend: &topology.BackendProblem{Why: topology.BrokenXBackendNotFound, Ref: topology.XBackendRef("app", "ghost")}}
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"rule", NoBackendSentence(rule), "route rule answers 500: backendRefs[0]: unsupported backend kind Foo (InvalidKind); only gateway-level policies run"},
		{"ref", NoBackendSentence(ref), "the data plane answers 500: XBackend app/ghost not found (BackendNotFound)"},
		{"see-last", StepReason(explain.Step{Event: explain.EventNoBackendSeeLast, NoBackend: rule}), "the rule reaches no backend (why: the last step); only gateway-level policies run"},
		{"refused", StepReason(explain.Step{Event: explain.EventRefused, NoBackend: rule, Before: explain.BeforeAllowed}),
			"the request reaches no backend: route rule answers 500: backendRefs[0]: unsupported backend kind Foo (InvalidKind), after the gateway-level policies let it through"},
		{"no-route", DecisionReason(&explain.Decision{Cause: &explain.Cause{Event: explain.CauseRefused, Before: explain.BeforeIndeterminate}}),
			"no route takes the request: the data plane answers 404, whatever the gateway authorizer answers (403 if it denies)"},
		{"no-route-why", NoBackendSentence(&topology.NoBackend{Why: topology.NoBackendNoRoute, Miss: &topology.RouteMiss{Why: topology.MissNoListener, Gateway: topology.GatewayRef("infra", "gw")}, GatewayLevelRuns: true}),
			"no route: no listener of Gateway infra/gw accepts host \"\"; only gateway-level policies run (RBAC runs before routing)"},
		{"service", StepReason(explain.Step{Event: explain.EventNoBackendLevel}), "backend is a core Service: no backend-level policies"},
		{"other-kind", StepReason(explain.Step{Event: explain.EventNoBackendLevel, BackendKind: &topology.Ref{Group: "networking.istio.io", Kind: "Hostname"}}),
			"backend is a Hostname (networking.istio.io) of the Gateway's data plane: no backend-level policies"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
		if strings.Count(tc.got, "500") > 1 {
			t.Errorf("%s: 500 said more than once: %q", tc.name, tc.got)
		}
	}
}

// The path line of a path that reaches no backend ends with its short why, written from
// explain's code; -o json's "problem" is the same text.
func TestPathProblem(t *testing.T) {
	for why, want := range map[string]string{
		"":                         "",
		topology.NoBackendNoRoute:  "no route",
		topology.NoBackendRedirect: "the rule answers with a redirect (no backend)",
		topology.NoBackendNone:     "the rule has no backend",
		topology.NoBackendRule:     "no backend (500)",
		topology.NoBackendRef:      "no backend (500)",
	} {
		r := &explain.Result{Path: explain.PathInfo{Gateway: "gw/gw", Route: "app/r", NoBackend: why}}
		line := "gw gw/gw → route app/r"
		if want != "" {
			line += " → " + want
		}
		if got := PathLine(r.Path); got != line {
			t.Errorf("PathLine(%q) = %q, want %q", why, got, line)
		}
		if got := Sentences(r).Path.Problem; got != want {
			t.Errorf("Sentences(%q).Path.Problem = %q, want %q", why, got, want)
		}
		if r.Path.Problem != "" {
			t.Errorf("Sentences edited explain's result: problem %q", r.Path.Problem)
		}
	}
}
