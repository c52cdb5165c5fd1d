package topology

import (
	"reflect"
	"strings"
	"testing"
)

func TestAttachments(t *testing.T) {
	g := loadGraph(t, "attach.yaml")
	type key struct{ gw, listener, route string }
	got := map[key]Attachment{}
	for _, gw := range []string{"gw", "conflict"} {
		for _, a := range g.Attachments(GatewayRef("infra", gw)) {
			k := key{gw, a.Listener, a.Route.Namespace + "/" + a.Route.Name}
			if _, dup := got[k]; dup {
				t.Errorf("duplicate attachment %v", k)
			}
			got[k] = a
		}
	}
	tests := []struct {
		key
		accepted  bool
		reason    string // substring of Reason
		parentRef int
		hostnames []string
	}{
		// allowedRoutes absent: Same namespace only.
		{key{"gw", "same", "infra/r-same"}, true, "Accepted", 0, []string{"same.example.com"}},
		{key{"gw", "same", "team-a/r-a"}, false, "NotAllowedByListeners: namespace team-a is not the gateway's namespace infra (allowedRoutes from Same)", 0, nil},
		// from All.
		{key{"gw", "all", "infra/r-same"}, true, "Accepted", 0, []string{"all.example.com"}},
		{key{"gw", "all", "team-a/r-a"}, true, "Accepted", 0, []string{"all.example.com"}},
		// from Selector: labels of the Namespace object; an absent Namespace has none.
		{key{"gw", "sel", "team-a/r-a"}, true, "Accepted", 0, []string{"sel.example.com"}},
		{key{"gw", "sel", "infra/r-same"}, false, "NotAllowedByListeners: namespace infra does not match the listener's selector env=prod", 0, nil},
		{key{"gw", "sel", "team-b/r-b"}, false, "NotAllowedByListeners: namespace team-b does not match", 0, nil},
		{key{"gw", "sel", "team-c/r-c"}, false, "NotAllowedByListeners: namespace team-c does not match", 0, nil},
		// from None.
		{key{"gw", "none", "infra/r-same"}, false, "NotAllowedByListeners: the listener allows no routes", 0, nil},
		// kinds: one unsupported kind leaves the listener without routes; HTTPRoute listed is fine.
		{key{"gw", "grpc-only", "team-a/r-a"}, false, "ListenerNotProgrammed: allowedRoutes.kinds lists GRPCRoute.gateway.networking.k8s.io", 0, nil},
		{key{"gw", "http-kind", "team-a/r-a"}, true, "Accepted", 0, []string{"*"}},
		{key{"gw", "tcp", "team-a/r-a"}, false, "ListenerNotProgrammed: listener protocol TCP carries no HTTPRoutes", 0, nil},
		{key{"gw", "https", "team-a/r-a"}, true, "Accepted", 0, []string{"*.example.com"}},
		// sectionName and port select listeners.
		{key{"gw", "https", "team-a/r-port"}, true, "Accepted", 0, []string{"api.example.com"}},
		{key{"gw", "all", "team-a/r-port"}, false, "NoMatchingParent: parentRef port 443 does not match listener port 80", -1, nil},
		{key{"gw", "same", "team-b/r-b"}, false, "NoMatchingParent: parentRef sectionName sel selects another listener", -1, nil},
		// hostname intersection: other.org fits neither listener; *.all.example.com narrows to
		// the exact listener name (as the reference does) and stays itself under *.example.com.
		{key{"gw", "all", "team-a/r-host"}, true, "Accepted", 0, []string{"all.example.com"}},
		{key{"gw", "https", "team-a/r-host"}, true, "Accepted", 1, []string{"*.all.example.com"}},
		// several parentRefs: each listener takes the most favourable outcome.
		{key{"gw", "same", "team-a/r-multi"}, false, "NotAllowedByListeners", 0, nil},
		{key{"gw", "all", "team-a/r-multi"}, true, "Accepted", 1, []string{"all.example.com"}},
		{key{"gw", "sel", "team-a/r-multi"}, false, "NoMatchingParent", -1, nil},
		// listener conflicts (listener.go validateListeners).
		{key{"conflict", "one", "team-a/r-conflict"}, false, "ListenerNotProgrammed: listener conflicts (HostnameConflict)", 0, nil},
		{key{"conflict", "two", "team-a/r-conflict"}, false, "ListenerNotProgrammed: listener conflicts (HostnameConflict)", 0, nil},
		{key{"conflict", "three", "team-a/r-conflict"}, true, "Accepted", 0, []string{"ok.example.com"}},
		{key{"conflict", "web", "team-a/r-conflict"}, false, "ListenerNotProgrammed: listener conflicts (ProtocolConflict)", 0, nil},
		{key{"conflict", "raw", "team-a/r-conflict"}, false, "ListenerNotProgrammed: listener conflicts (ProtocolConflict)", 0, nil},
		{key{"conflict", "badsel", "team-a/r-conflict"}, false, "NotAllowedByListeners: the listener's namespace selector is unusable", 0, nil},
	}
	for _, tt := range tests {
		a, ok := got[tt.key]
		if !ok {
			t.Errorf("%v: no attachment", tt.key)
			continue
		}
		if a.Accepted != tt.accepted || !strings.Contains(a.Reason, tt.reason) {
			t.Errorf("%v: accepted=%v reason=%q, want %v %q", tt.key, a.Accepted, a.Reason, tt.accepted, tt.reason)
		}
		if a.ParentRef != tt.parentRef {
			t.Errorf("%v: parentRef = %d, want %d", tt.key, a.ParentRef, tt.parentRef)
		}
		if !reflect.DeepEqual(a.Hostnames, tt.hostnames) {
			t.Errorf("%v: hostnames = %q, want %q", tt.key, a.Hostnames, tt.hostnames)
		}
	}
	// Every listener is paired with every route naming the gateway, and only those:
	// r-not-gateway names an XListenerSet, another Gateway, and gw in its own namespace.
	if n, want := len(g.Attachments(GatewayRef("infra", "gw"))), 8*7; n != want {
		t.Errorf("gw: %d attachments, want %d", n, want)
	}
	if a := g.AttachmentsOfRoute(HTTPRouteRef("team-a", "r-not-gateway")); len(a) != 0 {
		t.Errorf("r-not-gateway attached: %+v", a)
	}
	// Stable order: listener spec order, then route namespace/name.
	var order []string
	for _, a := range g.Attachments(GatewayRef("infra", "gw"))[:8] {
		order = append(order, a.Listener+" "+a.Route.Namespace+"/"+a.Route.Name)
	}
	wantOrder := []string{"same infra/r-same", "same team-a/r-a", "same team-a/r-host", "same team-a/r-multi",
		"same team-a/r-port", "same team-b/r-b", "same team-c/r-c", "all infra/r-same"}
	if !reflect.DeepEqual(order, wantOrder) {
		t.Errorf("order = %q\nwant    %q", order, wantOrder)
	}
	// AttachmentsOfRoute: gateway, then listener order.
	var ofRoute []string
	for _, a := range g.AttachmentsOfRoute(HTTPRouteRef("team-a", "r-port")) {
		if a.Accepted {
			ofRoute = append(ofRoute, a.Gateway.Name+"/"+a.Listener)
		}
	}
	if !reflect.DeepEqual(ofRoute, []string{"gw/https"}) {
		t.Errorf("AttachmentsOfRoute(r-port) accepted = %q", ofRoute)
	}
	// The unusable selector is a problem located at the field.
	probs := g.Problems()
	if len(probs) != 1 || probs[0].Field != "spec.listeners[5].allowedRoutes.namespaces.selector" || probs[0].Object != GatewayRef("infra", "conflict") {
		t.Fatalf("problems = %+v", probs)
	}
	if !strings.HasSuffix(probs[0].Source.String(), "attach.yaml:146") {
		t.Errorf("problem source = %s", probs[0].Source)
	}
}

// Conflicted and protocol-less listeners never take requests.
func TestRouteSkipsUnprogrammedListeners(t *testing.T) {
	g := loadGraph(t, "attach.yaml")
	res, err := g.Route(RouteRequest{Gateway: GatewayRef("infra", "conflict"), Port: 80, Host: "dup.example.com", Path: "/", Method: "GET"})
	if err != nil {
		t.Fatal(err)
	}
	// Port 80 still has a programmed plain-HTTP listener (three): the connection is taken.
	conflict := GatewayRef("infra", "conflict")
	if want := (RouteMiss{Why: MissNoListener, Gateway: conflict, Port: 80, Host: "dup.example.com", PlainHTTPPort: 80}); res.Listener != "" || res.Port != 80 || res.Miss == nil || !reflect.DeepEqual(*res.Miss, want) {
		t.Errorf("dup.example.com: listener %q miss %+v", res.Listener, res.Miss)
	}
	res, _ = g.Route(RouteRequest{Gateway: GatewayRef("infra", "conflict"), Listener: "one", Host: "dup.example.com", Path: "/", Method: "GET"})
	if res.Listener != "" || res.Miss == nil || res.Miss.Why != MissListenerNotProgrammed || res.Miss.Listener != "one" || !strings.HasPrefix(res.Miss.NotProgrammed, "listener conflicts") {
		t.Errorf("listener one: %q %+v", res.Listener, res.Miss)
	}
	res, _ = g.Route(RouteRequest{Gateway: GatewayRef("infra", "conflict"), Port: 90, Host: "web.example.com", Path: "/", Method: "GET"})
	if want := (RouteMiss{Why: MissNoListener, Gateway: conflict, Port: 90, Host: "web.example.com"}); res.Listener != "" || res.Port != 0 || res.Miss == nil || !reflect.DeepEqual(*res.Miss, want) {
		t.Errorf("port 90 (protocol conflict): %q %+v", res.Listener, res.Miss)
	}
	// Without a port, the most specific listener wins: ok.example.com (exact) over badsel (any host).
	res, _ = g.Route(RouteRequest{Gateway: GatewayRef("infra", "conflict"), Host: "ok.example.com", Path: "/x", Method: "GET"})
	if res.Route == nil || res.Listener != "three" {
		t.Errorf("ok.example.com: %+v", res)
	}
}
