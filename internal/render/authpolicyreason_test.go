package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/topology"
)

// TestAuthPolicyReasonText writes the sentence of every authpolicy.Reason code: a code
// without a sentence here (the "not in force: CODE" fallback) fails.
func TestAuthPolicyReasonText(t *testing.T) {
	istio := topology.GatewayDataPlane{DataPlane: topology.DataPlaneAgentic, From: topology.PlaneFromController, Class: "agentic", Controller: topology.AgenticControllerName}
	want := map[string]struct {
		r    authpolicy.Reason
		text string
	}{
		authpolicy.ReasonInvalid:         {authpolicy.Reason{Message: "spec: Invalid value: x"}, "spec: Invalid value: x"},
		authpolicy.ReasonCondition:       {authpolicy.Reason{Message: "HTTPRoute app/r not found"}, "HTTPRoute app/r not found"},
		authpolicy.ReasonNoGateway:       {authpolicy.Reason{Ref: "infra/gw"}, "no Gateway infra/gw in the input"},
		authpolicy.ReasonNoListener:      {authpolicy.Reason{Ref: "infra/gw", Section: "https"}, `Gateway infra/gw has no listener "https"`},
		authpolicy.ReasonNoRoute:         {authpolicy.Reason{Ref: "app/r"}, "no HTTPRoute app/r in the input"},
		authpolicy.ReasonNoRule:          {authpolicy.Reason{Ref: "app/r", Section: "mcp"}, `HTTPRoute app/r has no rule "mcp"`},
		authpolicy.ReasonGRPCRoute:       {authpolicy.Reason{Ref: "app/g"}, "GRPCRoute app/g: agpol does not read GRPCRoutes"},
		authpolicy.ReasonUnsupportedKind: {authpolicy.Reason{Kind: "Service"}, "unsupported target kind Service"},
		authpolicy.ReasonUnprogrammed: {authpolicy.Reason{Ref: "infra/gw", DataPlane: istio},
			"Kuadrant programs AuthPolicies only on Istio and Envoy Gateway Gateways, not on Gateway infra/gw (data plane agentic: GatewayClass agentic names controller sigs.k8s.io/kube-agentic-networking-controller)"},
		authpolicy.ReasonUnprogrammedV1beta2: {authpolicy.Reason{Ref: "infra/gw", DataPlane: istio},
			"kuadrant-operator v0.6.1 programs AuthPolicies only on Istio Gateways (an Istio AuthorizationPolicy sends their requests to Authorino), not on Gateway infra/gw (data plane agentic: GatewayClass agentic names controller sigs.k8s.io/kube-agentic-networking-controller)"},
		authpolicy.ReasonListenerHostname: {authpolicy.Reason{Host: "a.example.com", Hosts: []string{"b.example.com", "c.example.com"}},
			"listener hostname a.example.com accepts none of the route's hostnames (b.example.com, c.example.com)"},
		authpolicy.ReasonHostClaimed: {authpolicy.Reason{Host: "a.example.com", Policy: "app/old"}, "host a.example.com is claimed by the older AuthPolicy app/old: Authorino does not link it"},
		authpolicy.ReasonNoHostname:  {authpolicy.Reason{}, "neither the route nor its Gateways' listeners name a hostname: the AuthConfig has no host, and Authorino finds it for no request"},
	}
	for _, code := range authpolicy.ReasonCodes {
		w, ok := want[code]
		if !ok {
			t.Errorf("code %q: no case in this test", code)
			continue
		}
		w.r.Code = code
		got := AuthPolicyReasonText(w.r)
		if strings.HasPrefix(got, "not in force: ") {
			t.Errorf("code %q has no sentence in render", code)
		} else if got != w.text {
			t.Errorf("code %q: %q, want %q", code, got, w.text)
		}
	}
	if len(want) != len(authpolicy.ReasonCodes) {
		t.Errorf("%d cases, %d codes", len(want), len(authpolicy.ReasonCodes))
	}
}

// TestV1beta2FoundText writes how a request's v1beta2 AuthPolicy was found, for every
// Found code and where Authorino finds the host.
func TestV1beta2FoundText(t *testing.T) {
	claimed := authpolicy.Reason{Code: authpolicy.ReasonHostClaimed, Host: "a.example.com", Policy: "app/old"}
	for _, c := range []struct {
		d    authpolicy.V1beta2Decision
		text string
	}{
		{authpolicy.V1beta2Decision{Found: authpolicy.FoundRoutePolicy, Route: "app/r", CheckedBy: "app/p", Host: "a.example.com", AuthConfig: "app/p", HostKey: "a.example.com"},
			"HTTPRoute app/r has the AuthPolicy app/p"},
		{authpolicy.V1beta2Decision{Found: authpolicy.FoundRouteNotEnforced, Route: "app/r", CheckedBy: "app/p", NotEnforced: []authpolicy.Reason{claimed}},
			"HTTPRoute app/r has the AuthPolicy app/p, which is not enforced (host a.example.com is claimed by the older AuthPolicy app/old: Authorino does not link it): it configures no check"},
		{authpolicy.V1beta2Decision{Found: authpolicy.FoundGatewayPolicy, Route: "app/r", CheckedBy: "infra/g"},
			"HTTPRoute app/r has no AuthPolicy of its own: the Gateway's AuthPolicy infra/g covers it; the request's host is not known, so which AuthConfig Authorino uses cannot be known"},
		{authpolicy.V1beta2Decision{Found: authpolicy.FoundRoutePolicy, Route: "app/r", CheckedBy: "app/p", Host: "x.example.com", NotFound: true, Unindexed: true},
			"HTTPRoute app/r has the AuthPolicy app/p; no AuthConfig holds host x.example.com: Authorino answers NOT_FOUND"},
		{authpolicy.V1beta2Decision{Found: authpolicy.FoundRoutePolicy, Route: "app/r", CheckedBy: "app/p", Host: "a.example.com", AuthConfig: "app/old", HostKey: "*.example.com"},
			"HTTPRoute app/r has the AuthPolicy app/p; Authorino finds host a.example.com under *.example.com in the AuthConfig of app/old"},
	} {
		if got := V1beta2FoundText(&c.d); got != c.text {
			t.Errorf("%s: %q, want %q", c.d.Found, got, c.text)
		}
	}
}
