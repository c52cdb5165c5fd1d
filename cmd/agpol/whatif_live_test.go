package main

import (
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
}
