package render

import (
	"testing"

	"github.com/agpol/agpol/internal/explain"
)

// An uncertain route's decision and first step keep topology's why and say what agpol
// decided on its own routing.
func TestUncertainRouteSentences(t *testing.T) {
	was := &explain.Was{Verdict: "deny", DecidedBy: "no-route", Level: "gateway"}
	d := explain.Decision{Cause: &explain.Cause{Event: explain.CauseUncertainRoute, Note: "regex x", Was: was}}
	if got, want := DecisionReason(&d), "cannot decide: Envoy may route the request otherwise: regex x (as agpol routes it: DENY by no-route at level gateway)"; got != want {
		t.Errorf("DecisionReason\n got %q\nwant %q", got, want)
	}
	s := explain.Step{Event: explain.EventUncertainRoute, Note: "regex x", Was: was}
	if got, want := StepReason(s), "regex x; as agpol routes it: DENY by no-route at level gateway"; got != want {
		t.Errorf("StepReason\n got %q\nwant %q", got, want)
	}
}

// The step of a gateway another data plane serves says effective's why as it is.
func TestOtherDataPlaneStep(t *testing.T) {
	const why = "XAccessPolicies are not enforced on Gateway a/b: the istio data plane serves it (GatewayClass c)"
	if got := StepReason(explain.Step{Event: explain.EventOtherDataPlane, Note: why}); got != why {
		t.Errorf("StepReason = %q, want %q", got, why)
	}
}
