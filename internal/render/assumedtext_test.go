package render

import (
	"testing"

	"github.com/agpol/agpol/internal/topology"
)

// AssumedText writes each of topology's backend assumptions as the sentence explain,
// can-i, who-can and matrix have always shown.
func TestAssumedText(t *testing.T) {
	svc, xb := topology.ServiceRef("ms", "absent"), topology.XBackendRef("pay", "ledger")
	for _, c := range []struct {
		a    topology.Assumption
		want string
	}{
		{topology.Assumption{}, ""},
		{topology.Assumption{Why: topology.AssumedXBackend, Ref: xb}, "XBackend pay/ledger is not in the input; assumed to exist"},
		{topology.Assumption{Why: topology.AssumedService, Ref: svc}, "Service ms/absent is not in the input, which carries no Service of namespace ms: assumed to exist"},
		{topology.Assumption{Why: topology.AssumedServiceRefused, Ref: svc},
			"Service ms/absent exists (read refused: agpol may not list Services in namespace ms, so it cannot tell)"},
		{topology.Assumption{Why: topology.AssumedServiceRefused, Ref: topology.ServiceRef("pay", "ledger-mcp"), Of: xb},
			"Service pay/ledger-mcp of XBackend pay/ledger exists (read refused: agpol may not list Services in namespace pay, so it cannot tell)"},
		{topology.Assumption{Why: topology.AssumedKindSupported, Ref: topology.Ref{Group: "networking.istio.io", Kind: "Hostname"}, DataPlane: topology.DataPlaneGatewayAPI},
			"backend kind Hostname.networking.istio.io is not one agpol knows of the data plane (gateway-api); assumed supported"},
		{topology.Assumption{Why: topology.AssumedKindSupported, Ref: topology.Ref{Group: "core", Kind: "Thing"}, DataPlane: topology.DataPlaneGatewayAPI},
			"backend kind Thing is not one agpol knows of the data plane (gateway-api); assumed supported"},
	} {
		if got := AssumedText(c.a); got != c.want {
			t.Errorf("%+v:\n got %q\nwant %q", c.a, got, c.want)
		}
	}
}
