package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hostileExamples copies testdata/examples into dir with terminal control sequences
// (clear screen, a carriage return that lets a line overwrite itself) in the text a
// policy author or a request file controls: rule names, tool names, a CEL expression,
// AuthPolicy rule names and values, request names.
func hostileExamples(t *testing.T, dir string) {
	t.Helper()
	const cls = `\e[2J\e[H` // YAML double-quoted escapes: ESC [2J ESC [H
	repl := strings.NewReplacer(
		"name: handshake", `name: "hand`+cls+`shake"`,
		"name: read-only", `name: "read`+cls+`\ronly"`,
		"params: [balance, history]", `params: [balance, "hist`+cls+`ory"]`,
		"expression: request.mcp.tool_name in ['add', 'multiply']", `expression: "request.mcp.tool_name in ['add', 'multiply', '`+cls+`']"`,
		"company-idp:", `"company`+cls+`idp":`,
		"payments-scope:", `"payments`+cls+`scope":`,
		"value: payments", `value: "pay`+cls+`ments"`,
		"- name: support-reads-balance", `- name: "support-reads-balance`+cls+`"`,
		"- name: cel-allows-add", `- name: "cel-allows-add`+cls+`"`,
	)
	files, err := filepath.Glob("../../testdata/examples/*.yaml")
	files = append(files, "../../testdata/requests.yaml") // the request file, with the hostile names too
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out := repl.Replace(string(data))
		if filepath.Base(f) == "40-access-policies.yaml" {
			// A CEL expression that does not compile: lint quotes it.
			out += `---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: broken-cel, namespace: tools}
spec:
  targetRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: calc}]
  action: Deny
  rules:
  - name: "bad` + cls + `"
    authorization: {type: CEL, cel: {expression: "request.mcp.tool_name == ` + cls + `"}}
`
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestTextOutputEscapesControlCharacters: no text renderer lets a control sequence
// from a policy or a request file reach the terminal raw (the ESC sequences kubectl
// escapes since CVE-2021-25743); each is shown escaped, as ^[ and \r.
func TestTextOutputEscapesControlCharacters(t *testing.T) {
	dir := t.TempDir()
	hostileExamples(t, dir)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	reqs := filepath.Join(dir, "requests.yaml")
	for _, args := range [][]string{
		{"explain", "--from", "sa:agents/support", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "history"},
		{"explain", "--from", "sa:agents/analytics", "--gateway", "infra/edge", "--backend", "tools/calc", "--tool", "add", "--semantics", "all"},
		{"explain", "--from", "sa:agents/billing", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund", "--extauth", "allow"},
		{"simulate", "--requests", reqs},
		{"simulate", "--requests", reqs, "-o", "junit"},
		{"describe", "gateway", "infra/edge"},
		{"describe", "xbackend", "pay/ledger"},
		{"describe", "xbackend", "tools/calc"},
		{"describe", "httproute", "pay/ledger"},
		{"effective", "authpolicy", "--target", "httproute/pay/ledger"},
		{"can-i", "--list", "--from", "sa:agents/support"},
		{"can-i", "--from", "sa:agents/support", "--tool", "history", "--gateway", "infra/edge", "--backend", "pay/ledger"},
		{"who-can", "--tool", "history", "--backend", "pay/ledger"},
		{"matrix"},
		{"matrix", "-o", "markdown"},
		{"lint", "--fail-on", "none"},
		{"lint", "--fail-on", "none", "-o", "github"},
		{"get", "xap", "-A", "-o", "wide"},
	} {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			args := append(args, "-f", dir)
			out, errOut, code := runDecide(t, "", args...)
			if code == exitUsage {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for name, s := range map[string]string{"stdout": out, "stderr": errOut} {
				if i := strings.IndexAny(s, "\x1b\r"); i >= 0 {
					lo := max(0, i-60)
					t.Errorf("raw control character on %s: %q", name, s[lo:min(len(s), i+20)])
				}
			}
			if !strings.Contains(out+errOut, "^[") && !strings.Contains(out, `^\[`) && !slices.Contains([]string{"get", "can-i", "who-can"}, args[0]) {
				t.Errorf("no escaped sequence in the output: the hostile text was not printed at all?\n%s", out)
			}
		})
	}
	t.Run("diff", func(t *testing.T) {
		out, errOut, code := runDecide(t, "", "diff", "--before", "../../testdata/examples", "--after", dir)
		if code == exitUsage {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if i := strings.IndexAny(out+errOut, "\x1b\r"); i >= 0 {
			t.Errorf("raw control character: %q", (out + errOut)[max(0, i-60):min(len(out+errOut), i+20)])
		}
	})
}
