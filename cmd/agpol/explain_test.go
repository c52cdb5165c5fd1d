package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/render"
)

type timeT = time.Time

var (
	fixedNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	realNow  = render.Now
)

// decideGolden compares got with a golden file under testdata/golden (rewritten with -update).
func decideGolden(t *testing.T, path, got string) {
	t.Helper()
	if updateGolden() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/agpol -run 'Explain|Describe' -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to rewrite):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestExplainGolden pins the text of explain on the examples, and the exit codes.
func TestExplainGolden(t *testing.T) {
	t.Chdir("../..")
	render.Now = func() time.Time { return fixedNow }
	defer func() { render.Now = realNow }()
	base := []string{"explain", "-f", "testdata/examples", "--gateway", "infra/edge", "--time", "2026-11-20T12:00:00Z", "--color", "never"}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"allow-read", []string{"--from", "sa:agents/support", "--host", "ledger.mcp.example.com", "--tool", "balance"}, exitOK},
		{"deny-implicit-backend", []string{"--from", "sa:agents/support", "--host", "ledger.mcp.example.com", "--tool", "refund", "--extauth", "allow"}, exitFail},
		{"deny-explicit-extauth", []string{"--from", "sa:agents/billing", "--host", "ledger.mcp.example.com", "--tool", "refund", "--extauth", "deny"}, exitFail},
		{"indeterminate", []string{"--from", "sa:agents/billing", "--host", "ledger.mcp.example.com", "--tool", "refund"}, exitIndeterminate},
		{"cel", []string{"--from", "anonymous", "--backend", "tools/calc", "--tool", "divide"}, exitFail},
		{"plain-http-get", []string{"--from", "sa:agents/analytics", "--host", "tools.mcp.example.com", "--path", "/calc", "--method", "GET", "--port", "80"}, exitOK},
		{"semantics-all", []string{"--from", "sa:agents/support", "--backend", "tools/calc", "--tool", "add", "--semantics", "all"}, exitOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runDecide(t, "", append(append([]string{}, base...), tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, errOut)
			}
			decideGolden(t, filepath.Join("testdata/golden/explain", tc.name+".txt"), out)
		})
	}
}

func TestExplainJSONAndErrors(t *testing.T) {
	t.Chdir("../..")
	out, _, code := runDecide(t, "", "explain", "-f", "testdata/examples", "--gateway", "infra/edge", "--from", "sa:agents/support",
		"--host", "ledger.mcp.example.com", "--tool", "balance", "-o", "json")
	if code != 0 || !strings.Contains(out, `"decision": "allow"`) || !strings.Contains(out, `"decidedBy": "pay/ledger-access#read-only"`) ||
		!strings.Contains(out, `"level": "backend"`) || !strings.Contains(out, `"semantics": "reference"`) {
		t.Errorf("exit %d\n%s", code, out)
	}
	for _, args := range [][]string{
		{"--from", "bob"},
		{"--gateway", "infra/none"},
		{"--extauth", "maybe"},
		{"--semantics", "nope"},
		{"-o", "xml"},
		{"--backend", "pay/ledger", "--service", "pay/x"},
		{"--time", "now"},
		{"--backend", "pay/missing"},
	} {
		full := append([]string{"explain", "-f", "testdata/examples", "--gateway", "infra/edge"}, args...)
		if _, errOut, code := runDecide(t, "", full...); code != exitUsage || !strings.Contains("\n"+errOut, "\nerror: ") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// A request naming no listener and no port arrives as a real caller would (identity over
// mTLS), and the answer says it assumed so and where the verdict would differ.
func TestExplainListenerChoice(t *testing.T) {
	t.Chdir("../..")
	m := "testdata/simulate/listener-choice/manifests.yaml"
	out, errOut, code := runDecide(t, "", "explain", "-f", m, "--from", "sa:agents/tester", "--gateway", "infra/gw",
		"--host", "mcp.example.com", "--tool", "echo", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, errOut, out)
	}
	var doc struct {
		Results []struct {
			Decision string `json:"decision"`
			Path     struct {
				Listener        string `json:"listener"`
				ListenerAssumed string `json:"listenerAssumed"`
			} `json:"path"`
			OtherListeners []struct{ Listener, Decision, DecidedBy string } `json:"otherListeners"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Results) != 1 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	r := doc.Results[0]
	if r.Path.Listener != "secure" || !strings.Contains(r.Path.ListenerAssumed, "mTLS") {
		t.Errorf("path %+v", r.Path)
	}
	if len(r.OtherListeners) != 1 || r.OtherListeners[0].Listener != "plain" || r.OtherListeners[0].Decision != "deny" {
		t.Errorf("other listeners %+v", r.OtherListeners)
	}
	text, _, code := runDecide(t, "", "explain", "-f", m, "--from", "sa:agents/tester", "--gateway", "infra/gw",
		"--host", "mcp.example.com", "--tool", "echo", "--color", "never")
	if code != 0 || !strings.Contains(text, "on listener plain (HTTP) the verdict would be DENY") || !strings.Contains(text, "assumed: no listener or port given") {
		t.Errorf("exit %d\n%s", code, text)
	}
	// A mistyped host is a 404: a deny, exit 1, with the reason and the hosts routes take in
	// the headline (the lines before the path line).
	text, _, code = runDecide(t, "", "explain", "-f", m, "--from", "sa:agents/tester", "--gateway", "infra/gw",
		"--host", "mcp.exmaple.com", "--tool", "echo", "--color", "never")
	headline := strings.SplitN(text, "\n  path:", 2)[0]
	if code != exitFail || !strings.HasPrefix(text, "DENY ") || !strings.Contains(headline, "404") ||
		!strings.Contains(headline, "no route takes host mcp.exmaple.com (routes here take") {
		t.Errorf("no route: exit %d\n%s", code, text)
	}
}
