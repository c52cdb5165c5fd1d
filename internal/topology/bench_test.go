package topology

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
)

// syntheticSnapshot builds a gateway with an HTTPS wildcard listener and nRoutes
// routes, each on its own host with rules mixing prefix, exact, header and regex matches.
func syntheticSnapshot(nRoutes int) *snapshot.Snapshot {
	s := &snapshot.Snapshot{Complete: true}
	all := gwapiv1.NamespacesFromAll
	host := gwapiv1.Hostname("*.bench.example.com")
	s.Gateways = append(s.Gateways, &snapshot.Gateway{Gateway: gwapiv1.Gateway{
		ObjectMeta: metav1.ObjectMeta{Name: "gw", Namespace: "infra"},
		Spec: gwapiv1.GatewaySpec{Listeners: []gwapiv1.Listener{
			{Name: "https", Protocol: gwapiv1.HTTPSProtocolType, Port: 443, Hostname: &host,
				AllowedRoutes: &gwapiv1.AllowedRoutes{Namespaces: &gwapiv1.RouteNamespaces{From: &all}}},
			{Name: "http", Protocol: gwapiv1.HTTPProtocolType, Port: 80,
				AllowedRoutes: &gwapiv1.AllowedRoutes{Namespaces: &gwapiv1.RouteNamespaces{From: &all}}},
		}},
	}})
	ptr := func(s string) *string { return &s }
	prefix, exact, regex := gwapiv1.PathMatchPathPrefix, gwapiv1.PathMatchExact, gwapiv1.PathMatchRegularExpression
	xbKind, xbGroup := gwapiv1.Kind("XBackend"), gwapiv1.Group("agentic.networking.x-k8s.io")
	ns := gwapiv1.Namespace("infra")
	for i := 0; i < nRoutes; i++ {
		name := fmt.Sprintf("r%03d", i)
		backend := []gwapiv1.HTTPBackendRef{{BackendRef: gwapiv1.BackendRef{BackendObjectReference: gwapiv1.BackendObjectReference{
			Group: &xbGroup, Kind: &xbKind, Name: gwapiv1.ObjectName(name)}}}}
		rules := []gwapiv1.HTTPRouteRule{
			{Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: &exact, Value: ptr("/mcp/exact")}}}, BackendRefs: backend},
			{Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: &prefix, Value: ptr("/mcp")},
				Headers: []gwapiv1.HTTPHeaderMatch{{Name: "x-tenant", Value: "a"}}}}, BackendRefs: backend},
			{Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: &regex, Value: ptr("/v[0-9]+/tools")}}}, BackendRefs: backend},
			{Matches: []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: &prefix, Value: ptr("/mcp")}}}, BackendRefs: backend},
			{BackendRefs: backend},
		}
		s.HTTPRoutes = append(s.HTTPRoutes, &snapshot.HTTPRoute{HTTPRoute: gwapiv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "app"},
			Spec: gwapiv1.HTTPRouteSpec{
				CommonRouteSpec: gwapiv1.CommonRouteSpec{ParentRefs: []gwapiv1.ParentReference{{Name: "gw", Namespace: &ns}}},
				Hostnames:       []gwapiv1.Hostname{gwapiv1.Hostname(name + ".bench.example.com")},
				Rules:           rules,
			},
		}})
	}
	return s
}

func TestSyntheticGraph(t *testing.T) {
	g := BuildGraph(syntheticSnapshot(50))
	res, err := g.Route(RouteRequest{Gateway: GatewayRef("infra", "gw"), Host: "r007.bench.example.com", Path: "/v2/tools", Method: "POST"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Listener != "https" || res.Route == nil || res.Route.Name != "r007" || res.RuleIndex != 2 {
		t.Fatalf("result = %+v", res)
	}
	if len(res.Backends) != 1 || res.Backends[0].Problem == nil {
		t.Errorf("backends = %+v (XBackend app/r007 does not exist)", res.Backends)
	}
	if n := len(g.Paths(GatewayRef("infra", "gw"))); n != 50*2*5 {
		t.Errorf("%d paths, want %d", n, 50*2*5)
	}
}

func BenchmarkRoute(b *testing.B) {
	g := BuildGraph(syntheticSnapshot(200))
	gw := GatewayRef("infra", "gw")
	hdr := map[string]string{"x-tenant": "a", "content-type": "application/json"}
	reqs := make([]RouteRequest, 0, 64)
	for i := 0; i < 64; i++ {
		paths := []string{"/mcp/exact", "/mcp/session", "/v12/tools", "/other?q=1", "/mcp"}
		reqs = append(reqs, RouteRequest{Gateway: gw, Host: fmt.Sprintf("r%03d.bench.example.com", (i*37)%200),
			Path: paths[i%len(paths)], Method: "POST", Headers: hdr})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := g.Route(reqs[i%len(reqs)])
		if err != nil || res.Route == nil {
			b.Fatalf("no route: %v %+v", err, res)
		}
	}
}

func BenchmarkBuildGraph(b *testing.B) {
	s := syntheticSnapshot(200)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		BuildGraph(s)
	}
}

func TestEmptyGraph(t *testing.T) {
	for _, s := range []*snapshot.Snapshot{nil, {}} {
		g := BuildGraph(s)
		if _, err := g.Route(RouteRequest{Gateway: GatewayRef("a", "b")}); err == nil {
			t.Error("route through a missing gateway: no error")
		}
		if g.Paths(GatewayRef("a", "b")) != nil || g.Attachments(GatewayRef("a", "b")) != nil || len(g.Problems()) != 0 || len(g.Gateways()) != 0 {
			t.Error("empty graph is not empty")
		}
	}
}
