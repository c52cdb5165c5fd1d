package authpolicy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/agpol/agpol/internal/topology"
)

// TestV1beta2GatewaySelections: a Gateway policy's conditions are built from the rules of
// every route of the Gateway without a policy of its own, in route order (KO61
// controllers/authpolicy_authconfig.go:L63-L99); what its selectors select is named by
// the route rule it comes from, not by its place in that union.
func TestV1beta2GatewaySelections(t *testing.T) {
	s := load(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: istio
  listeners:
  - {name: http, protocol: HTTP, port: 80, hostname: "*.example.com", allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: a, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /a}}]
    backendRefs: [{name: s, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /admin}}]
    backendRefs: [{name: s, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: b, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /b}}]
    backendRefs: [{name: s, port: 80}]
  - name: admin
    matches: [{path: {type: PathPrefix, value: /admin}}]
    backendRefs: [{name: s, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: c, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /admin}}]
    backendRefs: [{name: s, port: 80}]
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: c, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: c}
  rules: {authentication: {k: {anonymous: {}}}}
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: gw, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  routeSelectors:
  - matches: [{path: {type: PathPrefix, value: /admin}}]
  rules: {authentication: {k: {anonymous: {}}}}
`)
	res := ComputeV1beta2(topology.BuildGraph(s))
	p := res.Policy("infra/gw")
	refs := func(rs []V1beta2RuleRef) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%s[%d]%s", r.Route, r.Index, r.Name))
		}
		return out
	}
	// app/c has its own policy: the Gateway's does not select its /admin rule.
	want := []string{"app/a[1]rule-2", "app/b[1]admin"}
	if got := refs(p.CoveredRules()); !slices.Equal(got, want) {
		t.Errorf("covered %q, want %q", got, want)
	}
	sel := p.Selections()
	if len(sel) != 1 || len(sel[0].Selectors) != 1 || sel[0].Miss != nil {
		t.Fatalf("selections %+v", sel)
	}
	if got := refs(sel[0].Selectors[0].Rules); !slices.Equal(got, want) {
		t.Errorf("selected %q, want %q", got, want)
	}
	var routes []string
	for _, r := range p.Routes {
		routes = append(routes, fmt.Sprint(r.Route, " ", r.Rules))
	}
	if want := []string{"app/a [1]", "app/b [1]"}; !slices.Equal(routes, want) {
		t.Errorf("routes %q, want %q", routes, want)
	}
	if got := res.GatewayRoutes("infra/gw"); !slices.Equal(got, []string{"app/a", "app/b", "app/c"}) {
		t.Errorf("gateway routes %q", got)
	}
	if rp := res.RoutePolicy("app/c"); rp == nil || rp.Ref != "app/c" || res.RoutePolicy("app/a") != nil {
		t.Errorf("route policies: %v", rp)
	}
}

// TestV1beta2NotProgrammed: kuadrant-operator v0.6.1 enforces an AuthPolicy through an
// Istio AuthorizationPolicy on the Gateway's workload (KO61
// controllers/authpolicy_istio_authorizationpolicy.go): on a Gateway of another data
// plane nothing sends requests to Authorino.
func TestV1beta2NotProgrammed(t *testing.T) {
	s := load(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: eg}
spec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: istio, namespace: infra}
spec:
  gatewayClassName: istio
  listeners: [{name: http, protocol: HTTP, port: 80, hostname: "*.istio.example.com", allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: eg, namespace: infra}
spec:
  gatewayClassName: eg
  listeners: [{name: http, protocol: HTTP, port: 80, hostname: "*.eg.example.com", allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: both, namespace: app}
spec:
  parentRefs: [{name: istio, namespace: infra}, {name: eg, namespace: infra}]
  hostnames: [both.example.com]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: eg-only, namespace: app}
spec:
  parentRefs: [{name: eg, namespace: infra}]
  hostnames: [x.eg.example.com]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: open, namespace: app}
spec:
  parentRefs: [{name: istio, namespace: infra}]
  hostnames: [open.istio.example.com]
  rules: [{backendRefs: [{name: s, port: 80}]}]
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: both, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: both}
  rules: {authentication: {k: {anonymous: {}}}}
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: eg-only, namespace: app}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: eg-only}
  rules: {authentication: {k: {anonymous: {}}}}
---
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: gw, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: istio}
  rules: {authentication: {k: {anonymous: {}}}}
`)
	res := ComputeV1beta2(topology.BuildGraph(s))
	for ref, want := range map[string]string{"app/both": PartiallyEnforced, "app/eg-only": NotEnforced, "infra/gw": Enforced} {
		p := res.Policy(ref)
		if p.Enforcement != want {
			t.Errorf("%s: %s, want %s (%v)", ref, p.Enforcement, want, p.Why)
		}
		if (want == Enforced) != (len(p.Unprogrammed) == 0) {
			t.Errorf("%s: not programmed on %+v", ref, p.Unprogrammed)
		}
	}
	if eg := res.Unprogrammed("infra/eg"); res.Unprogrammed("infra/istio") != nil || eg == nil ||
		eg.Code != ReasonUnprogrammedV1beta2 || eg.Ref != "infra/eg" || eg.DataPlane.DataPlane != topology.DataPlaneEnvoyGateway {
		t.Errorf("unprogrammed: istio %+v, eg %+v", res.Unprogrammed("infra/istio"), res.Unprogrammed("infra/eg"))
	}
	if d := res.ForRequest("infra/eg", "app/both", Request{Host: "both.example.com", Path: "/", Method: "GET"}); d == nil || d.Unprogrammed == nil {
		t.Errorf("request through the Envoy Gateway: %+v", d)
	}
	if d := res.ForRequest("infra/istio", "app/both", Request{Host: "both.example.com", Path: "/", Method: "GET"}); d == nil || d.Unprogrammed != nil || d.AuthConfig != "app/both" {
		t.Errorf("request through the Istio Gateway: %+v", d)
	}
}
