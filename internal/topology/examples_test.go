package topology

import (
	"testing"
)

// The repository's example scenario (testdata/examples at the module root) routes as
// its comments promise.
func TestExamplesRouting(t *testing.T) {
	g := loadGraph(t, "../../../testdata/examples")
	edge := GatewayRef("infra", "edge")
	tests := []struct {
		name         string
		req          RouteRequest
		wantListener string
		wantRoute    string // ns/name, "" for none
		wantRule     string
		wantBackend  Ref
		wantMiss     string // Miss.Why, when no route
	}{
		{
			name:         "ledger over https",
			req:          RouteRequest{Gateway: edge, Host: "ledger.mcp.example.com", Path: "/mcp", Method: "POST"},
			wantListener: "https", wantRoute: "pay/ledger", wantRule: "mcp",
			wantBackend: XBackendRef("pay", "ledger"),
		},
		{
			name:         "ledger sub path, host with port and upper case",
			req:          RouteRequest{Gateway: edge, Host: "Ledger.MCP.example.com:443", Path: "/mcp/session?x=1", Method: "POST"},
			wantListener: "https", wantRoute: "pay/ledger", wantRule: "mcp",
			wantBackend: XBackendRef("pay", "ledger"),
		},
		{
			name:         "ledger on the http listener: route is pinned to https",
			req:          RouteRequest{Gateway: edge, Listener: "http", Host: "ledger.mcp.example.com", Path: "/mcp", Method: "POST"},
			wantListener: "http", wantMiss: MissNoHost,
		},
		{
			name:         "ledger on port 80",
			req:          RouteRequest{Gateway: edge, Port: 80, Host: "ledger.mcp.example.com", Path: "/mcp", Method: "POST"},
			wantListener: "http", wantMiss: MissNoHost,
		},
		{
			name:         "calc",
			req:          RouteRequest{Gateway: edge, Host: "tools.mcp.example.com", Path: "/calc", Method: "POST"},
			wantListener: "https", wantRoute: "tools/tools", wantRule: "calc",
			wantBackend: XBackendRef("tools", "calc"),
		},
		{
			name:         "calc over http too (no sectionName)",
			req:          RouteRequest{Gateway: edge, Listener: "http", Host: "tools.mcp.example.com", Path: "/calc", Method: "POST"},
			wantListener: "http", wantRoute: "tools/tools", wantRule: "calc",
			wantBackend: XBackendRef("tools", "calc"),
		},
		{
			name:         "docs goes to a Service",
			req:          RouteRequest{Gateway: edge, Host: "tools.mcp.example.com", Path: "/docs", Method: "GET"},
			wantListener: "https", wantRoute: "tools/tools", wantRule: "docs",
			wantBackend: ServiceRef("tools", "docs-mcp"),
		},
		{
			name:         "prefix is segment-wise",
			req:          RouteRequest{Gateway: edge, Host: "tools.mcp.example.com", Path: "/calculator", Method: "POST"},
			wantListener: "https", wantMiss: MissNoRule,
		},
		{
			name:     "host outside the listeners",
			req:      RouteRequest{Gateway: edge, Host: "example.org", Path: "/mcp", Method: "POST"},
			wantMiss: MissNoListener,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := g.Route(tt.req)
			if err == nil && res.Listener != "" && res.Port != map[string]int{"https": 443, "http": 80}[res.Listener] {
				t.Errorf("port = %d for listener %s", res.Port, res.Listener)
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Listener != tt.wantListener {
				t.Errorf("listener = %q, want %q (miss %+v)", res.Listener, tt.wantListener, res.Miss)
			}
			if tt.wantRoute == "" {
				if res.Route != nil {
					t.Fatalf("route = %s/%s, want none", res.Route.Namespace, res.Route.Name)
				}
				if res.Miss == nil || res.Miss.Why != tt.wantMiss || res.Miss.Gateway != edge {
					t.Errorf("miss = %+v, want %s on %v", res.Miss, tt.wantMiss, edge)
				}
				return
			}
			if res.Route == nil {
				t.Fatalf("no route: %+v", res.Miss)
			}
			if got := res.Route.Namespace + "/" + res.Route.Name; got != tt.wantRoute {
				t.Errorf("route = %s, want %s", got, tt.wantRoute)
			}
			if res.RuleName != tt.wantRule {
				t.Errorf("rule = %q, want %q", res.RuleName, tt.wantRule)
			}
			if len(res.Backends) != 1 {
				t.Fatalf("backends = %+v, want one", res.Backends)
			}
			b := res.Backends[0]
			if b.Ref != tt.wantBackend {
				t.Errorf("backend = %v, want %v", b.Ref, tt.wantBackend)
			}
			if b.Problem != nil || res.RuleProblem != nil {
				t.Errorf("unexpected problem: %+v / %+v", b.Problem, res.RuleProblem)
			}
			switch b.Kind {
			case BackendXBackend:
				if b.XBackend == nil || b.XBackend.Name != tt.wantBackend.Name {
					t.Errorf("XBackend not resolved: %+v", b)
				}
			case BackendService:
				if b.Service == nil || b.Service.Name != tt.wantBackend.Name {
					t.Errorf("Service not resolved: %+v", b)
				}
			}
		})
	}
}

// A host no listener serves: a plain-HTTP port still takes the connection (gateway
// policies run, then 404); an HTTPS port does not (no filter chain for the SNI).
func TestExamplesUnknownHostByPort(t *testing.T) {
	g := loadGraph(t, "../../../testdata/examples")
	for _, tt := range []struct {
		port, wantPort int
		listener       string
	}{{80, 80, ""}, {443, 0, ""}, {0, 0, ""}, {0, 80, "http"}, {0, 0, "https"}} {
		res, err := g.Route(RouteRequest{Gateway: GatewayRef("infra", "edge"), Port: tt.port, Listener: tt.listener, Host: "example.org", Path: "/", Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Listener != "" || res.Route != nil || res.Port != tt.wantPort {
			t.Errorf("port %d listener %q: got listener %q port %d (%+v), want port %d", tt.port, tt.listener, res.Listener, res.Port, res.Miss, tt.wantPort)
		}
	}
}

func TestExamplesAttachments(t *testing.T) {
	g := loadGraph(t, "../../../testdata/examples")
	got := map[string]string{}
	for _, a := range g.Attachments(GatewayRef("infra", "edge")) {
		got[a.Listener+" "+a.Route.Namespace+"/"+a.Route.Name] = attachWhy(a)
	}
	want := map[string]string{
		"https pay/ledger":  "Accepted",
		"http pay/ledger":   "NoMatchingParent Why=section-name SectionName=https",
		"https tools/tools": "Accepted",
		"http tools/tools":  "Accepted",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: reason %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("attachments = %v, want %d", got, len(want))
	}
	if gws := g.GatewaysOfBackend(XBackendRef("pay", "ledger")); len(gws) != 1 || gws[0] != GatewayRef("infra", "edge") {
		t.Errorf("GatewaysOfBackend(pay/ledger) = %v", gws)
	}
	if p := g.Problems(); len(p) != 0 {
		t.Errorf("problems = %+v", p)
	}
}
