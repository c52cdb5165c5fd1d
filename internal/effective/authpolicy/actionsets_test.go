package authpolicy

import (
	"reflect"
	"strings"
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/topology"
)

const tiedTopo = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: istio
  listeners:
  - {name: a, protocol: HTTP, port: 80}
  - {name: b, protocol: HTTP, port: 8080}
  - {name: c, protocol: HTTP, port: 8081, hostname: other.example.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - name: x
    matches: [{path: {type: PathPrefix, value: /x}}]
    backendRefs: [{name: s, port: 1}]
  - name: "y"
    matches: [{path: {type: PathPrefix, value: /y}}]
    backendRefs: [{name: s, port: 1}]
  - name: exact
    matches: [{path: {type: Exact, value: /x}}]
    backendRefs: [{name: s, port: 1}]
  - name: get
    matches: [{path: {type: PathPrefix, value: /x}, method: GET}]
    backendRefs: [{name: s, port: 1}]
  - name: xx
    matches: [{path: {type: PathPrefix, value: /x/}}]
    backendRefs: [{name: s, port: 1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: only-a, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra, sectionName: a}]
  hostnames: [solo.example.com]
  rules: [{backendRefs: [{name: s, port: 1}]}]
`

func tiedPolicy(name, section string) string {
	target := "{group: gateway.networking.k8s.io, kind: Gateway, name: gw}"
	if section != "" {
		target = "{group: gateway.networking.k8s.io, kind: Gateway, name: gw, sectionName: " + section + "}"
	}
	return `
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: ` + name + `, namespace: infra}
spec:
  targetRef: ` + target + `
  rules:
    authentication:
      anon: {anonymous: {}}
`
}

// TestTiedPaths: the paths whose action set ties with a path's in kuadrant-operator's
// order (SortableHTTPRouteMatchConfigs.Less) and matches the request too.
func TestTiedPaths(t *testing.T) {
	both := tiedPolicy("pa", "a") + tiedPolicy("pb", "b")
	cases := []struct {
		name, policies     string
		listener, rule     string
		method, host, path string
		want               []string
	}{
		{"same rule on the other listener", both, "a", "x", "POST", "h.example.com", "/x/1", []string{"infra/gw#b|app/r|app/r#x"}},
		{"the other way", both, "b", "x", "POST", "h.example.com", "/x/1", []string{"infra/gw#a|app/r|app/r#x"}},
		// /x and /y tie in Less (same type and length) but no request matches both.
		{"tied rule that cannot match", both, "a", "y", "POST", "h.example.com", "/y", []string{"infra/gw#b|app/r|app/r#y"}},
		// Exact comes before PathPrefix; a method match after none.
		{"exact", both, "a", "exact", "GET", "h.example.com", "/x", []string{"infra/gw#b|app/r|app/r#exact"}},
		{"method", both, "a", "get", "GET", "h.example.com", "/x", []string{"infra/gw#b|app/r|app/r#get"}},
		// The other listener's action set does not hold for the request.
		{"method mismatch", both, "a", "get", "POST", "h.example.com", "/x", nil},
		// A longer prefix comes first: rule x's action sets tie with rule x's only.
		{"longer prefix", both, "a", "xx", "POST", "h.example.com", "/x/1", []string{"infra/gw#b|app/r|app/r#xx"}},
		// Listener c's hostname: its action set's hostname differs from "*".
		{"hostname", both + tiedPolicy("pc", "c"), "c", "x", "POST", "other.example.com", "/x", nil},
		{"no policy on the other listener", tiedPolicy("pa", "a"), "a", "x", "POST", "h.example.com", "/x", nil},
		{"one Gateway policy", tiedPolicy("pg", ""), "a", "x", "POST", "h.example.com", "/x", []string{"infra/gw#b|app/r|app/r#x"}},
		{"one listener", tiedPolicy("pg", ""), "a", "rule-1", "POST", "solo.example.com", "/", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Compute(topology.BuildGraph(load(t, tiedTopo+tc.policies)))
			route := "app/r"
			if tc.rule == "rule-1" {
				route = "app/only-a"
			}
			p, err := r.ForPrefix("infra/gw", tc.listener, route, tc.rule)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, q := range r.TiedPaths(p, Request{Method: tc.method, Host: tc.host, Path: tc.path}) {
				got = append(got, strings.TrimPrefix(q.Path.ID(), "istio|infra/gw|"))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("tied %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTiedPathsNotProgrammed: a Gateway Kuadrant does not program has no action sets.
func TestTiedPathsNotProgrammed(t *testing.T) {
	in := strings.Replace(tiedTopo, "controllerName: istio.io/gateway-controller", "controllerName: example.com/other", 1)
	r := Compute(topology.BuildGraph(load(t, in+tiedPolicy("pg", ""))))
	p, err := r.ForPrefix("infra/gw", "a", "app/r", "x")
	if err != nil {
		t.Fatal(err)
	}
	if got := r.TiedPaths(p, Request{Method: "GET", Host: "h", Path: "/x"}); got != nil {
		t.Errorf("tied %v on a Gateway Kuadrant does not program", got)
	}
}

// TestHolds: the predicates kuadrant-operator writes for a route match
// (PredicatesFromHTTPRouteMatch), as the wasm-shim evaluates them.
func TestHolds(t *testing.T) {
	typ := func(s gwapiv1.PathMatchType) *gwapiv1.PathMatchType { return &s }
	str := func(s string) *string { return &s }
	get := gwapiv1.HTTPMethodGet
	cases := []struct {
		name  string
		match gwapiv1.HTTPRouteMatch
		req   Request
		want  bool
	}{
		{"prefix is a string prefix", gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: typ(gwapiv1.PathMatchPathPrefix), Value: str("/x")}}, Request{Path: "/xy"}, true},
		{"prefix", gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: typ(gwapiv1.PathMatchPathPrefix), Value: str("/x")}}, Request{Path: "/y"}, false},
		{"exact without the query", gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: typ(gwapiv1.PathMatchExact), Value: str("/x")}}, Request{Path: "/x?a=1"}, true},
		{"exact", gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: typ(gwapiv1.PathMatchExact), Value: str("/x")}}, Request{Path: "/x/"}, false},
		{"regex anywhere", gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: typ(gwapiv1.PathMatchRegularExpression), Value: str("[0-9]+")}}, Request{Path: "/a/12"}, true},
		{"bad regex", gwapiv1.HTTPRouteMatch{Path: &gwapiv1.HTTPPathMatch{Type: typ(gwapiv1.PathMatchRegularExpression), Value: str("(")}}, Request{Path: "/("}, false},
		{"method", gwapiv1.HTTPRouteMatch{Method: &get}, Request{Method: "POST", Path: "/"}, false},
		{"header name any case", gwapiv1.HTTPRouteMatch{Headers: []gwapiv1.HTTPHeaderMatch{{Name: "X-Tier", Value: "gold"}}}, Request{Path: "/", Headers: map[string]string{"x-tier": "gold"}}, true},
		{"header value exact", gwapiv1.HTTPRouteMatch{Headers: []gwapiv1.HTTPHeaderMatch{{Name: "x-tier", Value: "gold"}}}, Request{Path: "/", Headers: map[string]string{"x-tier": "Gold"}}, false},
		{"query first value", gwapiv1.HTTPRouteMatch{QueryParams: []gwapiv1.HTTPQueryParamMatch{{Name: "a", Value: "1"}}}, Request{Path: "/?a=1&a=2"}, true},
		{"query missing", gwapiv1.HTTPRouteMatch{QueryParams: []gwapiv1.HTTPQueryParamMatch{{Name: "a", Value: "1"}}}, Request{Path: "/"}, false},
	}
	for _, tc := range cases {
		if got := Holds(tc.match, tc.req); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestTiesPruned: action sets that tie in Less but that no request can match together
// (prefixes /x and /y) are not kept as ties.
func TestTiesPruned(t *testing.T) {
	r := Compute(topology.BuildGraph(load(t, tiedTopo+tiedPolicy("pg", ""))))
	p, err := r.ForPrefix("infra/gw", "a", "app/r", "x")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tie := range r.wasmOf(p).ties {
		got = append(got, strings.TrimPrefix(tie.Path.Path.ID(), "istio|infra/gw|"))
	}
	if want := []string{"infra/gw#b|app/r|app/r#x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ties %v, want %v", got, want)
	}
}
