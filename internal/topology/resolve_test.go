package topology

import (
	"testing"
)

// Resolve answers with data: why a request cannot be resolved, the rule and the ends of
// its way, and the rule that ignores its method match; a terse query allocates nothing.
func TestResolve(t *testing.T) {
	g := BuildGraph(loadPartial(t, "dataplanes.yaml"))
	agentic := GatewayRef("infra", "agentic")
	route := HTTPRouteRef("app", "r")
	missing := HTTPRouteRef("app", "missing")
	req := func(gw Ref, method, path string) RouteRequest {
		return RouteRequest{Gateway: gw, Method: method, Path: path}
	}
	cases := []struct {
		name       string
		q          Query
		unresolved string
		candidates int
		rule       string
		noBackend  string
		ignored    *IgnoredMethod
	}{
		{name: "inferred from the route", q: Query{RouteRequest: req(Ref{}, "GET", "/m"), Route: &route}, unresolved: UnresolvedNoGateway, candidates: 4},
		{name: "missing gateway", q: Query{RouteRequest: req(GatewayRef("infra", "ghost"), "GET", "/m")}, unresolved: UnresolvedGateway},
		{name: "missing listener", q: Query{RouteRequest: RouteRequest{Gateway: agentic, Listener: "nope", Method: "GET", Path: "/m"}}, unresolved: UnresolvedListener},
		{name: "missing route", q: Query{RouteRequest: req(agentic, "GET", "/m"), Route: &missing}, unresolved: UnresolvedRoute},
		{name: "routed", q: Query{RouteRequest: req(agentic, "GET", "/m")}, rule: "get-only"},
		{name: "method ignored", q: Query{RouteRequest: req(agentic, "POST", "/m")}, rule: "get-only",
			ignored: &IgnoredMethod{Route: "app/r", Rule: "get-only", Method: "GET", RequestMethod: "POST"}},
		{name: "no route", q: Query{RouteRequest: RouteRequest{Gateway: agentic, Listener: "http", Port: 81, Method: "GET", Path: "/m"}}, noBackend: NoBackendNoRoute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var res Resolution
			g.Resolve(&tc.q, &res)
			if res.Unresolved.Why != tc.unresolved || len(res.Unresolved.Candidates) != tc.candidates {
				t.Fatalf("unresolved %+v, want %q with %d candidates", res.Unresolved, tc.unresolved, tc.candidates)
			}
			if tc.unresolved != "" {
				return
			}
			if res.Rule != (tc.rule != "") || res.RuleName != tc.rule {
				t.Errorf("rule %v %q, want %q", res.Rule, res.RuleName, tc.rule)
			}
			if len(res.Targets) != 1 || res.Targets[0].NoBackend.Why != tc.noBackend {
				t.Fatalf("targets %+v, want one reaching no backend because %q", res.Targets, tc.noBackend)
			}
			if tc.noBackend != "" && res.Targets[0].NoBackend.GatewayLevelRuns != res.Agentic {
				t.Errorf("gateway-level XAccessPolicies run only on the reference data plane: %+v (agentic %v)", res.Targets[0].NoBackend, res.Agentic)
			}
			if (res.IgnoredMethod == nil) != (tc.ignored == nil) || (tc.ignored != nil && *res.IgnoredMethod != *tc.ignored) {
				t.Errorf("ignored method %+v, want %+v", res.IgnoredMethod, tc.ignored)
			}
			terse := tc.q
			terse.Terse = true
			var tr Resolution
			g.Resolve(&terse, &tr)
			if tr.IgnoredMethod != nil || tr.RuleName != res.RuleName || len(tr.Targets) != 1 {
				t.Errorf("terse: %+v", tr)
			}
			if n := testing.AllocsPerRun(20, func() { g.Resolve(&terse, &tr) }); n != 0 && tc.noBackend == "" {
				t.Errorf("a terse query allocated %v times", n)
			}
		})
	}
}
