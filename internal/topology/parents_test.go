package topology

import (
	"testing"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

func TestParentGateway(t *testing.T) {
	group := func(s string) *gwapiv1.Group { g := gwapiv1.Group(s); return &g }
	kind := func(s string) *gwapiv1.Kind { k := gwapiv1.Kind(s); return &k }
	ns := func(s string) *gwapiv1.Namespace { n := gwapiv1.Namespace(s); return &n }
	tests := []struct {
		name string
		p    gwapiv1.ParentReference
		want Ref
		ok   bool
	}{
		{"defaults", gwapiv1.ParentReference{Name: "gw"}, GatewayRef("app", "gw"), true},
		{"explicit", gwapiv1.ParentReference{Group: group(gwapiv1.GroupName), Kind: kind("Gateway"), Namespace: ns("infra"), Name: "gw"}, GatewayRef("infra", "gw"), true},
		{"empty namespace stays empty", gwapiv1.ParentReference{Namespace: ns(""), Name: "gw"}, GatewayRef("", "gw"), true},
		{"other kind", gwapiv1.ParentReference{Kind: kind("Service"), Name: "svc"}, Ref{}, false},
		{"other group", gwapiv1.ParentReference{Group: group("example.com"), Name: "gw"}, Ref{}, false},
		{"empty group", gwapiv1.ParentReference{Group: group(""), Name: "gw"}, Ref{}, false},
	}
	for _, tt := range tests {
		got, ok := ParentGateway(tt.p, "app")
		if got != tt.want || ok != tt.ok {
			t.Errorf("%s: ParentGateway = %v, %v; want %v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
