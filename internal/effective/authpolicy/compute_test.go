package authpolicy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

func load(t *testing.T, manifests string) *snapshot.Snapshot {
	t.Helper()
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(manifests)})
	if err != nil {
		t.Fatal(err)
	}
	cluster.DefaultNamespace(objs, "default")
	s, err := cluster.Build(objs, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const topo = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: missing-class
  listeners:
  - {name: a, protocol: HTTP, port: 80}
  - {name: b, protocol: HTTP, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: all, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules: [{backendRefs: [{name: s, port: 1}]}, {name: named, backendRefs: [{name: s, port: 1}]}, {backendRefs: [{name: s, port: 1}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: only-b, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra, sectionName: b}, {name: gw, namespace: infra, sectionName: nope}, {name: other, namespace: infra}, {name: gw, namespace: infra, kind: Service}]
  rules: [{backendRefs: [{name: s, port: 1}]}]
`

func TestTopologyPaths(t *testing.T) {
	s := load(t, topo)
	top := BuildTopology(s, topology.ClassifyGateways(s))
	var got []string
	for _, p := range top.FullPaths() {
		got = append(got, p.ID())
	}
	want := []string{
		"infra/gw|infra/gw#a|app/all|app/all#rule-1",
		"infra/gw|infra/gw#a|app/all|app/all#named",
		"infra/gw|infra/gw#a|app/all|app/all#rule-3",
		"infra/gw|infra/gw#b|app/all|app/all#rule-1",
		"infra/gw|infra/gw#b|app/all|app/all#named",
		"infra/gw|infra/gw#b|app/all|app/all#rule-3",
		"infra/gw|infra/gw#b|app/only-b|app/only-b#rule-1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidationAndResolution(t *testing.T) {
	s := load(t, topo+`
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: listener-b, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: b}
  rules: {authentication: {k: {anonymous: {}}}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: rule-3, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all, sectionName: rule-3}
  rules: {authentication: {k: {anonymous: {}}}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: wrong-group, namespace: app}
spec:
  targetRef: {group: gateway.networking.x-k8s.io, kind: HTTPRoute, name: all}
  rules: {authentication: {k: {anonymous: {}}}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: empty-when, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all}
  when: [{predicate: ""}]
  rules: {authentication: {k: {anonymous: {}}}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: overrides-and-when, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all}
  when: [{predicate: "true"}]
  overrides: {rules: {authentication: {k: {anonymous: {}}}}}
`)
	r := Compute(topology.BuildGraph(s))
	cases := map[string]struct {
		enforcement string
		reason      string
	}{
		// displaced on the rule-3 path through listener b (same key k), effective elsewhere
		"infra/listener-b":       {PartiallyEnforced, ""},
		"app/rule-3":             {Enforced, ""},
		"app/wrong-group":        {Invalid, "Invalid targetRef.group"},
		"app/empty-when":         {Invalid, "spec.when[0].predicate: Invalid value: should be at least 1 chars long"},
		"app/overrides-and-when": {Invalid, "Implicit defaults and explicit overrides are mutually exclusive"},
	}
	for ref, c := range cases {
		pr := r.Policy(ref)
		if pr == nil {
			t.Fatalf("%s missing", ref)
		}
		var messages []string
		for _, r := range pr.Reasons {
			if r.Code == ReasonInvalid {
				messages = append(messages, r.Message)
			}
		}
		if pr.Enforcement != c.enforcement || len(messages) != len(pr.Reasons) || !strings.Contains(strings.Join(messages, ";"), c.reason) {
			t.Errorf("%s: %s %v, want %s with %q", ref, pr.Enforcement, pr.Reasons, c.enforcement, c.reason)
		}
	}
	if pr := r.Policy("infra/listener-b"); len(pr.OverriddenBy) != 0 || len(pr.OverriddenRules) == 0 || pr.Condition.Message != "AuthPolicy has been partially enforced" {
		t.Errorf("listener-b overridden by %v (rules %v), condition %+v", pr.OverriddenBy, pr.OverriddenRules, pr.Condition)
	}
	if pr := r.Policy("app/wrong-group"); pr.Condition.Type != "Accepted" || pr.Condition.Status != "False" {
		t.Errorf("invalid condition = %+v", pr.Condition)
	}
	// The listener policy reaches only routes through listener b.
	pa, err := r.ForPrefix("infra/gw", "a", "app/all", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(pa.Effective.Policies) != 0 {
		t.Errorf("listener a folds %d policies, want 0", len(pa.Effective.Policies))
	}
	pb, err := r.ForPrefix("infra/gw", "b", "app/only-b", "rule-1")
	if err != nil {
		t.Fatal(err)
	}
	if got := view(pb.Effective); !reflect.DeepEqual(got, []string{"authentication#k<-infra/listener-b"}) {
		t.Errorf("listener b effective = %v", got)
	}
	if _, err := r.ForPrefix("infra/gw", "a", "app/only-b", ""); err == nil {
		t.Error("only-b is not attached to listener a: want an error")
	}
	// Positions point at the rule in the input.
	rule := pb.Effective.Rules["authentication#k"]
	if rule.Position.Source().Line == 0 || !strings.Contains(rule.Position.String(), ":") {
		t.Errorf("rule position = %v", rule.Position)
	}
}

func TestStatusOverriddenByAllSourcesWhenKeyDropped(t *testing.T) {
	// An atomic override drops the route's key altogether: the route is overridden by
	// every source of the effective policy (here only the gateway policy).
	s := load(t, topo+`
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: gw-over, namespace: infra, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  overrides: {rules: {authentication: {gw: {anonymous: {}}}}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: route, namespace: app, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: all}
  rules: {authorization: {mine: {opa: {rego: "allow = true"}}}}
`)
	r := Compute(topology.BuildGraph(s))
	pr := r.Policy("app/route")
	if pr.Enforcement != Overridden || !reflect.DeepEqual(pr.OverriddenBy, []string{"infra/gw-over"}) {
		t.Fatalf("route = %s by %v", pr.Enforcement, pr.OverriddenBy)
	}
	if pr.Condition.Message != "AuthPolicy is overridden by [infra/gw-over]" || pr.Condition.Reason != "Overridden" {
		t.Errorf("condition = %+v", pr.Condition)
	}
	if got := pr.OverriddenRules["authorization#mine"]; !reflect.DeepEqual(got, []string{"infra/gw-over"}) {
		t.Errorf("overriddenRules = %v", pr.OverriddenRules)
	}
	if len(pr.DisplacedOn) != 6 || len(pr.EffectiveOn) != 0 { // 2 listeners × 3 rules of app/all
		t.Errorf("displaced on %d paths, effective on %d; want 6 and 0", len(pr.DisplacedOn), len(pr.EffectiveOn))
	}
}

func TestRuleName(t *testing.T) {
	for _, tt := range []struct {
		i          int
		name, want string
	}{{0, "", "rule-1"}, {2, "", "rule-3"}, {0, "mcp", "mcp"}} {
		if got := RuleName(tt.i, tt.name); got != tt.want {
			t.Errorf("RuleName(%d, %q) = %q, want %q", tt.i, tt.name, got, tt.want)
		}
	}
}
