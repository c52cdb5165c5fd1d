package render

import (
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/topology"
)

// An uncertain route's decision and first step keep topology's why and say what agpol
// decided on its own routing.
func TestUncertainRouteSentences(t *testing.T) {
	was := &explain.Was{Verdict: "deny", DecidedBy: "no-route", Level: "gateway"}
	u := &topology.RegexDiffers{Why: topology.RegexAnyByte, Regex: `/x\C`}
	const why = `regular expression '/x\C' uses \C (any byte), which RE2 (Envoy) accepts and Go's regexp does not: agpol cannot tell which values it matches`
	d := explain.Decision{Cause: &explain.Cause{Event: explain.CauseUncertainRoute, Uncertain: u, Was: was}}
	if got, want := DecisionReason(&d), "cannot decide: Envoy may route the request otherwise: "+why+" (as agpol routes it: DENY by no-route at level gateway)"; got != want {
		t.Errorf("DecisionReason\n got %q\nwant %q", got, want)
	}
	s := explain.Step{Event: explain.EventUncertainRoute, Uncertain: u, Was: was}
	if got, want := StepReason(s), why+"; as agpol routes it: DENY by no-route at level gateway"; got != want {
		t.Errorf("StepReason\n got %q\nwant %q", got, want)
	}
	// -o json's notes carry the sentence, as they did when topology wrote it.
	v := Sentences(&explain.Result{Decision: explain.Decision{Cause: d.Cause, Trace: []explain.Step{s}}})
	if v.Cause.Note != why || v.Trace[0].Note != why || d.Cause.Note != "" {
		t.Errorf("cause note %q, step note %q, explain's cause note %q; want %q in the view only", v.Cause.Note, v.Trace[0].Note, d.Cause.Note, why)
	}
}

// The step and the reason of a gateway another data plane serves are written from
// effective's data, and -o json's notes carry the same text.
func TestOtherDataPlaneStep(t *testing.T) {
	o := &effective.OtherDataPlane{Gateway: topology.GatewayRef("a", "b"),
		DataPlane: topology.GatewayDataPlane{DataPlane: topology.DataPlaneIstio, From: topology.PlaneFromController, Class: "c", Controller: "istio.io/gateway-controller"}}
	const why = "XAccessPolicies are not enforced on Gateway a/b: the istio data plane serves it (GatewayClass c names controller istio.io/gateway-controller)"
	step := explain.Step{Event: explain.EventOtherDataPlane, OtherDataPlane: o}
	if got := StepReason(step); got != why {
		t.Errorf("StepReason = %q, want %q", got, why)
	}
	r := &explain.Result{Decision: explain.Decision{Cause: &explain.Cause{Event: explain.CauseOtherDataPlane, OtherDataPlane: o}, Trace: []explain.Step{step}}}
	v := Sentences(r)
	if v.Reason != "allowed: "+why || v.Cause.Note != why || v.Trace[0].Note != why {
		t.Errorf("reason %q, cause note %q, step note %q; want %q", v.Reason, v.Cause.Note, v.Trace[0].Note, why)
	}
	if r.Cause.Note != "" || r.Trace[0].Note != "" {
		t.Errorf("Sentences changed explain's result: %+v", r)
	}
}
