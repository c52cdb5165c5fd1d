package authpolicy

import (
	"reflect"
	"testing"

	"github.com/agpol/agpol/internal/topology"
)

// TestV1beta2DecidesIdentity: a v1beta2 policy's AuthConfig decides a request that
// carries an identity as a v1 one does, with apiKey Secrets looked up in the policy's
// own namespace (kuadrant-operator v0.6.1 writes the AuthConfig there), not Kuadrant's.
func TestV1beta2DecidesIdentity(t *testing.T) {
	secrets := `
---
apiVersion: v1
kind: Secret
metadata: {name: bob-key, namespace: app, labels: {app: toystore}}
stringData: {api_key: IAMBOB}
---
apiVersion: v1
kind: Secret
metadata: {name: alice-key, namespace: kuadrant-system, labels: {app: toystore}}
stringData: {api_key: IAMALICE}
`
	r := ComputeV1beta2(topology.BuildGraph(load(t, v1beta2RouteKeys+secrets)))
	for _, tc := range []struct {
		secret, verdict string
		code            int
		why             Why // the authentication rule's result
	}{
		{"app/bob-key", OutcomeAllow, 200, Why{Code: WhyAuthnAPIKey, Secret: "app/bob-key"}},
		{"kuadrant-system/alice-key", OutcomeDeny, 401, Why{Code: WhyAuthnKeyOutOfScope, Secret: "kuadrant-system/alice-key", Namespace: "kuadrant-system", Scope: "app", PolicyNamespace: true}},
	} {
		req := Request{Method: "GET", Host: "api.toystore.com", Path: "/admin", Headers: map[string]string{},
			Identity: &Identity{APIKey: &APIKeyIdentity{Secret: tc.secret}}}
		d := r.ForRequest("infra/istio-ingressgateway", "app/toystore", req)
		if d == nil || d.Evaluation == nil || d.Evaluation.Outcome == nil {
			t.Fatalf("%s: no outcome: %+v", tc.secret, d)
		}
		o := d.Evaluation.Outcome
		var got *Why
		switch {
		case o.Why.Authn != nil:
			got = o.Why.Authn
		case len(o.Why.Parts) == 1:
			got = &o.Why.Parts[0].Why
		}
		if o.Verdict != tc.verdict || o.Code != tc.code || got == nil || !reflect.DeepEqual(*got, tc.why) {
			t.Errorf("%s: %s %d: %+v\nwant %s %d with %+v", tc.secret, o.Verdict, o.Code, o.Why, tc.verdict, tc.code, tc.why)
		}
	}
}

// v1beta2RouteKeys is the kuadrant-operator v0.6.1 doc's example (testdata/authpolicy/
// v1beta2/target-httproute): API keys on the route's /admin rule.
const v1beta2RouteKeys = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: istio-ingressgateway, namespace: infra}
spec:
  gatewayClassName: istio
  listeners:
  - {name: api, protocol: HTTP, port: 80, hostname: "*.toystore.com", allowedRoutes: {namespaces: {from: All}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: toystore, namespace: app}
spec:
  parentRefs: [{name: istio-ingressgateway, namespace: infra}]
  hostnames: [api.toystore.com]
  rules:
  - matches: [{path: {type: PathPrefix, value: /toys}}]
    backendRefs: [{name: toystore, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /admin}}]
    backendRefs: [{name: toystore, port: 80}]
---
# The doc's example: an AuthPolicy that targets an HTTPRoute.
apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: my-route-auth, namespace: app}
spec:
  targetRef:
    group: gateway.networking.k8s.io
    kind: HTTPRoute
    name: toystore
  routeSelectors:
  - matches:
    - path:
        type: PathPrefix
        value: "/admin"
  rules:
    authentication:
      "api-key-users":
        apiKey:
          selector:
            matchLabels: {app: toystore}
        credentials:
          authorizationHeader: {prefix: APIKEY}
`
