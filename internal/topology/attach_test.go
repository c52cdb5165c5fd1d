package topology

import (
	"fmt"
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
		reason    string // substring of attachWhy
		parentRef int
		hostnames []string
	}{
		// allowedRoutes absent: Same namespace only.
		{key{"gw", "same", "infra/r-same"}, true, "Accepted", 0, []string{"same.example.com"}},
		{key{"gw", "same", "team-a/r-a"}, false, "NotAllowedByListeners Why=not-same-namespace Namespace=team-a ListenerNamespace=infra", 0, nil},
		// from All.
		{key{"gw", "all", "infra/r-same"}, true, "Accepted", 0, []string{"all.example.com"}},
		{key{"gw", "all", "team-a/r-a"}, true, "Accepted", 0, []string{"all.example.com"}},
		// from Selector: labels of the Namespace object; an absent Namespace has none.
		{key{"gw", "sel", "team-a/r-a"}, true, "Accepted", 0, []string{"sel.example.com"}},
		{key{"gw", "sel", "infra/r-same"}, false, "NotAllowedByListeners Why=selector-mismatch Namespace=infra ListenerNamespace=infra Selector=env=prod", 0, nil},
		{key{"gw", "sel", "team-b/r-b"}, false, "NotAllowedByListeners Why=selector-mismatch Namespace=team-b", 0, nil},
		{key{"gw", "sel", "team-c/r-c"}, false, "NotAllowedByListeners Why=selector-mismatch Namespace=team-c", 0, nil},
		// from None.
		{key{"gw", "none", "infra/r-same"}, false, "NotAllowedByListeners Why=from-none", 0, nil},
		// kinds: one unsupported kind leaves the listener without routes; HTTPRoute listed is fine.
		{key{"gw", "grpc-only", "team-a/r-a"}, false, "ListenerNotProgrammed Why=listener-not-programmed NotProgrammed={Why=invalid-route-kinds Kind=GRPCRoute.gateway.networking.k8s.io}", 0, nil},
		{key{"gw", "http-kind", "team-a/r-a"}, true, "Accepted", 0, []string{"*"}},
		{key{"gw", "tcp", "team-a/r-a"}, false, "ListenerNotProgrammed Why=listener-not-programmed NotProgrammed={Why=protocol Protocol=TCP}", 0, nil},
		{key{"gw", "https", "team-a/r-a"}, true, "Accepted", 0, []string{"*.example.com"}},
		// sectionName and port select listeners.
		{key{"gw", "https", "team-a/r-port"}, true, "Accepted", 0, []string{"api.example.com"}},
		{key{"gw", "all", "team-a/r-port"}, false, "NoMatchingParent Why=port Port=443 ListenerPort=80", -1, nil},
		{key{"gw", "same", "team-b/r-b"}, false, "NoMatchingParent Why=section-name SectionName=sel", -1, nil},
		// hostname intersection: other.org fits neither listener; *.all.example.com narrows to
		// the exact listener name (as the reference does) and stays itself under *.example.com.
		{key{"gw", "all", "team-a/r-host"}, true, "Accepted", 0, []string{"all.example.com"}},
		{key{"gw", "https", "team-a/r-host"}, true, "Accepted", 1, []string{"*.all.example.com"}},
		// several parentRefs: each listener takes the most favourable outcome.
		{key{"gw", "same", "team-a/r-multi"}, false, "NotAllowedByListeners", 0, nil},
		{key{"gw", "all", "team-a/r-multi"}, true, "Accepted", 1, []string{"all.example.com"}},
		{key{"gw", "sel", "team-a/r-multi"}, false, "NoMatchingParent", -1, nil},
		// listener conflicts (listener.go validateListeners).
		{key{"conflict", "one", "team-a/r-conflict"}, false, "ListenerNotProgrammed Why=listener-not-programmed NotProgrammed={Why=hostname-conflict Port=80 Listener=one Other=two Host=dup.example.com}", 0, nil},
		{key{"conflict", "two", "team-a/r-conflict"}, false, "ListenerNotProgrammed Why=listener-not-programmed NotProgrammed={Why=hostname-conflict Port=80 Listener=one Other=two Host=dup.example.com}", 0, nil},
		{key{"conflict", "three", "team-a/r-conflict"}, true, "Accepted", 0, []string{"ok.example.com"}},
		{key{"conflict", "web", "team-a/r-conflict"}, false, "ListenerNotProgrammed Why=listener-not-programmed NotProgrammed={Why=protocol-conflict Port=90}", 0, nil},
		{key{"conflict", "raw", "team-a/r-conflict"}, false, "ListenerNotProgrammed Why=listener-not-programmed NotProgrammed={Why=protocol-conflict Port=90}", 0, nil},
		{key{"conflict", "badsel", "team-a/r-conflict"}, false, "NotAllowedByListeners Why=selector-unusable SelectorErr=", 0, nil},
	}
	for _, tt := range tests {
		a, ok := got[tt.key]
		if !ok {
			t.Errorf("%v: no attachment", tt.key)
			continue
		}
		if why := attachWhy(a); a.Accepted != tt.accepted || !strings.Contains(why, tt.reason) {
			t.Errorf("%v: accepted=%v reason=%q, want %v %q", tt.key, a.Accepted, why, tt.accepted, tt.reason)
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
	if res.Listener != "" || res.Miss == nil || res.Miss.Why != MissListenerNotProgrammed || res.Miss.Listener != "one" || res.Miss.NotProgrammed == nil || res.Miss.NotProgrammed.Why != NotProgrammedHostnameConflict {
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

// attachWhy is an attachment's reason and the data of why not, "Field=value" for each
// field set (render writes the sentence).
func attachWhy(a Attachment) string {
	if a.Miss == nil {
		return a.Reason
	}
	return a.Reason + " " + setFields(*a.Miss)
}

// setFields is "Field=value" for each field of a struct that is not zero, a pointer
// to a struct in braces.
func setFields(v any) string {
	rv := reflect.ValueOf(v)
	var parts []string
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		if f.IsZero() {
			continue
		}
		val := fmt.Sprint(f.Interface())
		if f.Kind() == reflect.Pointer {
			val = "{" + setFields(f.Elem().Interface()) + "}"
		}
		parts = append(parts, rv.Type().Field(i).Name+"="+val)
	}
	return strings.Join(parts, " ")
}
