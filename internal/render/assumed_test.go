package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

var update = flag.Bool("update", false, "rewrite the golden files of internal/render/testdata/golden")

// checkGolden compares got with testdata/golden/name (rewritten with -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/render -run %s -update)", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to rewrite):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// TestServiceReadRefused: the examples as a live read refused the Services of every
// namespace would give them. The Services decide only whether the backend exists, so
// the answer stands, and says it assumed the backend's Service exists: in the path line
// of the headline, a note, the trace and JSON (path.backendAssumed), on the routed path
// and on a path naming the backend.
func TestServiceReadRefused(t *testing.T) {
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{"../../testdata/examples"}})
	if err != nil {
		t.Fatal(err)
	}
	s.Services, s.Partial = nil, true
	s.Warnings = append(s.Warnings, snapshot.Warning{Kind: "services", Message: "cannot list services in all namespaces: forbidden", Source: "cluster"})
	sim := explain.New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	from, err := explain.ParseCaller("sa:agents/support")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	edge := &explain.NamespacedName{Namespace: "infra", Name: "edge"}
	requests := map[string]*explain.Request{
		"routed": {From: from, Gateway: edge, HTTP: explain.HTTP{Host: "ledger.mcp.example.com", Time: at},
			MCP: &explain.MCP{Method: "tools/call", Tool: "balance"}},
		"backend": {From: from, Gateway: edge, Backend: &explain.NamespacedName{Namespace: "pay", Name: "ledger"}, HTTP: explain.HTTP{Time: at},
			MCP: &explain.MCP{Method: "tools/call", Tool: "balance"}},
	}
	for _, name := range []string{"routed", "backend"} {
		t.Run(name, func(t *testing.T) {
			results, err := sim.Explain(explain.Full, requests[name])
			if err != nil {
				t.Fatal(err)
			}
			if len(results) != 1 || results[0].Verdict != explain.Allow {
				t.Fatalf("results %+v, want one ALLOW", results)
			}
			const assumed = "Service pay/ledger-mcp of XBackend pay/ledger exists (read refused"
			if got := Sentences(results[0]).Path.BackendAssumed; !strings.HasPrefix(got, assumed) {
				t.Errorf("path.backendAssumed = %q, want it to start %q", got, assumed)
			}
			var text, doc bytes.Buffer
			if err := ExplainText(&text, results, Styler{}); err != nil {
				t.Fatal(err)
			}
			head := strings.SplitN(text.String(), "\n  decided by", 2)[0]
			if !strings.Contains(head, "xbackend pay/ledger [assumed to exist]") {
				t.Errorf("the headline does not say the backend was assumed:\n%s", text.String())
			}
			if err := FormatJSON.Encode(&doc, NewDecisionList(s, results)); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(doc.String(), `"backendAssumed": "`+assumed) {
				t.Errorf("JSON has no path.backendAssumed:\n%s", doc.String())
			}
			checkGolden(t, "service-read-refused-"+name+".txt", text.String())
		})
	}
}
