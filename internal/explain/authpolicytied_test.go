package explain

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/model"
)

// tiedTopology: one HTTPRoute on both listeners of an Istio Gateway; listener http lets
// any valid token through, listener admin only the subject admin.
const tiedTopology = `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge, namespace: infra}
spec:
  gatewayClassName: istio
  listeners:
  - {name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}
  - {name: admin, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mcp, namespace: tools}
spec:
  parentRefs: [{name: edge, namespace: infra}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /mcp}}]
    backendRefs: [{name: mcp, port: 80}]
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: any-user, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: edge, sectionName: http}
  rules:
    authentication:
      users: {jwt: {issuerUrl: "https://idp.example.com"}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: admins-only, namespace: infra}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: edge, sectionName: admin}
  rules:
    authentication:
      users: {jwt: {issuerUrl: "https://idp.example.com"}}
    authorization:
      admins:
        patternMatching:
          patterns: [{selector: auth.identity.sub, operator: eq, value: admin}]`

// TestTiedAuthPolicies: the wasm-shim may run either listener's AuthConfig for a request
// on the route (their action sets tie in kuadrant-operator's order). The same verdict
// under both stands, with a step saying so; different verdicts are indeterminate, naming
// what each answers, traced or not.
func TestTiedAuthPolicies(t *testing.T) {
	sim := New(model.New(loadYAML(t, tiedTopology)), []effective.Semantics{effective.Reference()}, "")
	request := func(listener, sub string) *Request {
		return &Request{From: Caller{Kind: CallerAnonymous}, Gateway: &NamespacedName{Namespace: "infra", Name: "edge"}, Listener: listener,
			HTTP:        HTTP{Method: "POST", Path: "/mcp", Host: "mcp.example.com", Time: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)},
			Credentials: &Credentials{Identity: &authpolicy.Identity{JWT: &authpolicy.JWTIdentity{Claims: map[string]any{"sub": sub, "exp": float64(1800000000)}}}}}
	}
	for _, tt := range []struct {
		name, listener, sub string
		verdict, event      string
		answers             string
	}{
		{"answers differ", "http", "alice", Indeterminate, CauseAuthPolicyTied, "http:allow admin:deny/403"},
		{"answers differ, the other listener", "admin", "alice", Indeterminate, CauseAuthPolicyTied, "admin:deny/403 http:allow"},
		{"same answer", "http", "admin", Allow, EventAuthPolicyTiedSame, "http:allow admin:allow"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, o := range []Options{Full, {AuthPolicy: true}} {
				res, err := sim.Explain(o, request(tt.listener, tt.sub))
				if err != nil || len(res) != 1 {
					t.Fatalf("Explain: %v %v", res, err)
				}
				d := res[0].Decision
				if d.Verdict != tt.verdict || d.Level != LevelAuthPolicy {
					t.Errorf("traced %v: %s at %s, want %s at %s", o.Trace, d.Verdict, d.Level, tt.verdict, LevelAuthPolicy)
				}
				if ap := res[0].AuthPolicy; ap == nil || len(ap.Tied) != 1 || !ap.Decides {
					t.Errorf("traced %v: authPolicy %+v, want one tied path and decides", o.Trace, ap)
				}
				if !o.Trace {
					continue
				}
				last := d.Trace[len(d.Trace)-1]
				if last.Event != tt.event || last.AuthPolicy == nil {
					t.Fatalf("last step %+v, want %s", last, tt.event)
				}
				var got []string
				for _, a := range last.AuthPolicy.Tied {
					s := a.Path[strings.LastIndex(a.Path, "listener ")+len("listener "):]
					s = s[:strings.Index(s, " ")] + ":" + a.Verdict
					if a.Code != 0 {
						s += "/" + strconv.Itoa(a.Code)
					}
					got = append(got, s)
				}
				if strings.Join(got, " ") != tt.answers {
					t.Errorf("answers %v, want %s", got, tt.answers)
				}
				if tt.event == CauseAuthPolicyTied && (d.Cause == nil || d.Cause.Event != tt.event || d.Cause.AuthPolicy != last.AuthPolicy) {
					t.Errorf("cause %+v, want %s with the last step's data", d.Cause, tt.event)
				}
			}
		})
	}
}

// TestNoTieOnOneListener: the route on one listener has no tied action set, and the
// answer is its AuthPolicy's alone.
func TestNoTieOnOneListener(t *testing.T) {
	in := strings.Replace(tiedTopology, "parentRefs: [{name: edge, namespace: infra}]", "parentRefs: [{name: edge, namespace: infra, sectionName: http}]", 1)
	sim := New(model.New(loadYAML(t, in)), []effective.Semantics{effective.Reference()}, "")
	res, err := sim.Explain(Full, &Request{From: Caller{Kind: CallerAnonymous}, Gateway: &NamespacedName{Namespace: "infra", Name: "edge"}, Listener: "http",
		HTTP:        HTTP{Method: "POST", Path: "/mcp", Host: "mcp.example.com", Time: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)},
		Credentials: &Credentials{Identity: &authpolicy.Identity{JWT: &authpolicy.JWTIdentity{Claims: map[string]any{"sub": "alice", "exp": float64(1800000000)}}}}})
	if err != nil || len(res) != 1 {
		t.Fatalf("Explain: %v %v", res, err)
	}
	if d := res[0].Decision; d.Verdict != Allow || res[0].AuthPolicy == nil || len(res[0].AuthPolicy.Tied) != 0 {
		t.Errorf("%s, authPolicy %+v: want allow, no tie", d.Verdict, res[0].AuthPolicy)
	}
}
