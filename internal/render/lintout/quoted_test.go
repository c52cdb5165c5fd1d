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
	r := &lint.Report{Checks: []*lint.Check{c210, c212}, Findings: []lint.Finding{
		{Code: "AGP210", Severity: lint.SeverityError, Message: "Gateway infra/mesh is served by the istio data plane (",
			Quoted: &lint.Quoted{DataPlane: &dp, After: "): it never enforces XAccessPolicies"}},
		{Code: "AGP212", Severity: lint.SeverityError, Message: "AuthPolicy infra/ap is never enforced: ",
			Quoted: &lint.Quoted{Reasons: []authpolicy.Reason{{Code: authpolicy.ReasonNoGateway, Ref: "infra/gone"}, {Code: authpolicy.ReasonNoRoute, Ref: "app/r"}}}},
	}}
	want := []string{
		"Gateway infra/mesh is served by the istio data plane (GatewayClass istio names controller istio.io/gateway-controller): it never enforces XAccessPolicies",
		"AuthPolicy infra/ap is never enforced: no Gateway infra/gone in the input; no HTTPRoute app/r in the input",
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
