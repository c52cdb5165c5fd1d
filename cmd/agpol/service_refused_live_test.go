package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestServiceReadRefusedLive: against a real kube-apiserver holding the example
// scenario, a user ("no-svc", impersonated) may list every kind agpol reads except
// Services. A Service decides only whether a backend exists: the answer is the admin's,
// and says it assumed the backend's Service exists because the read was refused, in the
// headline (the path line), in a note and in JSON (path.backendAssumed), on the routed
// path, on a request naming the backend, in simulate and in can-i (target.backendAssumed).
func TestServiceReadRefusedLive(t *testing.T) {
	kubeconfig := startLintCluster(t)
	t.Chdir("../..")
	noSvc := restrictedUser(t, kubeconfig, "no-svc", readAllBut("services"))
	const assumed = "Service pay/ledger-mcp of XBackend pay/ledger exists (read refused"
	for name, args := range map[string][]string{
		"routed":  {"explain", "--from", "sa:agents/support", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "balance"},
		"backend": {"explain", "--from", "sa:agents/support", "--gateway", "infra/edge", "--backend", "pay/ledger", "--tool", "balance"},
	} {
		t.Run(name, func(t *testing.T) {
			out, errOut, code := noSvc(args...)
			head := strings.SplitN(out, "\n  decided by", 2)[0]
			words := strings.Join(strings.Fields(out), " ") // as wrapped at 100 columns
			if code != exitOK || !strings.HasPrefix(out, "ALLOW ") || !strings.Contains(head, "xbackend pay/ledger [assumed to exist]") ||
				!strings.Contains(words, "assumed: "+assumed) {
				t.Errorf("exit %d, want %d, ALLOW and the assumed Service in the headline and a note:\n%s%s", code, exitOK, out, errOut)
			}
			out, errOut, _ = noSvc(append(args, "-o", "json")...)
			if !strings.Contains(out, `"backendAssumed": "`+assumed) {
				t.Errorf("JSON has no path.backendAssumed %q:\n%.3000s%s", assumed, out, errOut)
			}
			// The admin reads the Service: the same verdict, nothing assumed.
			out, errOut, code = runDecide(t, "", append(args, "--kubeconfig", kubeconfig)...)
			if code != exitOK || strings.Contains(out, "assumed") {
				t.Errorf("admin: exit %d, want %d and nothing assumed:\n%s%s", code, exitOK, out, errOut)
			}
		})
	}
	t.Run("can-i", func(t *testing.T) {
		args := []string{"can-i", "--from", "sa:agents/support", "--tool", "balance", "--gateway", "infra/edge", "--backend", "pay/ledger"}
		out, errOut, code := noSvc(args...)
		words := strings.Join(strings.Fields(out), " ")
		if code != exitOK || !strings.HasPrefix(out, "yes") || !strings.Contains(words, "assumed: "+assumed) {
			t.Errorf("exit %d, want %d, yes and the assumed Service:\n%s%s", code, exitOK, out, errOut)
		}
		out, _, _ = noSvc(append(args, "-o", "json")...)
		if !strings.Contains(out, `"backendAssumed": "`+assumed) {
			t.Errorf("can-i JSON has no target.backendAssumed:\n%.2000s", out)
		}
	})
	t.Run("simulate", func(t *testing.T) {
		out, errOut, code := noSvc("simulate", "--requests", "testdata/requests.yaml", "-o", "json")
		admin, _, adminCode := runDecide(t, "", "simulate", "--requests", "testdata/requests.yaml", "-o", "json", "--kubeconfig", kubeconfig)
		var got, want simulateJSON
		if err := json.Unmarshal([]byte(out), &got); err != nil || json.Unmarshal([]byte(admin), &want) != nil || len(got.Results) != len(want.Results) || len(got.Results) == 0 {
			t.Fatalf("simulate: exit %d, %v\n%.2000s%s", code, err, out, errOut)
		}
		if code != adminCode {
			t.Errorf("simulate: exit %d, the admin's %d", code, adminCode)
		}
		for i, r := range got.Results {
			if w := want.Results[i]; r.Decision != w.Decision || r.DecidedBy != w.DecidedBy {
				t.Errorf("simulate %s: %s by %s, the admin's %s by %s", r.Name, r.Decision, r.DecidedBy, w.Decision, w.DecidedBy)
			}
		}
		if n := strings.Count(out, `"backendAssumed": "Service `); n == 0 || !strings.Contains(out, "(read refused") {
			t.Errorf("simulate: no path says it assumed a Service (read refused)\n%.2000s", out)
		}
	})
}
