package main

import "testing"

// TestEveryCommandTwice: every command in every output format prints the same bytes
// when run twice on the same input, with the real clock (no time embedded with
// nanoseconds, no map order, no defaulted request time).
func TestEveryCommandTwice(t *testing.T) {
	t.Chdir("../..")
	explainArgs := []string{"explain", "--from", "sa:agents/billing", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund", "--semantics", "all"}
	type cmd struct {
		args    []string
		formats []string
	}
	for _, c := range []cmd{
		{explainArgs, []string{"text", "json", "yaml"}},
		{[]string{"simulate", "--requests", "testdata/requests.yaml", "--semantics", "all"}, []string{"text", "json", "yaml", "junit"}},
		{[]string{"describe", "gateway", "infra/edge"}, nil},
		{[]string{"describe", "xbackend", "pay/ledger"}, nil},
		{[]string{"effective", "authpolicy", "--target", "httproute/pay/ledger"}, []string{"text", "json", "yaml"}},
		{[]string{"can-i", "--list", "--from", "sa:agents/billing"}, []string{"text", "json", "yaml"}},
		{[]string{"can-i", "--from", "sa:agents/billing", "--tool", "refund", "--gateway", "infra/edge", "--backend", "pay/ledger"}, []string{"text", "json", "yaml"}},
		{[]string{"who-can", "--tool", "refund", "--backend", "pay/ledger"}, []string{"text", "json", "yaml"}},
		{[]string{"matrix", "--semantics", "all"}, []string{"table", "markdown", "csv", "json", "yaml"}},
		{[]string{"diff", "--before", "testdata/whatif/after"}, []string{"text", "markdown", "json", "yaml"}},
		{[]string{"lint", "--fail-on", "none"}, []string{"text", "json", "sarif", "junit", "github"}},
		{[]string{"get", "xap,xb,gw,routes,authpolicies", "-A"}, []string{"table", "wide", "json", "yaml", "name"}},
		{[]string{"get", "gateway", "infra/edge"}, []string{"dot", "mermaid"}},
	} {
		formats := c.formats
		if formats == nil {
			formats = []string{""}
		}
		for _, f := range formats {
			args := append([]string{}, c.args...)
			if c.args[0] == "diff" {
				args = append(args, "--after", "testdata/examples")
			} else {
				args = append(args, "-f", "testdata/examples")
			}
			if f != "" {
				args = append(args, "-o", f)
			}
			t.Run(c.args[0]+" "+f, func(t *testing.T) {
				out1, err1, code1 := runDecide(t, "", args...)
				if code1 == exitUsage {
					t.Fatalf("exit %d: %s", code1, err1)
				}
				out2, err2, code2 := runDecide(t, "", args...)
				if out1 != out2 || err1 != err2 || code1 != code2 {
					t.Errorf("two runs differ (exit %d, %d):\n%s", code1, code2, firstDiff(out1+err1, out2+err2))
				}
			})
		}
	}
}
