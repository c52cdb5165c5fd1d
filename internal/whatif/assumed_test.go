package whatif

import (
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// A live read refused the Services: the targets to backends whose Service agpol could
// not read say they assume it exists (the same note as explain's path).
func TestTargetBackendAssumed(t *testing.T) {
	s := load(t, "../../testdata/examples")
	s.Services, s.Partial = nil, true
	s.Warnings = append(s.Warnings, snapshot.Warning{Kind: "services", Message: "cannot list services: forbidden"})
	e := New(model.New(s), []effective.Semantics{effective.Reference()}, Options{})
	n := 0
	for _, tg := range e.Targets {
		if tg.BackendKind == "XBackend" && tg.Backend == "pay/ledger" {
			n++
			want := topology.Assumption{Why: topology.AssumedServiceRefused, Ref: topology.ServiceRef("pay", "ledger-mcp"), Of: topology.XBackendRef("pay", "ledger")}
			if tg.BackendAssumed != want {
				t.Errorf("%s: backendAssumed %+v, want %+v", tg.Label(), tg.BackendAssumed, want)
			}
		}
	}
	if n == 0 {
		t.Fatal("no target to XBackend pay/ledger")
	}
}
