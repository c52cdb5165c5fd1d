package topology

import (
	"fmt"
	"strings"
	"testing"
)

func TestListenerSets(t *testing.T) {
	g := loadGraph(t, "listenersets.yaml")
	gw := GatewayRef("infra", "gw")
	runRouteCases(t, g, []routeCase{
		{name: "a ListenerSet's listener takes the routes attached to its ListenerSet", req: RouteRequest{Gateway: gw, Host: "a.example.com", Path: "/"},
			listener: "infra/extra/a", route: "infra/on-set", routeListener: "infra/extra/a"},
		{name: "the Gateway's listener takes the routes attached to the Gateway", req: RouteRequest{Gateway: gw, Host: "main.example.com", Path: "/"},
			listener: "main", route: "infra/on-gateway"},
		{name: "a ListenerSet the Gateway does not allow adds no listener", req: RouteRequest{Gateway: gw, Host: "b.example.com", Path: "/"},
			miss: &RouteMiss{Why: MissNoListener, Gateway: gw, Host: "b.example.com"}},
		{name: "the reference data plane reads no ListenerSets", req: RouteRequest{Gateway: GatewayRef("infra", "ref"), Host: "c.example.com", Path: "/"},
			miss: &RouteMiss{Why: MissNoListener, Gateway: GatewayRef("infra", "ref"), Host: "c.example.com"}},
	})
	want := map[string]string{
		"infra/extra":   "Accepted",
		"infra/on-ref":  "NotSupported Why=agentic",
		"other/foreign": "NotAllowed Why=from-same",
	}
	for _, st := range g.ListenerSetStatuses() {
		k := st.ListenerSet.Namespace + "/" + st.ListenerSet.Name
		got := st.Reason
		if st.Miss != nil {
			got += " " + setFields(*st.Miss)
		}
		if got != want[k] {
			t.Errorf("%s: %q, want %q", k, got, want[k])
		}
		// Only extra's clash listener is Conflicted (with the Gateway's own "main").
		var conflicted []string
		for name, why := range st.Conflicts {
			conflicted = append(conflicted, name+": "+setFields(*why))
		}
		wantConflicted := 0
		if k == "infra/extra" {
			wantConflicted = 1
		}
		if len(conflicted) != wantConflicted || (wantConflicted == 1 && fmt.Sprint(conflicted) != "[clash: Why=set-hostname-conflict Port=80 Other=main Host=main.example.com]") {
			t.Errorf("%s: conflicts %v, want %d (clash: HostnameConflict)", k, conflicted, wantConflicted)
		}
	}
	// Each listener of extra as the Gateway takes it: a carries the route attached to
	// the ListenerSet, clash is Conflicted (HostnameConflict) and carries none.
	var got []string
	for _, sl := range g.ListenerSetListeners(gw) {
		got = append(got, fmt.Sprintf("%s routes=%d conflict=%s programmed=%t", sl.Name, sl.AttachedRoutes, sl.ConflictReason, sl.NotProgrammed == nil))
	}
	if want := "[infra/extra/a routes=1 conflict= programmed=true infra/extra/clash routes=0 conflict=HostnameConflict programmed=false]"; fmt.Sprint(got) != want {
		t.Errorf("ListenerSetListeners: %v, want %s", got, want)
	}
	// The conflicting listener yields to the Gateway's own, which keeps its routes.
	var clash string
	for _, a := range g.Attachments(gw) {
		if a.Listener == "infra/extra/clash" {
			clash = attachWhy(a)
		}
	}
	if !strings.Contains(clash, "ListenerNotProgrammed Why=listener-not-programmed NotProgrammed={Why=set-hostname-conflict") {
		t.Errorf("clash listener: %q, want a HostnameConflict", clash)
	}
}
