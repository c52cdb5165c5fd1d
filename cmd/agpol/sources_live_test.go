package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestOneAnswerWhateverTheSource: the shipped examples give the same lint, describe
// (gateway, xaccesspolicy and authpolicy, text and -o json|yaml), explain, simulate and
// get answers read from the files, from a real API server that
// holds them (created as kubectl apply would), and from a --snapshot-out replay of that
// cluster. Only what is about the source itself may differ: positions (file:line vs
// cluster), how a finding words what it saw (a file shows the field the API server will
// drop; a cluster, the object that lost it), and the age of objects the test created.
func TestOneAnswerWhateverTheSource(t *testing.T) {
	kubeconfig := startLintCluster(t)
	t.Chdir("../..")
	replay := filepath.Join(t.TempDir(), "snapshot.yaml")
	if _, errOut, code := runDecide(t, "", "get", "xap", "-A", "--kubeconfig", kubeconfig, "--snapshot-out", replay); code != exitOK {
		t.Fatalf("snapshot-out: exit %d\n%s", code, errOut)
	}
	sources := []struct {
		name string
		args []string
	}{
		{"files", []string{"-f", "testdata/examples"}},
		{"live", []string{"--kubeconfig", kubeconfig}},
		{"replay", []string{"-f", replay}},
	}
	for _, tc := range []struct {
		name string
		args []string
		norm func(string) string
	}{
		{"lint", []string{"lint", "-o", "json"}, lintCodes},
		{"explain", []string{"explain", "--from", "sa:agents/billing", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund", "--extauth", "allow", "--time", "2026-05-01T10:00:00Z", "-o", "json"}, withoutSources},
		{"simulate", []string{"simulate", "--requests", "testdata/requests.yaml", "-o", "json"}, withoutSources},
		{"describe", []string{"describe", "gateway", "infra/edge"}, withoutSourcesOrWrap},
		{"describe-xap", []string{"describe", "xap", "tools/calc-arithmetic"}, withoutSourcesOrWrap},
		{"describe-xap-json", []string{"describe", "xap", "pay/ledger-fraud-check", "-o", "json"}, withoutSources},
		// Not files: the v0alpha0-legacy view reads authorization.tools, which a manifest
		// carries and a cluster storing v1alpha1 has dropped (docs/semantics.md#v0alpha0);
		// the cluster and its replay agree.
		{"describe-xap-legacy", []string{"describe", "xap", "tools/calc-legacy", "-o", "yaml"}, withoutSources},
		// Under v0alpha0-legacy, the rule whose tools storage dropped says so (toolsDropped).
		{"explain-legacy", []string{"explain", "--semantics", "v0alpha0-legacy", "--from", "sa:agents/billing", "--tool", "add", "--backend", "tools/calc", "--gateway", "infra/edge", "-o", "json"}, withoutSources},
		{"describe-authpolicy", []string{"describe", "authpolicy", "pay/ledger-scopes"}, withoutSourcesOrWrap},
		{"describe-authpolicies-json", []string{"describe", "authpolicies", "-A", "-o", "json"}, withoutSources},
		{"get", []string{"get", "xap", "-A"}, withoutAge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := 0 // the first source compared
			if strings.HasSuffix(tc.name, "-legacy") {
				first = 1
			}
			var firstOut string
			for i, src := range sources[first:] {
				out, errOut, code := runDecide(t, "", append(append([]string{}, tc.args...), src.args...)...)
				if code != exitOK && code != exitFail {
					t.Fatalf("%s: exit %d\n%s", src.name, code, errOut)
				}
				got := tc.norm(out)
				if i == 0 {
					firstOut = got
					if tc.name == "explain-legacy" && !strings.Contains(got, `"toolsDropped": true`) {
						t.Errorf("%s: no toolsDropped on the rule whose tools storage dropped:\n%s", src.name, got)
					}
					continue
				}
				if got != firstOut {
					t.Errorf("%s and %s differ:\n--- %s\n%s\n--- %s\n%s", sources[first].name, src.name, sources[first].name, firstOut, src.name, got)
				}
			}
		})
	}
}

// lintCodes is a lint JSON report as the sorted list of "code kind ns/name".
func lintCodes(out string) string {
	var doc struct {
		Findings []struct {
			Code   string `json:"code"`
			Object struct{ Kind, Namespace, Name string }
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		return "not JSON: " + out
	}
	var l []string
	for _, f := range doc.Findings {
		l = append(l, f.Code+" "+f.Object.Kind+" "+f.Object.Namespace+"/"+f.Object.Name)
	}
	sort.Strings(l)
	return strings.Join(l, "\n")
}

var sourcePositions = regexp.MustCompile(`testdata/examples/[0-9a-z-]+\.yaml(:[0-9]+)*|/[^ "()]*/snapshot\.yaml(:[0-9]+)*|cluster:envtest`)

// withoutSources replaces every source position (file:line, cluster:CONTEXT) by "<pos>".
func withoutSources(out string) string { return sourcePositions.ReplaceAllString(out, "<pos>") }

// withoutSourcesOrWrap is withoutSources with the text's words in one line: a position
// of another length wraps a line elsewhere.
func withoutSourcesOrWrap(out string) string {
	var words []string
	for _, f := range strings.Fields(withoutSources(out)) {
		if f != "│" { // the line of a tree (describe's chains) that a wrapped item continues on
			words = append(words, f)
		}
	}
	return strings.Join(words, " ")
}

// withoutAge drops the last column (AGE) of a table.
func withoutAge(out string) string {
	var l []string
	for _, line := range strings.Split(out, "\n") {
		if i := strings.LastIndex(strings.TrimRight(line, " "), "   "); i > 0 {
			line = line[:i]
		}
		l = append(l, line)
	}
	return strings.Join(l, "\n")
}
