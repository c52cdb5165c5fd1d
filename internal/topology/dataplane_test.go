package topology

import (
	"reflect"
	"testing"
)

func TestClassifyGateways(t *testing.T) {
	s := loadPartial(t, "dataplanes.yaml")
	cases := []struct {
		gateway string
		config  map[string]string
		want    DataPlane
		assumed bool
		from    string
		ctrl    string
		hint    *Ref
		why     string
	}{
		{gateway: "agentic", want: DataPlaneAgentic, from: PlaneFromController, ctrl: AgenticControllerName},
		{gateway: "istio", want: DataPlaneIstio, from: PlaneFromController, ctrl: "istio.io/gateway-controller"},
		{gateway: "eg", want: DataPlaneEnvoyGateway, from: PlaneFromController, ctrl: "gateway.envoyproxy.io/gatewayclass-controller"},
		{gateway: "acme", want: DataPlaneGatewayAPI, from: PlaneFromUnknownController, ctrl: "example.com/acme-gateway"},
		{gateway: "unclassed", want: DataPlaneGatewayAPI, assumed: true, from: PlaneFromDefault},
		{gateway: "hinted", want: DataPlaneAgentic, assumed: true, from: PlaneFromHint, hint: &Ref{Group: "gateway.networking.k8s.io", Kind: "HTTPRoute", Namespace: "app", Name: "hint"}},
		{gateway: "acme", config: map[string]string{"acme": "agentic"}, want: DataPlaneAgentic, from: PlaneFromConfig},
		{gateway: "unclassed", config: map[string]string{"missing": "istio"}, want: DataPlaneIstio, from: PlaneFromConfig},
	}
	for _, tt := range cases {
		t.Run(tt.gateway, func(t *testing.T) {
			s.ClassDataPlanes = tt.config
			defer func() { s.ClassDataPlanes = nil }()
			planes := ClassifyGateways(s)
			for gw, got := range planes {
				if gw.Name != tt.gateway {
					continue
				}
				if got.DataPlane != tt.want || got.Assumed != tt.assumed || got.Why != "" {
					t.Errorf("got %+v, want %s (assumed %v), no text (render writes it)", got, tt.want, tt.assumed)
				}
				if got.From != tt.from || got.Controller != tt.ctrl || got.Class != string(gw.Spec.GatewayClassName) ||
					(got.Hint == nil) != (tt.hint == nil) || (got.Hint != nil && *got.Hint != *tt.hint) {
					t.Errorf("got from %q, class %q, controller %q, hint %v; want from %q, controller %q, hint %v",
						got.From, got.Class, got.Controller, got.Hint, tt.from, tt.ctrl, tt.hint)
				}
				return
			}
			t.Fatalf("gateway %s not classified", tt.gateway)
		})
	}
}

// TestRoutingOnOtherDataPlanes routes one request shape on Gateways of each data plane.
func TestRoutingOnOtherDataPlanes(t *testing.T) {
	g := BuildGraph(loadPartial(t, "dataplanes.yaml"))
	hostname := Ref{Group: "networking.istio.io", Kind: "Hostname", Namespace: "app", Name: "api.example.com"}
	type want struct {
		rule, kind string
		problem    *BackendProblem
		assumed    Assumption
		ignored    string
	}
	cases := []struct {
		gateway, method, path string
		want                  want
	}{
		// A method match: the reference data plane passes over it, the others check it.
		{"agentic", "POST", "/m", want{rule: "get-only", kind: BackendService, ignored: "GET"}},
		{"istio", "POST", "/m", want{rule: "fallback", kind: BackendService}},
		{"istio", "GET", "/m", want{rule: "get-only", kind: BackendService}},
		{"acme", "POST", "/m", want{rule: "fallback", kind: BackendService}},
		// Istio's Hostname kind: unsupported on the reference data plane only.
		{"agentic", "GET", "/hostname", want{rule: "hostname", kind: BackendUnsupported, problem: &BackendProblem{Why: BrokenKindUnsupported, Ref: hostname}}},
		{"istio", "GET", "/hostname", want{rule: "hostname", kind: BackendOther}},
		{"eg", "GET", "/hostname", want{rule: "hostname", kind: BackendUnsupported, problem: &BackendProblem{Why: BrokenKindUnsupported, Ref: hostname}}},
		{"eg", "GET", "/eg", want{rule: "eg-backend", kind: BackendOther}},
		{"acme", "GET", "/hostname", want{rule: "hostname", kind: BackendOther, assumed: Assumption{Why: AssumedKindSupported, Ref: Ref{Group: "networking.istio.io", Kind: "Hostname"}, DataPlane: DataPlaneGatewayAPI}}},
		// XBackends exist only on the reference data plane.
		{"agentic", "GET", "/x", want{rule: "xbackend", kind: BackendXBackend, assumed: Assumption{Why: AssumedXBackend, Ref: XBackendRef("app", "mcp")}}},
		{"istio", "GET", "/x", want{rule: "xbackend", kind: BackendUnsupported, problem: &BackendProblem{Why: BrokenXBackendKind, Ref: Ref{Group: "agentic.networking.x-k8s.io", Kind: "XBackend", Namespace: "app", Name: "mcp"}, DataPlane: DataPlaneIstio}}},
	}
	for _, tt := range cases {
		t.Run(tt.gateway+" "+tt.method+" "+tt.path, func(t *testing.T) {
			res, err := g.Route(RouteRequest{Gateway: GatewayRef("infra", tt.gateway), Method: tt.method, Path: tt.path, Host: "h.example.com"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Route == nil {
				t.Fatalf("no route: %+v", res.Miss)
			}
			if res.RuleName != tt.want.rule || res.IgnoredMethod != tt.want.ignored {
				t.Fatalf("rule %q ignored method %q, want %q %q", res.RuleName, res.IgnoredMethod, tt.want.rule, tt.want.ignored)
			}
			if len(res.Backends) != 1 {
				t.Fatalf("backends = %+v", res.Backends)
			}
			b := res.Backends[0]
			if b.Kind != tt.want.kind || !reflect.DeepEqual(b.Problem, tt.want.problem) || b.Assumed != tt.want.assumed {
				t.Errorf("backend %+v (problem %+v), want kind %s problem %+v assumed %+v", b, b.Problem, tt.want.kind, tt.want.problem, tt.want.assumed)
			}
			if (tt.want.problem == nil) != (res.RuleProblem == nil) {
				t.Errorf("rule problem %+v, want one: %v", res.RuleProblem, tt.want.problem != nil)
			}
		})
	}
}
