package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/agpol/agpol/internal/render"
)

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestDescribeGolden pins the describe text of the examples (plain: not a terminal),
// each line within 100 columns.
func TestDescribeGolden(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() time.Time { return fixedNow }
	defer func() { render.Now = realNow }()
	cases := []struct {
		name string
		args []string
	}{
		{"gateway-edge", []string{"gateway", "infra/edge"}},
		{"xbackend-ledger", []string{"xbackend", "ledger", "-n", "pay"}},
		{"xbackend-calc-legacy", []string{"xbackend", "tools/calc", "--semantics", "v0alpha0-legacy"}},
		{"httproute-ledger-0059", []string{"httproute", "pay/ledger", "--semantics", "proposal-0059"}},
		{"xbackend-ledger-pr220", []string{"xbackend", "pay/ledger", "--semantics", "pr-220"}},
		{"gateways-all", []string{"gateways", "-A"}},
		{"xap-calc-arithmetic", []string{"xap", "calc-arithmetic", "-n", "tools"}},
		{"xap-calc-legacy", []string{"accesspolicy", "tools/calc-legacy"}},
		{"xap-edge-baseline", []string{"xaccesspolicy", "infra/edge-baseline"}},
		{"xap-ledger-fraud-check", []string{"xap", "pay/ledger-fraud-check"}},
		{"authpolicy-edge-jwt", []string{"authpolicy", "infra/edge-jwt"}},
		{"authpolicies-pay", []string{"authpolicies", "-n", "pay"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runDecide(t, "", append(append([]string{"describe"}, tc.args...), "-f", "testdata/examples")...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if strings.Contains(out, "\x1b[") {
				t.Error("colour written to a non-terminal")
			}
			for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := lipgloss.Width(line); w > 100 {
					t.Errorf("line %d is %d columns wide:\n%s", i+1, w, line)
				}
			}
			decideGolden(t, filepath.Join("testdata/golden/describe", tc.name+".txt"), out)
		})
	}
	out, _, _ := runDecide(t, "", "describe", "gateway", "infra/edge", "-f", "testdata/examples", "--color", "always")
	if !strings.Contains(out, "\x1b[1m") {
		t.Error("--color always: no styling")
	}
	// Styled text wraps where the plain text does.
	plain, _, _ := runDecide(t, "", "describe", "gateway", "infra/edge", "-f", "testdata/examples")
	if got := sgr.ReplaceAllString(out, ""); got != plain {
		t.Errorf("--color always wraps elsewhere:\n%s", firstDiff(plain, got))
	}
	if _, errOut, code := runDecide(t, "", "describe", "service", "x", "-f", "testdata/examples"); code != exitUsage {
		t.Errorf("describe service: exit %d %s", code, errOut)
	}
	if _, errOut, code := runDecide(t, "", "describe", "gateway", "infra/none", "-f", "testdata/examples"); code != exitUsage || !strings.Contains(errOut, "not found") {
		t.Errorf("describe missing: exit %d %s", code, errOut)
	}
}
