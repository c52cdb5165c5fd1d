package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPartialReadLive: against a real kube-apiserver holding the example scenario, two
// restricted users (impersonated, as with kubectl --as): "no-xap" may list every kind
// agpol reads except XAccessPolicies, "nobody" has no RBAC at all. A decision that
// depends on a kind agpol could not read is indeterminate (exit 3) and names the kind
// and the missing permission; lint and get exit 2 unless --allow-partial.
func TestPartialReadLive(t *testing.T) {
	kubeconfig := startLintCluster(t)
	t.Chdir("../..")
	users := map[string]func(...string) (string, string, int){
		"no-xap": restrictedUser(t, kubeconfig, "no-xap", readAllBut("xaccesspolicies")),
		"nobody": restrictedUser(t, kubeconfig, "nobody", nil),
	}
	as := func(user string, args ...string) (string, string, int) {
		t.Helper()
		return users[user](args...)
	}
	const xap = "xaccesspolicies.agentic.networking.x-k8s.io (missing permission: list xaccesspolicies.agentic.networking.x-k8s.io)"

	t.Run("explain: indeterminate, names kind and permission", func(t *testing.T) {
		// The policies deny this call (support may not refund): with them unread, agpol
		// must not answer ALLOW, nor DENY as if it knew.
		args := []string{"explain", "--from", "sa:agents/support", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund"}
		out, errOut, code := as("no-xap", args...)
		head := strings.Join(strings.Fields(strings.SplitN(out, "\n  path: ", 2)[0]), " ") // the headline, as wrapped at 100 columns
		if code != exitIndeterminate || !strings.HasPrefix(out, "INDETERMINATE ") || !strings.Contains(head, xap) {
			t.Errorf("exit %d, want %d and a headline naming %s:\n%s%s", code, exitIndeterminate, xap, out, errOut)
		}
		// The admin gets the real answer.
		if _, errOut, code := runDecide(t, "", append(args, "--kubeconfig", kubeconfig)...); code != exitFail {
			t.Errorf("admin: exit %d, want %d (deny)\n%s", code, exitFail, errOut)
		}
	})

	t.Run("explain: a named object whose kind could not be read is indeterminate, not not-found", func(t *testing.T) {
		noXB := restrictedUser(t, kubeconfig, "no-xb", readAllBut("xbackends"))
		args := []string{"explain", "--from", "sa:agents/support", "--gateway", "infra/edge", "--backend", "pay/ledger", "--tool", "refund"}
		out, errOut, code := noXB(args...)
		const xb = "xbackends.agentic.networking.x-k8s.io (missing permission: list xbackends.agentic.networking.x-k8s.io)"
		words := strings.Join(strings.Fields(out), " ") // as wrapped at 100 columns
		if code != exitIndeterminate || !strings.HasPrefix(out, "INDETERMINATE ") || !strings.Contains(words, "xbackend pay/ledger is not among the objects read") || !strings.Contains(words, xb) {
			t.Errorf("exit %d, want %d and a headline naming the backend and %s:\n%s%s", code, exitIndeterminate, xb, out, errOut)
		}
		// A backend that is simply not there is still an input error.
		args[6] = "pay/nope"
		if _, errOut, code := runDecide(t, "", append(args, "--kubeconfig", kubeconfig)...); code != exitUsage || !strings.Contains(errOut, "xbackend pay/nope not found") {
			t.Errorf("admin, missing backend: exit %d, want %d\n%s", code, exitUsage, errOut)
		}
	})

	t.Run("can-i: indeterminate, not yes", func(t *testing.T) {
		out, errOut, code := as("no-xap", "can-i", "--from", "sa:agents/support", "--tool", "refund", "--gateway", "infra/edge", "--backend", "pay/ledger")
		if code != exitIndeterminate || !strings.HasPrefix(out, "indeterminate") {
			t.Errorf("exit %d, want %d:\n%s%s", code, exitIndeterminate, out, errOut)
		}
	})

	t.Run("simulate, who-can, matrix: every answer marked", func(t *testing.T) {
		out, errOut, code := as("no-xap", "simulate", "--requests", "testdata/requests.yaml", "-o", "json")
		if code != exitFail {
			t.Errorf("simulate: exit %d, want %d (expectations fail)\n%s", code, exitFail, errOut)
		}
		var sim simulateJSON
		if err := json.Unmarshal([]byte(out), &sim); err != nil || len(sim.Results) == 0 {
			t.Fatalf("simulate: %v\n%s", err, out)
		}
		// The TLS handshake depends on the Gateway alone, which was read: its deny stands.
		for _, r := range sim.Results {
			if r.Decision == "deny" && r.DecidedBy == "tls-handshake" {
				continue
			}
			if r.Decision != "indeterminate" || r.DecidedBy != "unread-objects" {
				t.Errorf("simulate %s: %s by %s, want indeterminate by unread-objects", r.Name, r.Decision, r.DecidedBy)
			}
		}
		for _, cmd := range [][]string{
			{"who-can", "--tool", "refund", "--backend", "pay/ledger", "-o", "json"},
			{"matrix", "-o", "json"},
			{"can-i", "--list", "--from", "sa:agents/billing", "-o", "json"},
		} {
			out, errOut, code := as("no-xap", cmd...)
			if code == exitUsage {
				t.Fatalf("%s: exit %d\n%s", cmd[0], code, errOut)
			}
			n := strings.Count(out, `"decision": "indeterminate"`)
			others := strings.Count(out, `"decision": "allow"`) + strings.Count(out, `"decision": "deny"`) -
				strings.Count(out, `"decidedBy": "tls-handshake"`)
			if n == 0 || others > 0 {
				t.Errorf("%s: %d indeterminate and %d allow/deny answers, want only indeterminate\n%.2000s", cmd[0], n, others, out)
			}
		}
	})

	t.Run("diff: the live side's answers are indeterminate", func(t *testing.T) {
		out, errOut, code := as("no-xap", "diff", "--before", "live", "--after", "testdata/examples", "-o", "json")
		if code == exitUsage || !strings.Contains(out, `"decision": "indeterminate"`) || !strings.Contains(out, `"decidedBy": "unread-objects"`) {
			t.Errorf("diff: exit %d, want the live side indeterminate by unread-objects\n%.2000s\n%s", code, out, errOut)
		}
	})

	t.Run("lint and get: exit 2 unless --allow-partial", func(t *testing.T) {
		for _, tc := range []struct {
			user string
			args []string
			want string
		}{
			{"nobody", []string{"lint"}, "cannot list"},
			{"no-xap", []string{"lint"}, "cannot list xaccesspolicies.agentic.networking.x-k8s.io in namespaces"},
			{"no-xap", []string{"get", "xap", "-A"}, "cannot list xaccesspolicies.agentic.networking.x-k8s.io in namespaces"},
		} {
			out, errOut, code := as(tc.user, tc.args...)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "--allow-partial") {
				t.Errorf("%s as %s: exit %d, want %d naming %q\nstdout %q\nstderr %s", tc.args[0], tc.user, code, exitUsage, tc.want, out, errOut)
			}
			again := append(append([]string{}, tc.args...), "--allow-partial")
			if tc.args[0] == "lint" {
				again = append(again, "--fail-on", "none")
			}
			_, errOut, code = as(tc.user, again...)
			if code != exitOK {
				t.Errorf("%s as %s --allow-partial: exit %d\n%s", tc.args[0], tc.user, code, errOut)
			}
		}
		// get of a kind the user may read is not refused.
		out, errOut, code := as("no-xap", "get", "gateways", "-A")
		if code != exitOK || !strings.Contains(out, "edge") {
			t.Errorf("get gateways as no-xap: exit %d\n%s%s", code, out, errOut)
		}
	})
}
