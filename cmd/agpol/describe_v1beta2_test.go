package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/agpol/agpol/internal/render"
)

// TestDescribeV1beta2Golden pins the describe text of the Kuadrant Auth doc's v1beta2
// examples (testdata/authpolicy/v1beta2): every AuthPolicy, and the Gateways and
// HTTPRoutes they bear on, each line within 100 columns; -o json carries the same view.
func TestDescribeV1beta2Golden(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() time.Time { return fixedNow }
	defer func() { render.Now = realNow }()
	const dir = "testdata/authpolicy/v1beta2"
	cases := []struct {
		name, fixture string
		args          []string
	}{
		{"authpolicies-limits", "limits", []string{"authpolicies", "-A"}},
		{"authpolicies-gateway-and-routes", "gateway-and-routes", []string{"authpolicies", "-A"}},
		{"authpolicies-hostnames", "hostnames", []string{"authpolicies", "-A"}},
		{"authpolicy-target-httproute", "target-httproute", []string{"authpolicy", "app/my-route-auth"}},
		{"authpolicy-target-gateway", "target-gateway", []string{"authpolicy", "infra/my-gw-auth"}},
		{"httproute-route-other", "gateway-and-routes", []string{"httproute", "app/route-other"}},
		{"httproute-route-a2", "limits", []string{"httproute", "app/route-a2"}},
		{"gateway-gw", "gateway-and-routes", []string{"gateway", "infra/gw"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"describe"}, tc.args...), "-f", filepath.Join(dir, tc.fixture, "objects.yaml"))
			out, errOut, code := runDecide(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := lipgloss.Width(line); w > 100 {
					t.Errorf("line %d is %d columns wide:\n%s", i+1, w, line)
				}
			}
			decideGolden(t, filepath.Join("testdata/golden/describe/v1beta2", tc.name+".txt"), out)
		})
	}

	// -o json: the same view, machine-readable.
	out, errOut, code := runDecide(t, "", "describe", "authpolicy", "app/second", "-f", filepath.Join(dir, "limits", "objects.yaml"), "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Kind   string `json:"kind"`
		Policy *struct {
			Enforcement string `json:"enforcement"`
			NotEnforced []struct {
				Reason, By string
			} `json:"notEnforced"`
			Covers []struct {
				Route, Name, Source string
			} `json:"covers"`
			V1Form *struct {
				Changes []string `json:"changes"`
			} `json:"v1Form"`
		} `json:"authPolicyV1beta2"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	p := doc.Policy
	if doc.Kind != "Description" || p == nil || p.Enforcement != "NotEnforced" || len(p.NotEnforced) != 2 ||
		p.NotEnforced[0].Reason != "SecondPolicyOnTarget" || p.NotEnforced[0].By != "app/first" ||
		len(p.Covers) != 1 || !strings.HasSuffix(p.Covers[0].Source, "objects.yaml:18") || p.V1Form == nil || len(p.V1Form.Changes) != 2 {
		t.Errorf("describe -o json:\n%s", out)
	}
}
