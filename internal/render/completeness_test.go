package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
)

func TestCompleteness(t *testing.T) {
	full := &snapshot.Snapshot{}
	partial := &snapshot.Snapshot{Partial: true, NotInstalled: []string{"authpolicies.kuadrant.io"},
		Warnings: []snapshot.Warning{{Message: "cannot list xaccesspolicies in all namespaces: forbidden"}}}

	var buf bytes.Buffer
	if err := Report(&buf, "json", &CanIReport{APIVersion: ReportAPIVersion, Kind: "AccessReview"}, CompletenessOf(full)); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"partial", "notInstalled", "warnings"} {
		if strings.Contains(buf.String(), key) {
			t.Errorf("a complete input's report has %q:\n%s", key, buf.String())
		}
	}

	buf.Reset()
	if err := Report(&buf, "yaml", &MatrixReport{APIVersion: ReportAPIVersion, Kind: "AccessMatrix"}, CompletenessOf(partial)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"partial: true", "- authpolicies.kuadrant.io", "- 'cannot list xaccesspolicies in all namespaces: forbidden'"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("partial report lacks %q:\n%s", want, buf.String())
		}
	}

	c := CompletenessOfSides([]string{"before", "after"}, full, partial)
	if !c.Partial || len(c.Warnings) != 1 || c.Warnings[0] != "after: cannot list xaccesspolicies in all namespaces: forbidden" {
		t.Errorf("diff sides: %+v", c)
	}
}
