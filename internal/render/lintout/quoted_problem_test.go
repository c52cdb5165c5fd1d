package lintout

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/lint"
	"github.com/agpol/agpol/internal/topology"
)

// TestQuotedGraphProblem: AGP104's message is the graph problem's sentence, written
// whole in every format, lint's report left as it was.
func TestQuotedGraphProblem(t *testing.T) {
	c104, _ := lint.LookupCheck("AGP104")
	r := &lint.Report{Checks: []*lint.Check{c104}, Findings: []lint.Finding{
		{Code: "AGP104", Severity: lint.SeverityError,
			Quoted: &lint.Quoted{Problem: &topology.Problem{Why: topology.ProblemSelectorMissing, Listener: "http"}}},
	}}
	const want = "listener http: from is Selector but no selector is set"
	for _, format := range Formats {
		var b bytes.Buffer
		if err := Write(&b, format, r, Options{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s: no %q in\n%s", format, want, b.String())
		}
	}
	if r.Findings[0].Quoted == nil || r.Findings[0].Message != "" {
		t.Errorf("the report was changed: %+v", r.Findings[0])
	}
}
