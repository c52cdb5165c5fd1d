package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestWhatIfLive runs the what-if commands against a real kube-apiserver holding the
// example scenario (see startLintCluster): the live answers equal the offline ones, and
// diff accepts live as either side.
func TestWhatIfLive(t *testing.T) {
	kubeconfig := startLintCluster(t)
	t.Chdir("../..")
	for _, tc := range []struct {
		name          string
		live, offline []string
		code          int
	}{
		{"matrix", []string{"matrix", "-o", "json"}, []string{"matrix", "-o", "json", "-f", "testdata/examples"}, exitOK},
		{"can-i", []string{"can-i", "--list", "--from", "sa:agents/billing", "-o", "json"},
			[]string{"can-i", "--list", "--from", "sa:agents/billing", "-o", "json", "-f", "testdata/examples"}, exitOK},
		{"who-can", []string{"who-can", "--tool", "balance", "--backend", "pay/ledger", "-o", "json"},
			[]string{"who-can", "--tool", "balance", "--backend", "pay/ledger", "-o", "json", "-f", "testdata/examples"}, exitOK},
		{"diff-live-before", []string{"diff", "--before", "live", "--after", "testdata/whatif/after", "-o", "json", "--fail-on", "granted"},
			[]string{"diff", "--before", "testdata/examples", "--after", "testdata/whatif/after", "-o", "json", "--fail-on", "granted"}, exitFail},
		{"diff-live-after", []string{"diff", "--before", "testdata/whatif/after", "--after", "live", "-o", "json"},
			[]string{"diff", "--before", "testdata/whatif/after", "--after", "testdata/examples", "-o", "json"}, exitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			live, liveErr, code := runDecide(t, "", append(tc.live, "--kubeconfig", kubeconfig)...)
			if code != tc.code {
				t.Fatalf("live: exit %d, want %d\n%s", code, tc.code, liveErr)
			}
			off, offErr, code := runDecide(t, "", tc.offline...)
			if code != tc.code {
				t.Fatalf("offline: exit %d, want %d\n%s", code, tc.code, offErr)
			}
			if live != off {
				t.Errorf("live and offline answers differ:\n--- live\n%s\n--- offline\n%s", live, off)
			}
		})
	}
	// The live cluster equals the examples: no change.
	out, errOut, code := runDecide(t, "", "diff", "--before", "live", "--after", "testdata/examples", "--fail-on", "any", "--kubeconfig", kubeconfig)
	if code != exitOK {
		t.Errorf("live vs examples: exit %d\n%s%s", code, out, errOut)
	}

	// A caller whom RBAC lets list nothing (impersonated, as with kubectl --as): the
	// answer is partial, and a JSON report says so in the document, not only on stderr.
	for _, cmd := range [][]string{
		{"matrix", "-o", "json"},
		{"can-i", "--list", "--from", "sa:agents/billing", "-o", "json"},
		// lint refuses a partial read (exit 2) unless told to accept it.
		{"lint", "-o", "json", "--allow-partial"},
	} {
		out, errOut, code := runDecide(t, "", append(cmd, "--kubeconfig", kubeconfig, "--as", "nobody")...)
		if code == exitUsage {
			t.Fatalf("%s as nobody: exit %d\n%s", cmd[0], code, errOut)
		}
		var doc struct {
			Partial  bool     `json:"partial"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%s as nobody: %v\n%s", cmd[0], err, out)
		}
		if !doc.Partial || len(doc.Warnings) == 0 || !strings.Contains(strings.Join(doc.Warnings, "\n"), "forbidden") {
			t.Errorf("%s as nobody: partial=%v warnings=%q, want a partial answer naming what was forbidden", cmd[0], doc.Partial, doc.Warnings)
		}
		if !strings.Contains(errOut, "forbidden") {
			t.Errorf("%s as nobody: stderr lacks the warnings: %q", cmd[0], errOut)
		}
	}
	// Objects the caller may not list are not "not found" for sure: every answer that
	// names them is indeterminate, naming the kind and the missing permission (the
	// requests' expectations then fail: exit 1).
	out, errOut, code = runDecide(t, "", "simulate", "--requests", "testdata/requests.yaml", "-o", "json", "--kubeconfig", kubeconfig, "--as", "nobody")
	var sim simulateJSON
	if err := json.Unmarshal([]byte(out), &sim); code != exitFail || err != nil || len(sim.Results) == 0 {
		t.Fatalf("simulate as nobody: exit %d (want %d), %v:\n%s%s", code, exitFail, err, out, errOut)
	}
	for _, r := range sim.Results {
		if r.Decision != "indeterminate" || r.DecidedBy != "unread-objects" || !strings.Contains(r.Reason, "gateways.gateway.networking.k8s.io (missing permission: list gateways.gateway.networking.k8s.io)") {
			t.Errorf("simulate as nobody %s: %s by %s (%s), want indeterminate by unread-objects naming the Gateways permission", r.Name, r.Decision, r.DecidedBy, r.Reason)
		}
	}
}
