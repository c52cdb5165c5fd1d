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
		want     string // part of the reason, "" for none
	}{
		{"http", XBackendRef("ns", "first"), ""},
		{"http", XBackendRef("ns", "anybyte"), `uses \C (any byte)`},
		{"", XBackendRef("ns", "anybyte"), `uses \C (any byte)`},
		{"http", XBackendRef("ns", "big"), "over Envoy's limit of 100"},
		{"http", XBackendRef("ns", "after"), ""}, // a longer prefix precedes the regex's match
		{"http", ServiceRef("ns", "svc"), "over Envoy's limit of 100"},
		{"http", XBackendRef("ns", "svc"), ""}, // another kind of the same name
		{"other", XBackendRef("ns", "anybyte"), ""},
	} {
		got := g.UncertainRoute(gw, c.listener, c.backend)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s %s on %q: %q, want %q", c.backend.Kind, c.backend.Name, c.listener, got, c.want)
		}
	}
	if got := g.UncertainRoute(GatewayRef("ns", "none"), "", XBackendRef("ns", "anybyte")); got != "" {
		t.Errorf("missing gateway: %q", got)
	}
}
