package lintout

import (
	"testing"

	"github.com/agpol/agpol/internal/lint"
	textrender "github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/topology"
)

// lint cannot call render, so AGP206 writes its own message for a backendRef the data
// plane cannot use: it must be render's sentence for the same problem, word for word, and
// say nothing of the problems AGP206 does not report (AGP205's).
func TestBackendProblemMessage(t *testing.T) {
	reported := map[string]bool{topology.BrokenRefNotPermitted: true, topology.BrokenXBackendKind: true, topology.BrokenKindUnsupported: true}
	for _, why := range []string{topology.BrokenRefNotPermitted, topology.BrokenXBackendNotFound, topology.BrokenServiceNotFound,
		topology.BrokenServiceNotInInput, topology.BrokenXBackendKind, topology.BrokenKindUnsupported} {
		p := &topology.BackendProblem{Why: why, Ref: topology.ServiceRef("svc", "s"), Route: topology.HTTPRouteRef("app", "r"), DataPlane: topology.DataPlaneIstio}
		got := lint.BackendProblemMessage(p)
		switch want := textrender.BackendProblemText(p); {
		case !reported[why] && got != "":
			t.Errorf("%s: lint writes %q for a problem AGP206 does not report", why, got)
		case reported[why] && got != want:
			t.Errorf("%s: lint writes %q, render %q", why, got, want)
		}
	}
	if got := lint.BackendProblemMessage(nil); got != "" {
		t.Errorf("nil problem: %q", got)
	}
}
