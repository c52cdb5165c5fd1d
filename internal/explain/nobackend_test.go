package explain

import (
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/topology"
)

// A rule the data plane answers 500 for: the path line ends short, and the reason is said
// once in the trace, at the step that decides (and in the headline that step gives).
func TestNoBackendReasonSaidOnce(t *testing.T) {
	s := loadYAML(t, `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: x}
spec: {controllerName: sigs.k8s.io/kube-agentic-networking-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: x
  listeners:
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - backendRefs: [{group: example.com, kind: Foo, name: api}]`)
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	r := &Request{Name: "r", From: Caller{Kind: CallerAnonymous}, Gateway: &NamespacedName{Namespace: "infra", Name: "gw"},
		HTTP: HTTP{Method: "GET", Path: "/", Host: "api.example.com"}}
	res, err := sim.Explain(Full, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Verdict != Deny || res[0].DecidedBy != DecidedNoBackend {
		t.Fatalf("results %+v, want one deny by %s", *res[0], DecidedNoBackend)
	}
	d := res[0]
	if d.Path.NoBackend != topology.NoBackendRule || d.Path.Problem != "" {
		t.Errorf("path: no backend %q, problem %q; want %q as data, no text", d.Path.NoBackend, d.Path.Problem, topology.NoBackendRule)
	}
	if d.Cause == nil || d.Cause.NoBackend == nil {
		t.Fatalf("cause %+v, want the refusal's why as data", d.Cause)
	}
	nb := d.Cause.NoBackend
	if d.Cause.Event != CauseRefused || nb.Why != topology.NoBackendRule ||
		nb.Rule == nil || nb.Rule.Backend == nil || nb.Rule.Backend.Why != topology.BrokenKindUnsupported || nb.Rule.Backend.Ref.Kind != "Foo" ||
		nb.Problem != "" || d.Cause.Before != BeforeAllowed {
		t.Fatalf("cause %+v, want the refusal by the backendRef's problem after the gateway allowed", d.Cause)
	}
	events := map[string]int{}
	for _, st := range d.Trace {
		events[st.Event]++
	}
	last := d.Trace[len(d.Trace)-1]
	if events[EventNoBackendSeeLast] != 1 || events[EventNoBackend] != 0 || events[EventRefused] != 1 ||
		last.Event != EventRefused || last.NoBackend != nb {
		t.Errorf("the trace states the reason other than once, in the last step: %+v", d.Trace)
	}

}
