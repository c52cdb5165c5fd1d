package main

import (
	"path/filepath"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"

	"github.com/agpol/agpol/internal/render"
)

// TestTextFitsWidth: the text of matrix and can-i --list (and of who-can, can-i, diff
// and lint --list) on the shipped examples fits a 100-column terminal: long cells wrap
// under their column, long lines under their first words. Each output is pinned by a
// golden file.
func TestTextFitsWidth(t *testing.T) {
	t.Chdir("../..")
	if render.TextWidth != 100 {
		t.Fatalf("render.TextWidth = %d, want 100", render.TextWidth)
	}
	ex := []string{"-f", "testdata/examples"}
	golden := "testdata/whatif/golden"
	cases := []struct {
		golden string
		args   []string
	}{
		{"matrix.txt", append([]string{"matrix"}, ex...)},
		{"matrix-semantics.txt", append([]string{"matrix", "--semantics", "all"}, ex...)},
		{"width/matrix-ungroup.txt", append([]string{"matrix", "--ungroup"}, ex...)},
		{"width/matrix-inventory.txt", append([]string{"matrix", "--tools", "testdata/whatif/tools.json"}, ex...)},
		{"cani-list-billing.txt", append([]string{"can-i", "--list", "--from", "sa:agents/billing"}, ex...)},
		{"width/cani-list-analytics.txt", append([]string{"can-i", "--list", "--from", "sa:agents/analytics"}, ex...)},
		{"width/cani-list-support.txt", append([]string{"can-i", "--list", "--from", "sa:agents/support"}, ex...)},
		{"width/cani-list-anonymous.txt", append([]string{"can-i", "--list", "--from", "anonymous"}, ex...)},
		{"cani-indeterminate.txt", append([]string{"can-i", "--from", "sa:agents/billing", "--tool", "refund", "--backend", "pay/ledger"}, ex...)},
		{"whocan-refund.txt", append([]string{"who-can", "--tool", "refund", "--backend", "pay/ledger"}, ex...)},
		{"whocan-tools-list.txt", append([]string{"who-can", "--method", "tools/list", "--backend", "tools/calc", "--gateway", "infra/edge"}, ex...)},
		{"diff.txt", []string{"diff", "--before", "testdata/examples", "--after", "testdata/whatif/after"}},
		{"width/lint-list.txt", []string{"lint", "--list"}},
	}
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			out, errOut, code := runDecide(t, "", tc.args...)
			if code == exitUsage {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := lipgloss.Width(line); w > 100 {
					t.Errorf("line %d is %d columns wide:\n%s", i+1, w, line)
				}
			}
			decideGolden(t, filepath.Join(golden, tc.golden), out)
		})
	}
}

// TestGetAccessPoliciesFitWidth: the XAccessPolicy table of the shipped examples, with its
// ACCEPTED and ENFORCED columns, fits a 100-column terminal.
func TestGetAccessPoliciesFitWidth(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() timeT { return fixedNow }
	defer func() { render.Now = realNow }()
	out, errOut, code := runDecide(t, "", "get", "xap", "-A", "-f", "testdata/examples")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "ENFORCED") {
		t.Fatalf("no ENFORCED column:\n%s", out)
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := lipgloss.Width(line); w > 100 {
			t.Errorf("line %d is %d columns wide:\n%s", i+1, w, line)
		}
	}
}
