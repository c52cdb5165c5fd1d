package render

import (
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/topology"
)

// TestEnforcementMessage writes the messages of policies another data plane serves or
// whose targets are not in the input, from effective's data.
func TestEnforcementMessage(t *testing.T) {
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{"testdata/dataplanes.yaml"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"gate":      {""},
		"mesh":      {"the istio data plane serves Gateway infra/istio (GatewayClass istio names controller istio.io/gateway-controller)"},
		"elsewhere": {"Gateway infra/absent is not in the input", "XBackend infra/absent is not in the input"},
	}
	got := effective.NewEngine(s, effective.Reference(), "").Enforcement(topology.BuildGraph(s))
	if len(got) != len(want) {
		t.Fatalf("%d policies, want %d", len(got), len(want))
	}
	for p, pe := range got {
		v := enforcementView(pe)
		w := want[p.Name]
		if v.Message != w[0] {
			t.Errorf("%s: message %q, want %q", p.Name, v.Message, w[0])
		}
		if pe.Message != "" {
			t.Errorf("%s: effective wrote %q: render writes messages", p.Name, pe.Message)
		}
		for i, tg := range v.Targets {
			if want := w[min(i, len(w)-1)]; tg.Message != want {
				t.Errorf("%s target %d: %q, want %q", p.Name, i, tg.Message, want)
			}
		}
	}
	if got := EnforcementMessage(&effective.Unenforced{Why: effective.UnenforcedNoTarget}); got != "the policy names no target" {
		t.Errorf("no target: %q", got)
	}
}
