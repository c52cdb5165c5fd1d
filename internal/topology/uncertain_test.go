package topology

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
)

// uncertainYAML: one HTTP listener; on host a.example.com a \C path regex (Envoy accepts
// it, Go cannot compile it) comes after a prefix match; on b.example.com a match with a
// header regex over Envoy's program size comes after a longer prefix and before a shorter.
const uncertainYAML = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ns}
spec:
  gatewayClassName: agentic
  listeners:
  - {name: http, protocol: HTTP, port: 80}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  hostnames: [a.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /first}}]
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: first}]
  - matches: [{path: {type: RegularExpression, value: '/any\C'}}]
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: anybyte}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b, namespace: ns}
spec:
  parentRefs: [{name: gw}]
  hostnames: [b.example.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /big}, headers: [{type: RegularExpression, name: x, value: 'x{120}'}]}]
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: big}]
  - matches: [{path: {type: PathPrefix, value: /after}}]
    backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: after}]
  - matches: [{path: {type: PathPrefix, value: /b}}]
    backendRefs: [{name: svc, port: 80}]
`

// TestUncertainRoute: a backend is reached uncertainly when a match that reaches it
// comes at or after a match Envoy may read otherwise on a virtual host of the listener
// (the same rule Route applies to one request); matches of higher precedence stay
// certain, and so do the other listeners and gateways.
func TestUncertainRoute(t *testing.T) {
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(uncertainYAML)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cluster.Build(objs, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	g := BuildGraph(s)
	gw := GatewayRef("ns", "gw")
	for _, c := range []struct {
		listener string
		backend  Ref
		want     string // why (a Regex* code), "" for none
	}{
		{"http", XBackendRef("ns", "first"), ""},
		{"http", XBackendRef("ns", "anybyte"), RegexAnyByte},
		{"", XBackendRef("ns", "anybyte"), RegexAnyByte},
		{"http", XBackendRef("ns", "big"), RegexOverLimit},
		{"http", XBackendRef("ns", "after"), ""}, // a longer prefix precedes the regex's match
		{"http", ServiceRef("ns", "svc"), RegexOverLimit},
		{"http", XBackendRef("ns", "svc"), ""}, // another kind of the same name
		{"other", XBackendRef("ns", "anybyte"), ""},
	} {
		got := g.UncertainRoute(gw, c.listener, c.backend)
		if why := differsWhy(got); why != c.want {
			t.Errorf("%s %s on %q: %+v, want %q", c.backend.Kind, c.backend.Name, c.listener, got, c.want)
		}
	}
	if got := g.UncertainRoute(GatewayRef("ns", "none"), "", XBackendRef("ns", "anybyte")); got != nil {
		t.Errorf("missing gateway: %+v", got)
	}
}

// TestResolveUncertain: Resolve puts on each target why its way is uncertain, for a
// backend the request names (UncertainRoute on the way's listener) as for a routed one
// (Route's answer), and what agpol assumes of a named backend, so explain reads both.
func TestResolveUncertain(t *testing.T) {
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(uncertainYAML + xbackendsYAML)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cluster.Build(objs, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	g := BuildGraph(s)
	anybyte, first, svc := XBackendRef("ns", "anybyte"), XBackendRef("ns", "first"), ServiceRef("ns", "svc")
	for _, c := range []struct {
		name      string
		q         Query
		uncertain string // why (a Regex* code), "" for none
		assumed   Assumption
		urlPath   string
	}{
		{name: "named, uncertain", q: Query{RouteRequest: RouteRequest{Host: "a.example.com", Path: "/x"}, Backend: &anybyte}, uncertain: RegexAnyByte,
			assumed: Assumption{Why: AssumedService, Ref: ServiceRef("ns", "mcp"), Of: anybyte}, urlPath: "/x"},
		{name: "named, certain", q: Query{RouteRequest: RouteRequest{Host: "a.example.com", Path: "/first?q#f"}, Backend: &first},
			assumed: Assumption{Why: AssumedService, Ref: ServiceRef("ns", "mcp"), Of: first}, urlPath: "/first"},
		{name: "named service, assumed", q: Query{RouteRequest: RouteRequest{Host: "b.example.com", Path: "/b"}, Service: &svc},
			uncertain: RegexOverLimit, assumed: Assumption{Why: AssumedService, Ref: svc}, urlPath: "/b"},
		{name: "routed after the regex", q: Query{RouteRequest: RouteRequest{Host: "b.example.com", Path: "/b#x?y"}}, uncertain: RegexOverLimit, urlPath: "/b"},
		{name: "routed before the regex", q: Query{RouteRequest: RouteRequest{Host: "a.example.com", Path: "/first"}}, urlPath: "/first"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.q.Gateway = GatewayRef("ns", "gw")
			var res Resolution
			g.Resolve(&c.q, &res)
			if res.Unresolved.Why != "" || len(res.Targets) != 1 {
				t.Fatalf("unresolved %+v, targets %+v", res.Unresolved, res.Targets)
			}
			got := res.Targets[0]
			if why := differsWhy(got.Uncertain); why != c.uncertain {
				t.Errorf("uncertain %+v, want %q", got.Uncertain, c.uncertain)
			}
			if got.Assumed != c.assumed {
				t.Errorf("assumed %+v, want %+v", got.Assumed, c.assumed)
			}
			if res.URLPath != c.urlPath {
				t.Errorf("URLPath %q, want %q", res.URLPath, c.urlPath)
			}
		})
	}
}

// xbackendsYAML: the XBackends anybyte and first of uncertainYAML, whose Service is not
// in the input.
const xbackendsYAML = `
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: anybyte, namespace: ns}
spec: {mcp: {serviceName: mcp, port: 8080}}
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: first, namespace: ns}
spec: {mcp: {serviceName: mcp, port: 8080}}
`

// differsWhy is d's Why, "" for nil.
func differsWhy(d *RegexDiffers) string {
	if d == nil {
		return ""
	}
	return d.Why
}
