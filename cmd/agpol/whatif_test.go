package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestWhatIfGolden pins the output of can-i, who-can, matrix, diff and the graphs on the
// examples, and their exit codes.
func TestWhatIfGolden(t *testing.T) {
	t.Chdir("../..")
	ex := []string{"-f", "testdata/examples"}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"cani-list-billing.txt", append([]string{"can-i", "--list", "--from", "sa:agents/billing"}, ex...), exitOK},
		{"cani-list-billing.json", append([]string{"can-i", "--list", "--from", "sa:agents/billing", "--backend", "pay/ledger", "-o", "json"}, ex...), exitOK},
		{"cani-list-semantics.txt", append([]string{"can-i", "--list", "--from", "sa:agents/billing", "--backend", "tools/calc", "--semantics", "all"}, ex...), exitOK},
		{"cani-yes.txt", append([]string{"can-i", "--from", "sa:agents/support", "--tool", "balance", "--gateway", "infra/edge", "--backend", "pay/ledger"}, ex...), exitOK},
		{"cani-no.txt", append([]string{"can-i", "--from", "sa:agents/support", "--tool", "refund", "--gateway", "infra/edge", "--backend", "pay/ledger"}, ex...), exitFail},
		{"cani-indeterminate.txt", append([]string{"can-i", "--from", "sa:agents/billing", "--tool", "refund", "--backend", "pay/ledger"}, ex...), exitIndeterminate},
		{"cani-extauth-allow.txt", append([]string{"can-i", "--from", "sa:agents/billing", "--tool", "refund", "--backend", "pay/ledger", "--extauth", "allow"}, ex...), exitOK},
		{"cani-listeners-differ.txt", append([]string{"can-i", "--from", "sa:agents/billing", "--tool", "add", "--backend", "tools/calc"}, ex...), exitFail},
		{"cani-gateway-offers.txt", append([]string{"can-i", "--from", "sa:agents/support", "--tool", "refund", "--gateway", "infra/edge"}, ex...), exitFail},
		{"cani-inventory-differ.json", append([]string{"can-i", "--from", "sa:agents/support", "--tool", "search_docs", "--gateway", "infra/edge", "--tools", "testdata/whatif/tools.json", "-o", "json"}, ex...), exitFail},
		{"whocan-any-backend.txt", append([]string{"who-can", "--tool", "refund"}, ex...), exitOK},
		{"cani-no-path.txt", append([]string{"can-i", "--from", "sa:agents/billing", "--tool", "refund", "--listener", "http", "--backend", "pay/ledger"}, ex...), exitFail},
		{"whocan-refund.txt", append([]string{"who-can", "--tool", "refund", "--backend", "pay/ledger"}, ex...), exitOK},
		{"whocan-tools-list.txt", append([]string{"who-can", "--method", "tools/list", "--backend", "tools/calc", "--gateway", "infra/edge"}, ex...), exitOK},
		{"whocan-add-semantics.json", append([]string{"who-can", "--tool", "add", "--backend", "tools/calc", "--listener", "https", "--semantics", "all", "-o", "json"}, ex...), exitOK},
		{"matrix.txt", append([]string{"matrix"}, ex...), exitOK},
		{"matrix-semantics.txt", append([]string{"matrix", "--semantics", "all"}, ex...), exitOK},
		{"matrix-inventory.csv", append([]string{"matrix", "--tools", "testdata/whatif/tools.json", "-o", "csv"}, ex...), exitOK},
		{"matrix-inventory.md", append([]string{"matrix", "--tools", "testdata/whatif/tools.json", "-o", "markdown", "--listener", "https"}, ex...), exitOK},
		{"matrix.json", append([]string{"matrix", "--backend", "pay/ledger", "--semantics", "reference,proposal-0059", "-o", "json"}, ex...), exitOK},
		{"diff.txt", []string{"diff", "--before", "testdata/examples", "--after", "testdata/whatif/after"}, exitOK},
		{"diff.md", []string{"diff", "--before", "testdata/examples", "--after", "testdata/whatif/after", "-o", "markdown", "--fail-on", "revoked"}, exitFail},
		{"diff.json", []string{"diff", "--before", "testdata/examples", "--after", "testdata/whatif/after", "-o", "json", "--semantics", "all"}, exitOK},
		{"diff-none.txt", []string{"diff", "--before", "testdata/examples", "--after", "testdata/examples", "--fail-on", "any"}, exitOK},
		{"graph.dot", append([]string{"get", "gateway", "edge", "-o", "dot"}, ex...), exitOK},
		{"graph.mmd", append([]string{"get", "gateway", "edge", "-o", "mermaid"}, ex...), exitOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runDecide(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			if strings.HasSuffix(tc.name, ".json") && !json.Valid([]byte(out)) {
				t.Errorf("invalid JSON:\n%s", out)
			}
			decideGolden(t, filepath.Join("testdata/whatif/golden", tc.name), out)
		})
	}
}

// TestDiffFailOn: --fail-on exits 1 exactly when a change of that kind exists.
func TestDiffFailOn(t *testing.T) {
	t.Chdir("../..")
	for _, tc := range []struct {
		after, failOn string
		code          int
	}{
		{"testdata/whatif/after", "granted", exitFail},
		{"testdata/whatif/after", "revoked", exitFail},
		{"testdata/whatif/after", "any", exitFail},
		{"testdata/whatif/after", "none", exitOK},
		{"testdata/examples", "granted", exitOK},
		{"testdata/examples", "any", exitOK},
	} {
		_, errOut, code := runDecide(t, "", "diff", "--before", "testdata/examples", "--after", tc.after, "--fail-on", tc.failOn)
		if code != tc.code {
			t.Errorf("%s --fail-on %s: exit %d, want %d\n%s", tc.after, tc.failOn, code, tc.code, errOut)
		}
	}
}

// TestWhatIfUsage: bad flags exit 2 with a message.
func TestWhatIfUsage(t *testing.T) {
	t.Chdir("../..")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"can-i", "--list", "-f", "testdata/examples"}, "--from"},
		{[]string{"can-i", "--from", "sa:agents/billing", "-f", "testdata/examples"}, "--list or --tool"},
		{[]string{"can-i", "--list", "--tool", "x", "--from", "sa:agents/billing", "-f", "testdata/examples"}, "--list or --tool"},
		{[]string{"can-i", "--list", "--from", "bob", "-f", "testdata/examples"}, "invalid caller"},
		{[]string{"who-can", "--tool", "x", "-f", "testdata/examples"}, "--backend"},
		{[]string{"who-can", "--backend", "pay/ledger", "-f", "testdata/examples"}, "--tool"},
		{[]string{"who-can", "--tool", "refund", "--listener", "http", "--backend", "pay/ledger", "-f", "testdata/examples"}, "no accepted route"},
		// Names not in the input: exit 2, "not found", and the nearest name when one is close.
		{[]string{"who-can", "--tool", "x", "--backend", "pay/nope", "-f", "testdata/examples"}, "--backend: backend pay/nope not found in the input\n"},
		{[]string{"can-i", "--from", "sa:agents/billing", "--tool", "x", "--backend", "pay/nope", "-f", "testdata/examples"}, "--backend: backend pay/nope not found in the input\n"},
		{[]string{"who-can", "--tool", "x", "--backend", "pay/ledgr", "-f", "testdata/examples"}, "backend pay/ledgr not found in the input; did you mean pay/ledger?"},
		{[]string{"can-i", "--from", "sa:agents/billing", "--tool", "x", "--backend", "ledgr", "-n", "pay", "-f", "testdata/examples"}, "backend pay/ledgr not found in the input; did you mean pay/ledger?"},
		{[]string{"can-i", "--from", "sa:agents/billing", "--tool", "x", "--gateway", "infra/edg", "-f", "testdata/examples"}, "gateway infra/edg not found in the input; did you mean infra/edge?"},
		{[]string{"who-can", "--tool", "x", "--gateway", "infra/edg", "--backend", "pay/ledger", "-f", "testdata/examples"}, "gateway infra/edg not found in the input; did you mean infra/edge?"},
		{[]string{"who-can", "--tool", "x", "--listener", "htps", "--backend", "pay/ledger", "-f", "testdata/examples"}, "listener htps not found on any gateway; did you mean https?"},
		{[]string{"matrix", "--backend", "pay/ledgr", "-f", "testdata/examples"}, "did you mean pay/ledger?"},
		{[]string{"matrix", "-o", "xml", "-f", "testdata/examples"}, "unknown output format"},
		{[]string{"matrix", "--tools", "testdata/whatif/missing.json", "-f", "testdata/examples"}, "reading tools inventory"},
		{[]string{"matrix", "--tools", "testdata/whatif/after/10-gateway.yaml", "-f", "testdata/examples"}, "10-gateway.yaml:1"},
		{[]string{"diff", "--before", "testdata/examples"}, "--after"},
		{[]string{"diff", "--before", "testdata/examples", "--after", "testdata/examples", "--fail-on", "all"}, "--fail-on"},
		{[]string{"diff", "-f", "testdata/examples", "--before", "a", "--after", "b"}, "not -f"},
		{[]string{"get", "routes", "-o", "dot", "-f", "testdata/examples"}, "draws gateways"},
		{[]string{"get", "gateway", "nope", "-o", "mermaid", "-f", "testdata/examples"}, "not found"},
	} {
		_, errOut, code := runDecide(t, "", tc.args...)
		if code != exitUsage && !(strings.Contains(tc.msg, "not found") && code != 0) {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, exitUsage, errOut)
		}
		if !strings.Contains(errOut, tc.msg) {
			t.Errorf("%v: stderr %q does not mention %q", tc.args, errOut, tc.msg)
		}
	}
}

// TestDiffSemantics: the same objects under two semantics, in the granted/revoked form of
// a before/after diff: what the open upstream pull requests would change.
func TestDiffSemantics(t *testing.T) {
	t.Chdir("../..")
	f := "testdata/semantics/upstream-prs.yaml"
	for _, tc := range []struct {
		preset string
		want   []string
	}{
		// #293: methods: [] allows nothing instead of everything.
		{"pr-293", []string{"Comparing semantics reference → pr-293", "before: allow by app/calc-access#nothing-yet (backend)", "0 granted, 4 revoked, 0 decided by a different rule"}},
		// #236: the policy with a bad CEL rule is enforced, its good rule decides.
		// (anonymous fails the HTTPS listener's TLS handshake under both: not revoked.)
		{"pr-236", []string{"after:  allow by app/docs-access#search-only (backend)", "0 granted, 11 revoked, 1 decided by a different rule"}},
	} {
		out, errOut, code := runDecide(t, "", "diff", "--semantics", "reference", "--semantics", tc.preset, "-f", f, "--fail-on", "revoked")
		if code != exitFail {
			t.Errorf("%s: exit %d\n%s%s", tc.preset, code, out, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.preset, w, out)
			}
		}
	}
	// The same preset twice changes nothing; one semantics alone is a usage error.
	if out, _, code := runDecide(t, "", "diff", "--semantics", "reference,reference", "-f", f); code != exitUsage {
		t.Errorf("one semantics: exit %d\n%s", code, out)
	}
	if _, errOut, code := runDecide(t, "", "diff", "--semantics", "reference", "--semantics", "pr-293", "--before", f, "--after", f, "-f", f); code != exitUsage {
		t.Errorf("-f with --before/--after: exit %d\n%s", code, errOut)
	}
}

// TestWhatIfUnknownNames: an identity or a tool that appears in no policy, no
// ServiceAccount and no inventory gets a warning with the nearest known name; the
// answer is the one for any caller (any tool) no rule names, as without the warning.
func TestWhatIfUnknownNames(t *testing.T) {
	t.Chdir("../..")
	ex := []string{"-f", "testdata/examples"}
	for _, tc := range []struct {
		args     []string
		warn     string // "" = no warning
		sameAs   []string
		wantCode int
	}{
		{[]string{"can-i", "--from", "sa:agents/biling", "--tool", "refund", "--backend", "pay/ledger"},
			"warning: --from sa:agents/biling appears in no policy and no ServiceAccount of the input: answered as for any caller no rule names; did you mean sa:agents/billing?",
			[]string{"can-i", "--from", "sa:nowhere/nobody", "--tool", "refund", "--backend", "pay/ledger"}, exitFail},
		{[]string{"can-i", "--from", "sa:agents/billing", "--tool", "refnd", "--backend", "pay/ledger", "--extauth", "allow"},
			"warning: --tool refnd appears in no policy and no tools inventory: answered as for any tool no policy names; did you mean refund?",
			nil, exitFail},
		{[]string{"who-can", "--tool", "refnd", "--backend", "pay/ledger"},
			"warning: --tool refnd appears in no policy and no tools inventory: answered as for any tool no policy names; did you mean refund?",
			nil, exitOK},
		{[]string{"can-i", "--from", "sa:agents/billing", "--tool", "refund", "--backend", "pay/ledger", "--extauth", "allow"}, "", nil, exitOK},
		{[]string{"who-can", "--tool", "zzzzzzzz", "--backend", "pay/ledger"},
			"warning: --tool zzzzzzzz appears in no policy and no tools inventory: answered as for any tool no policy names\n", nil, exitOK},
	} {
		out, errOut, code := runDecide(t, "", append(tc.args, ex...)...)
		if code != tc.wantCode {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.wantCode, errOut)
		}
		if tc.warn == "" && strings.Contains(errOut, "appears in no policy") || tc.warn != "" && !strings.Contains(errOut, tc.warn) {
			t.Errorf("%v: stderr %q, want %q", tc.args, errOut, tc.warn)
		}
		if tc.sameAs != nil {
			other, _, _ := runDecide(t, "", append(tc.sameAs, ex...)...)
			if other != out || out == "" {
				t.Errorf("%v answers differently from %v:\n%s\n---\n%s", tc.args, tc.sameAs, out, other)
			}
		}
	}
}
