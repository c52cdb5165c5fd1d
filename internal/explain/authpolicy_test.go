package explain

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/model"
)

const kuadrantTopology = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: x
  listeners:
  - {name: https, protocol: HTTPS, port: 443, tls: {mode: Terminate, certificateRefs: [{name: c}]}, allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: infra}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /admin}}]
    backendRefs: [{name: admin, port: 80}]
  - backendRefs: [{name: api, port: 80}]`

const kuadrantPolicies = `
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: gw-keys, namespace: infra, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Gateway, name: gw}
  defaults:
    strategy: merge
    rules:
      authentication:
        api-key:
          apiKey: {selector: {matchLabels: {app: api}}}
          credentials: {customHeader: {name: X-API-Key}}
---
apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: admin-jwt, namespace: app, creationTimestamp: "2026-01-02T00:00:00Z"}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: api, sectionName: rule-1}
  rules:
    authentication:
      admins:
        jwt: {issuerUrl: "https://idp.example.com"}`

// A request on a route rule with AuthPolicies carries, beside the decision, the effective
// AuthPolicy of its Kuadrant path and what it asks. Kuadrant calls unnamed rules rule-N
// (1-based); the answer names them as its path line does, by spec.rules index.
func TestExplainReportsEffectiveAuthPolicy(t *testing.T) {
	s := loadYAML(t, kuadrantTopology, kuadrantPolicies)
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	cases := []struct {
		path       string
		wantPath   string
		wantSource map[string]string // authentication rule → source
	}{
		{"/admin/users", "route app/api[0]", map[string]string{"admins": "app/admin-jwt"}},
		{"/orders", "route app/api[1]", map[string]string{"api-key": "infra/gw-keys"}},
	}
	for _, c := range cases {
		r := &Request{Name: c.path, From: Caller{Kind: CallerAnonymous}, Gateway: &NamespacedName{Namespace: "infra", Name: "gw"},
			HTTP: HTTP{Method: "GET", Path: c.path, Host: "api.example.com"}}
		res, err := sim.Explain(Full, r)
		if err != nil {
			t.Fatal(err)
		}
		// The Gateway's class is not in the input and nothing agentic points at it: no
		// XAccessPolicy runs there, so the AuthPolicy decides, and its authentication
		// needs the request's credentials.
		if len(res) != 1 || res[0].Verdict != Indeterminate || res[0].Level != LevelAuthPolicy {
			t.Fatalf("%s: results %+v, want one indeterminate by the AuthPolicy", c.path, res)
		}
		ap := res[0].AuthPolicy
		if ap == nil || ap.Evaluation == nil || !ap.Decides {
			t.Fatalf("%s: AuthPolicy info %+v, want one that decides", c.path, ap)
		}
		if !strings.HasSuffix(ap.Path, c.wantPath) || strings.Contains(ap.Path, "rule-") {
			t.Errorf("%s: path %q, want it to end with %q", c.path, ap.Path, c.wantPath)
		}
		if want := "route " + res[0].Path.RouteRule(); !strings.HasSuffix(ap.Path, want) {
			t.Errorf("%s: AuthPolicy path %q names the rule otherwise than the path line (%q)", c.path, ap.Path, want)
		}
		got := map[string]string{}
		for _, rq := range ap.Evaluation.Authentication {
			got[rq.Name] = rq.Source
		}
		for name, src := range c.wantSource {
			if got[name] != src {
				t.Errorf("%s: authentication %s from %q, want %q (all: %v)", c.path, name, got[name], src, got)
			}
		}
		if ap.Evaluation.Applies == authpolicy.False {
			t.Errorf("%s: policy without when must apply", c.path)
		}
	}
}

// On the reference data plane the AuthPolicy is reported beside the access policies'
// decision, which it does not change.
func TestAuthPolicyBesideOnTheReferenceDataPlane(t *testing.T) {
	class := `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: ` + "agentic" + `}
spec: {controllerName: sigs.k8s.io/kube-agentic-networking-controller}`
	s := loadYAML(t, kuadrantTopology, kuadrantPolicies, class)
	for _, gw := range s.Gateways {
		gw.Spec.GatewayClassName = "agentic"
	}
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	res, err := sim.Explain(Full, &Request{From: Caller{Kind: CallerServiceAccount, Namespace: "app", Name: "a"}, Gateway: &NamespacedName{Namespace: "infra", Name: "gw"},
		HTTP: HTTP{Method: "GET", Path: "/orders", Host: "api.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Verdict != Allow || res[0].DecidedBy != DecidedNoPolicy {
		t.Fatalf("results %+v, want one allow by no-policy", res)
	}
	if ap := res[0].AuthPolicy; ap == nil || ap.Decides {
		t.Errorf("AuthPolicy = %+v, want one reported beside the decision", ap)
	}
}

// Without AuthPolicies nothing is computed or reported.
func TestExplainWithoutAuthPolicy(t *testing.T) {
	s := loadYAML(t, kuadrantTopology)
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	res, err := sim.Explain(Full, &Request{From: Caller{Kind: CallerAnonymous}, Gateway: &NamespacedName{Namespace: "infra", Name: "gw"},
		HTTP: HTTP{Method: "GET", Path: "/orders", Host: "api.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].AuthPolicy != nil {
		t.Errorf("AuthPolicy = %+v, want nil", res[0].AuthPolicy)
	}
}

// Where Kuadrant's AuthPolicy decides (a Gateway another data plane serves), the decision
// says why as data, and its last trace step says the same: explain writes no sentence.
func TestAuthPolicyDecidesAsData(t *testing.T) {
	class := "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: x}\nspec: {controllerName: istio.io/gateway-controller}"
	sim := New(model.New(loadYAML(t, kuadrantTopology, kuadrantPolicies, class)), []effective.Semantics{effective.Reference()}, "")
	gw := &NamespacedName{Namespace: "infra", Name: "gw"}
	for _, tt := range []struct {
		name  string
		req   *Request
		event string
		check func(a *AuthPolicyCause) bool
	}{
		{"credentials unknown", &Request{From: Caller{Kind: CallerAnonymous}, Gateway: gw, HTTP: HTTP{Method: "GET", Path: "/admin", Host: "api.example.com"}},
			CauseAuthPolicyUnknown, func(a *AuthPolicyCause) bool {
				return len(a.Unknown) == 1 && a.Unknown[0].What == UnknownAuthentication && strings.Join(a.Unknown[0].Rules, ",") == "admins,api-key"
			}},
		{"backend named", &Request{From: Caller{Kind: CallerAnonymous}, Gateway: gw, Service: &NamespacedName{Namespace: "app", Name: "admin"}, HTTP: HTTP{Method: "GET"}},
			CauseAuthPolicyUnevaluated, func(a *AuthPolicyCause) bool {
				return strings.Join(a.Policies, ",") == "app/admin-jwt,infra/gw-keys"
			}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := sim.Explain(Full, tt.req)
			if err != nil || len(res) != 1 {
				t.Fatalf("Explain: %v %v", res, err)
			}
			d := res[0].Decision
			if d.Verdict != Indeterminate || d.Level != LevelAuthPolicy || d.Reason != "" {
				t.Errorf("%s at %s, reason %q: want indeterminate at %s, no sentence", d.Verdict, d.Level, d.Reason, LevelAuthPolicy)
			}
			if d.Cause == nil || d.Cause.Event != tt.event || d.Cause.AuthPolicy == nil || !tt.check(d.Cause.AuthPolicy) {
				t.Fatalf("cause %+v (authPolicy %+v), want %s with its data", d.Cause, d.Cause.AuthPolicy, tt.event)
			}
			last := d.Trace[len(d.Trace)-1]
			if last.Event != tt.event || last.AuthPolicy != d.Cause.AuthPolicy || last.Reason != "" {
				t.Errorf("last step %+v, want event %s with the cause's data", last, tt.event)
			}
		})
	}
}
