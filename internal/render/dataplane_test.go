package render

import (
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/topology"
)

// TestDataPlaneWhy writes the phrase of every way agpol learns a Gateway's data plane
// from topology's data (render writes it alone: topology carries no text).
func TestDataPlaneWhy(t *testing.T) {
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{"testdata/dataplanes.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	s.ClassDataPlanes = map[string]string{"mapped": "istio"}
	want := map[string]string{
		"istio":     "GatewayClass istio names controller istio.io/gateway-controller",
		"acme":      "GatewayClass acme names controller example.com/acme-gateway, which agpol does not model: routed as Gateway API specifies (map the class to a data plane with --data-plane acme=PLANE)",
		"mapped":    "GatewayClass mapped is mapped to istio by the configuration",
		"unclassed": "GatewayClass missing is not in the input, no XAccessPolicy targets the Gateway and no route of it sends traffic to an XBackend: assumed an implementation routing as Gateway API specifies",
		"targeted":  "GatewayClass missing is not in the input; assumed the kube-agentic-networking data plane: XAccessPolicy infra/gate targets it",
		"routed":    "GatewayClass missing is not in the input; assumed the kube-agentic-networking data plane: HTTPRoute app/to-mcp sends traffic to an XBackend",
	}
	planes := topology.ClassifyGateways(s)
	if len(planes) != len(want) {
		t.Fatalf("%d gateways classified, want %d", len(planes), len(want))
	}
	for gw, dp := range planes {
		got := DataPlaneWhy(dp)
		if got != want[gw.Name] {
			t.Errorf("%s: %q, want %q", gw.Name, got, want[gw.Name])
		}
	}
	if got := DataPlaneWhy(topology.GatewayDataPlane{}); got != "" {
		t.Errorf("zero value: %q", got)
	}
}
