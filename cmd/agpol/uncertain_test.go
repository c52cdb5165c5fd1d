package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUncertainRegexCommands: on the examples with the ledger route's path written as a
// \C regular expression (Envoy accepts it, Go does not), explain --backend, can-i,
// who-can, matrix and diff each answer the ledger's calls as indeterminate by
// uncertain-route and say why, in text and JSON (docs/limits.md, "Regular expressions").
func TestUncertainRegexCommands(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob("../../testdata/examples/*.yaml")
	replaced := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := strings.Replace(string(b), "        type: PathPrefix\n        value: /mcp", "        type: RegularExpression\n        value: '/mcp\\C*'", 1)
		replaced = replaced || s != string(b)
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !replaced {
		t.Fatal("the examples have no /mcp prefix match")
	}
	why := `'/mcp\C*' uses \C (any byte)`
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"explain", "--from", "sa:agents/billing", "--gateway", "infra/edge", "--backend", "pay/ledger", "--tool", "balance"}, exitIndeterminate,
			[]string{"INDETERMINATE", "Envoy may route the request otherwise", why}},
		{[]string{"can-i", "--from", "sa:agents/billing", "--tool", "balance", "--backend", "pay/ledger"}, exitIndeterminate,
			[]string{"indeterminate by uncertain-route\n", "uncertain-route: Envoy may route the calls of infra/edge:https → XBackend pay/ledger otherwise", why}},
		{[]string{"can-i", "--list", "--from", "sa:agents/billing"}, exitOK,
			[]string{"uncertain-route", "Envoy may route the calls of infra/edge:https → XBackend pay/ledger", "6 indeterminate"}},
		{[]string{"who-can", "--tool", "balance", "--backend", "pay/ledger"}, exitOK,
			[]string{"? by uncertain-route: Envoy may route its calls otherwise", "sa:agents/billing       ?          uncertain-route\n"}},
		{[]string{"matrix", "--backend", "pay/ledger"}, exitOK,
			[]string{"? by uncertain-route: Envoy may route its calls otherwise"}},
		{[]string{"matrix", "--backend", "pay/ledger", "-o", "json"}, exitOK,
			[]string{`"uncertainRoute": "regular expression '/mcp\\C*' uses \\C (any byte)`, `"decidedBy": "uncertain-route"`}},
		{[]string{"diff", "--before", "../../testdata/examples", "--after", dir}, exitOK,
			[]string{"after:  indeterminate by uncertain-route\n", "uncertain-route: Envoy may route the calls of infra/edge:https → XBackend pay/ledger otherwise"}},
	} {
		args := tc.args
		if args[0] != "diff" {
			args = append(args, "-f", dir)
		}
		out, errOut, code := runDecide(t, "", args...)
		flat := strings.Join(strings.Fields(out), " ")
		if code != tc.code {
			t.Errorf("%s: exit %d, want %d: %s", strings.Join(tc.args, " "), code, tc.code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) && !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
				t.Errorf("%s: no %q in:\n%s", strings.Join(tc.args, " "), w, out)
			}
		}
	}
}
