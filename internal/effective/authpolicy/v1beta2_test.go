package authpolicy

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/apis/kuadrant/v1beta2"
	"github.com/agpol/agpol/internal/topology"
)

// TestV1beta2Fixtures checks the Kuadrant Auth doc's own examples (kuadrant-operator
// v0.6.1, 0d571de, doc/auth.md) against the enforcement the doc states: the policies'
// enforcement and, per request, the AuthPolicy whose AuthConfig Authorino uses.
func TestV1beta2Fixtures(t *testing.T) {
	dirs, err := filepath.Glob("../../../testdata/authpolicy/v1beta2/*/objects.yaml")
	if err != nil || len(dirs) < 5 {
		t.Fatalf("fixtures: %v %v", dirs, err)
	}
	for _, f := range dirs {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			objs, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, "expect.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var want struct {
				Policies map[string]string
				Requests []struct {
					Gateway, Route, Host, Method, Path, Policy, Applies string
				}
			}
			if err := yaml.UnmarshalStrict(raw, &want); err != nil {
				t.Fatal(err)
			}
			res := ComputeV1beta2(topology.BuildGraph(load(t, string(objs))))
			if len(res.Policies) != len(want.Policies) {
				t.Errorf("%d policies computed, %d expected", len(res.Policies), len(want.Policies))
			}
			for ref, label := range want.Policies {
				p := res.Policy(ref)
				if p == nil {
					t.Errorf("%s: not computed", ref)
					continue
				}
				if p.Enforcement != label {
					t.Errorf("%s: %s (%v), want %s", ref, p.Enforcement, p.Why, label)
				}
			}
			for _, rq := range want.Requests {
				d := res.ForRequest(rq.Gateway, rq.Route, Request{Host: rq.Host, Method: rq.Method, Path: rq.Path, Headers: map[string]string{}})
				got, applies := "", ""
				if d != nil {
					got = d.AuthConfig
					if d.Evaluation != nil {
						applies = string(d.Evaluation.Applies)
					}
				}
				if got != rq.Policy || applies != rq.Applies {
					t.Errorf("%s %s%s via %s: policy %q applies %q, want %q %q (%+v)", rq.Method, rq.Host, rq.Path, rq.Route, got, applies, rq.Policy, rq.Applies, d)
				}
			}
		})
	}
}

func pathMatch(typ gwapiv1.PathMatchType, v string) *gwapiv1.HTTPPathMatch {
	return &gwapiv1.HTTPPathMatch{Type: &typ, Value: &v}
}

// TestV1beta2SelectRules follows KO v0.6.1 api/v1beta2/route_selectors.go:L26-L52 and
// pkg/common/gatewayapi_utils.go:L100-L138 (its route_selectors_test.go cases): a rule is
// selected when one of its matches states the selector's path and method identically
// and includes its headers; hostnames must intersect the route's.
func TestV1beta2SelectRules(t *testing.T) {
	get := gwapiv1.HTTPMethodGet
	post := gwapiv1.HTTPMethodPost
	route := &gwapiv1.HTTPRoute{Spec: gwapiv1.HTTPRouteSpec{
		Hostnames: []gwapiv1.Hostname{"api.toystore.com", "*.toystore.com"},
		Rules: []gwapiv1.HTTPRouteRule{
			{Matches: []gwapiv1.HTTPRouteMatch{{Path: pathMatch(gwapiv1.PathMatchPathPrefix, "/toy"), Method: &get}}},
			{Matches: []gwapiv1.HTTPRouteMatch{{Path: pathMatch(gwapiv1.PathMatchExact, "/admin"), Method: &post,
				Headers: []gwapiv1.HTTPHeaderMatch{{Name: "x-admin", Value: "1"}}}}},
			{},
		},
	}}
	tests := []struct {
		name string
		sel  v1beta2.RouteSelector
		want []int
	}{
		{"no matches selects every rule", v1beta2.RouteSelector{}, []int{0, 1, 2}},
		{"identical path", v1beta2.RouteSelector{Matches: []gwapiv1.HTTPRouteMatch{{Path: pathMatch(gwapiv1.PathMatchPathPrefix, "/toy")}}}, []int{0}},
		{"a subset of the match (method only)", v1beta2.RouteSelector{Matches: []gwapiv1.HTTPRouteMatch{{Method: &post}}}, []int{1}},
		{"same value, other path type: nothing", v1beta2.RouteSelector{Matches: []gwapiv1.HTTPRouteMatch{{Path: pathMatch(gwapiv1.PathMatchExact, "/toy")}}}, nil},
		{"a prefix of the path is not the path", v1beta2.RouteSelector{Matches: []gwapiv1.HTTPRouteMatch{{Path: pathMatch(gwapiv1.PathMatchPathPrefix, "/to")}}}, nil},
		{"header the rule does not state", v1beta2.RouteSelector{Matches: []gwapiv1.HTTPRouteMatch{{Method: &post, Headers: []gwapiv1.HTTPHeaderMatch{{Name: "x-other", Value: "1"}}}}}, nil},
		{"hostnames intersect", v1beta2.RouteSelector{Hostnames: []gwapiv1.Hostname{"api.toystore.com", "x.io"}}, []int{0, 1, 2}},
		{"hostnames literal, no wildcard matching", v1beta2.RouteSelector{Hostnames: []gwapiv1.Hostname{"a.toystore.com"}}, nil},
	}
	for _, tt := range tests {
		got := SelectRules(tt.sel, route)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

// TestV1beta2Lookup follows Authorino v0.15.0 (15dd344) pkg/index/index.go:L153-L174:
// exact host first, then the wildcard of the most specific domain above it, then "*".
func TestV1beta2Lookup(t *testing.T) {
	a, w, c, all := &V1beta2Policy{Ref: "a"}, &V1beta2Policy{Ref: "w"}, &V1beta2Policy{Ref: "c"}, &V1beta2Policy{Ref: "all"}
	r := &V1beta2Result{index: map[string]*V1beta2Policy{"a.toystore.com": a, "*.toystore.com": w, "*.com": c}}
	for host, want := range map[string]string{
		"a.toystore.com":      "a",
		"A.Toystore.com":      "a",
		"a.toystore.com:8080": "a",
		"b.toystore.com":      "w",
		"x.b.toystore.com":    "w",
		"toystore.com":        "w", // the tree's lookup starts at the host's own node: "*.toystore.com" is its child
		"other.com":           "c",
		"other.net":           "",
	} {
		p, _ := r.Lookup(host)
		got := ""
		if p != nil {
			got = p.Ref
		}
		if got != want {
			t.Errorf("%s: %q, want %q", host, got, want)
		}
	}
	r.index["*"] = all
	if p, k := r.Lookup("other.net"); p != all || k != "*" {
		t.Errorf("catch-all: %v %q", p, k)
	}
}

// TestV1beta2Conditions checks the conditions built from the selected rules
// (KO v0.6.1 controllers/authpolicy_authconfig.go:L311-L466) as Authorino evaluates them:
// PathPrefix becomes an unanchored regular expression "<prefix>.*".
func TestV1beta2Conditions(t *testing.T) {
	s := load(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw}]
  hostnames: [api.toystore.com, www.toystore.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /admin}, method: POST}]
  - matches: [{path: {type: Exact, value: /toys}}]
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}
  routeSelectors:
  - hostnames: [api.toystore.com]
    matches: [{path: {type: PathPrefix, value: /admin}}]
  when:
  - selector: request.headers.x-tenant
    operator: neq
    value: internal
  rules:
    authorization:
      only-get:
        routeSelectors: [{matches: [{path: {type: Exact, value: /toys}}]}]
        patternMatching:
          patterns: [{selector: request.method, operator: eq, value: GET}]
`)
	res := ComputeV1beta2(topology.BuildGraph(s))
	p := res.Policy("app/p")
	if p == nil || p.Enforcement != Enforced {
		t.Fatalf("%+v", p)
	}
	for _, tc := range []struct {
		host, method, path string
		headers            map[string]string
		want               Tri
	}{
		{"api.toystore.com", "POST", "/admin/x", map[string]string{}, True},
		{"api.toystore.com", "POST", "/v1/admin", map[string]string{}, True}, // unanchored
		{"www.toystore.com", "POST", "/admin", map[string]string{}, False},   // hostname not selected
		{"api.toystore.com", "GET", "/admin", map[string]string{}, False},    // method of the rule
		{"api.toystore.com", "POST", "/admin", map[string]string{"X-Tenant": "internal"}, False},
		{"api.toystore.com", "POST", "/admin", nil, Unknown},
	} {
		ev := p.Evaluate(Request{Host: tc.host, Method: tc.method, Path: tc.path, Headers: tc.headers}, nil)
		if ev.Applies != tc.want {
			t.Errorf("%s %s%s %v: applies %s, want %s (%+v)", tc.method, tc.host, tc.path, tc.headers, ev.Applies, tc.want, ev.Predicates)
		}
	}
	ev := p.Evaluate(Request{Host: "api.toystore.com", Method: "POST", Path: "/admin", Headers: map[string]string{}}, nil)
	if len(ev.Authorization) != 1 || ev.Authorization[0].Runs != False {
		t.Errorf("only-get should be skipped off /toys: %+v", ev.Authorization)
	}
	ev = p.Evaluate(Request{Host: "api.toystore.com", Method: "GET", Path: "/toys", Headers: map[string]string{}}, nil)
	if len(ev.Authorization) != 1 || ev.Authorization[0].Runs != True || ev.Authorization[0].Passes != True {
		t.Errorf("only-get should run and pass on GET /toys: %+v", ev.Authorization)
	}
}

// TestV1beta2Migrate checks the kuadrant.io/v1 form: selected rules become sectionNames
// (unnamed rules get the name to add), pattern `when` becomes CEL, rule-level
// routeSelectors become the CEL of the conditions the operator added to the rule
// (KO v0.6.1 controllers/authpolicy_authconfig.go:L183-L466).
func TestV1beta2Migrate(t *testing.T) {
	s := load(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw}]
  hostnames: [api.toystore.com]
  rules:
  - name: toys
    matches: [{path: {type: Exact, value: /toys}}]
  - matches: [{path: {type: PathPrefix, value: /admin}, method: POST, headers: [{name: X-Admin, value: "1"}]}]
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: p, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}
  routeSelectors:
  - matches: [{path: {type: Exact, value: /toys}}, {path: {type: PathPrefix, value: /admin}, method: POST}]
  patterns:
    tenant: [{selector: context.request.http.headers.x-tenant, operator: neq, value: "a'b"}]
  when:
  - patternRef: tenant
  - any: [{selector: auth.identity.groups, operator: excl, value: banned}, {selector: request.url_path, operator: matches, value: "^/v[0-9]"}]
  - {selector: "request.path.@extract:{\"sep\":\"?\"}", operator: eq, value: x}
  rules:
    authorization:
      admins:
        routeSelectors: [{matches: [{path: {type: PathPrefix, value: /admin}}]}]
        opa: {rego: "allow = true"}
      defaulted:
        # The API server defaults a selector's path to PathPrefix /: {method: POST}
        # selects only rules that match PathPrefix / (none here).
        routeSelectors: [{matches: [{method: POST}]}]
        opa: {rego: "allow = true"}
`)
	p := ComputeV1beta2(topology.BuildGraph(s)).Policy("app/p")
	if len(p.EmptySelectors) != 1 || p.EmptySelectors[0].Field != "spec.rules.authorization.defaulted.routeSelectors" {
		t.Errorf("empty selectors: %+v", p.EmptySelectors)
	}
	m := p.Migrate()
	want := &V1Migration{
		Targets:   []V1Target{{Kind: "HTTPRoute", Name: "r", SectionName: "toys"}, {Kind: "HTTPRoute", Name: "r", SectionName: "rule-2"}},
		RuleNames: []RuleNameToAdd{{Route: "app/r", Index: 1, Name: "rule-2"}},
		When:      []string{`request.headers["x-tenant"] != "a'b"`, `(!("banned" in auth.identity.groups) || request.url_path.matches("^/v[0-9]"))`},
		RuleWhen:  map[string]string{"authorization.admins": `(request.method == "POST" && request.url_path.matches("/admin.*") && request.headers["x-admin"] == "1")`},
	}
	if !reflect.DeepEqual(m.Targets, want.Targets) || !reflect.DeepEqual(m.RuleNames, want.RuleNames) ||
		!reflect.DeepEqual(m.When, want.When) || !reflect.DeepEqual(m.RuleWhen, want.RuleWhen) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
	if len(m.UntranslatedWhys) != 2 || m.UntranslatedWhys[0].Code != UntranslatedModifiers || m.UntranslatedWhys[0].Field != "when" ||
		m.UntranslatedWhys[1] != (Untranslated{Code: UntranslatedSelectsNothing, Field: "authorization.defaulted.routeSelectors"}) || m.Untranslated != nil {
		t.Errorf("untranslated: %+v (%q)", m.UntranslatedWhys, m.Untranslated)
	}
	if len(m.ChangeWhys) != 1 || m.ChangeWhys[0] != (Change{Code: ChangeOnePerRule, Rules: 2}) || m.Changes != nil {
		t.Errorf("changes: %+v (%q)", m.ChangeWhys, m.Changes)
	}
}
