package whatif

import (
	"testing"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
)

// kuadrantTopology: an Istio Gateway (class in the input) and a Gateway of a controller
// agpol does not model, each routing to a Service, each with a Kuadrant AuthPolicy that
// asks for a JWT.
const kuadrantTopology = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.com/other-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: mesh, namespace: gw}
spec:
  gatewayClassName: istio
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: plain, namespace: gw}
spec:
  gatewayClassName: other
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: app}
spec:
  parentRefs: [{name: mesh, namespace: gw}, {name: plain, namespace: gw}]
  rules: [{backendRefs: [{name: app, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: app}
spec: {ports: [{port: 80}]}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: jwt, namespace: app, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: app}
  rules:
    authentication:
      idp: {jwt: {issuerUrl: https://idp.example.com}}
`

// On a Gateway Kuadrant programs, its AuthPolicy decides (explain says indeterminate: the
// caller's JWT is not known); the decision space must not say allow there. On a Gateway
// Kuadrant does not program, the AuthPolicy never runs and nothing checks the call.
func TestKuadrantDecidesOnOtherDataPlanes(t *testing.T) {
	s := loadYAML(t, kuadrantTopology)
	e := New(model.New(s), reference(), Options{})
	op := Op{Method: "tools/call", Tool: "x"}
	want := map[string]Cell{
		"gw/mesh":  {Decision: explain.Indeterminate, Level: explain.LevelAuthPolicy, DecidedBy: "app/jwt"},
		"gw/plain": {Decision: explain.Allow, DecidedBy: explain.DecidedOtherDataPlane},
	}
	seen := 0
	for _, tg := range e.Targets {
		w, ok := want[tg.Gateway]
		if !ok {
			t.Fatalf("unexpected target %s", tg.Label())
		}
		seen++
		got := e.Decide(tg, e.Identities[0], op).Primary()
		if got.Decision != w.Decision || got.DecidedBy != w.DecidedBy || (w.Level != "" && got.Level != w.Level) {
			t.Errorf("%s: %+v, want %+v", tg.Label(), got, w)
		}
		// explain, routing the same call through the Gateway, agrees on the verdict.
		gw, _ := explain.ParseNamespacedName(tg.Gateway, "")
		res, err := e.sim.Explain(explain.Full, &explain.Request{From: e.Identities[0].Caller, Gateway: &gw, Listener: tg.Listener,
			HTTP: explain.HTTP{Host: "app.example.com"}, MCP: &explain.MCP{Method: op.Method, Tool: op.Tool}})
		if err != nil {
			t.Fatal(err)
		}
		if res[0].Verdict != w.Decision {
			t.Errorf("%s: explain says %s, the decision space %s", tg.Label(), res[0].Verdict, got.Decision)
		}
		// So does explain naming the backend instead of the route.
		if res, err = e.sim.Explain(explain.Full, e.Request(tg, e.Identities[0].Caller, op)); err != nil {
			t.Fatal(err)
		}
		if res[0].Verdict != w.Decision || res[0].DecidedBy != w.DecidedBy {
			t.Errorf("%s, backend named: explain says %s by %s, want %s by %s", tg.Label(), res[0].Verdict, res[0].DecidedBy, w.Decision, w.DecidedBy)
		}
	}
	if seen != 2 {
		t.Errorf("%d targets, want 2", seen)
	}
}
