package lintout

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/lint"
	textrender "github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/topology"
)

// A finding that quotes data (lint.Finding.Quoted) has its whole message in every
// format, written by render, and lint's report is left as lint made it.
func TestQuotedMessages(t *testing.T) {
	dp := topology.GatewayDataPlane{DataPlane: topology.DataPlaneIstio, From: topology.PlaneFromController, Class: "istio", Controller: "istio.io/gateway-controller"}
	c210, _ := lint.LookupCheck("AGP210")
	c212, _ := lint.LookupCheck("AGP212")
	c207, _ := lint.LookupCheck("AGP207")
	c214, _ := lint.LookupCheck("AGP214")
	c215, _ := lint.LookupCheck("AGP215")
	conflict := &topology.NotProgrammed{Why: topology.NotProgrammedSetProtocolConflict, Port: 9000, Other: "tools/calm/raw"}
	r := &lint.Report{Checks: []*lint.Check{c210, c212, c207, c214, c215}, Findings: []lint.Finding{
		{Code: "AGP207", Severity: lint.SeverityWarning, Message: "the route does not attach to Gateway infra/edge (",
			Quoted: &lint.Quoted{Attachment: &topology.Attachment{Reason: topology.ReasonNoMatchingParent,
				Miss: &topology.AttachMiss{Why: topology.AttachSectionName, SectionName: "grpc"}}, After: "): it carries no traffic through it"}},
		{Code: "AGP214", Severity: lint.SeverityWarning, Message: "ListenerSet not attached, its listeners carry no traffic: ",
			Quoted: &lint.Quoted{ListenerSet: &topology.ListenerSetStatus{Gateway: topology.GatewayRef("infra", "nowhere"),
				Reason: topology.ReasonParentNotFound, Miss: &topology.ListenerSetMiss{Why: topology.SetMissGatewayNotFound}}}},
		{Code: "AGP215", Severity: lint.SeverityWarning, Message: "listener tools/fires/mixed of Gateway infra/mesh is not programmed: ",
			Quoted: &lint.Quoted{NotProgrammed: conflict}},
		{Code: "AGP210", Severity: lint.SeverityError, Message: "Gateway infra/mesh is served by the istio data plane (",
			Quoted: &lint.Quoted{DataPlane: &dp, After: "): it never enforces XAccessPolicies"}},
		{Code: "AGP212", Severity: lint.SeverityError, Message: "AuthPolicy infra/ap is never enforced: ",
			Quoted: &lint.Quoted{Reasons: []authpolicy.Reason{{Code: authpolicy.ReasonNoGateway, Ref: "infra/gone"}, {Code: authpolicy.ReasonNoRoute, Ref: "app/r"}}}},
	}}
	want := []string{
		"Gateway infra/mesh is served by the istio data plane (GatewayClass istio names controller istio.io/gateway-controller): it never enforces XAccessPolicies",
		"AuthPolicy infra/ap is never enforced: no Gateway infra/gone in the input; no HTTPRoute app/r in the input",
		"the route does not attach to Gateway infra/edge (NoMatchingParent: parentRef sectionName grpc selects another listener): it carries no traffic through it",
		"ListenerSet not attached, its listeners carry no traffic: ParentNotFound: Gateway infra/nowhere is not in the input",
		"listener tools/fires/mixed of Gateway infra/mesh is not programmed: listener conflicts (ProtocolConflict) with listener tools/calm/raw on port 9000: a ListenerSet's listener yields to the Gateway's and older ListenerSets'",
	}
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Write(&b, format, r, Options{}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if format == textrender.FormatSARIF || format == textrender.FormatJSON {
			out = strings.ReplaceAll(out, `\u0026`, "&")
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: no %q in\n%s", format, w, out)
			}
		}
	}
	if r.Findings[0].Quoted == nil || strings.Contains(r.Findings[0].Message, "GatewayClass") {
		t.Errorf("the report was changed: %+v", r.Findings[0])
	}
}
