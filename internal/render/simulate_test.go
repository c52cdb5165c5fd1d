package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/explain"
)

// simulateResults are results of a few requests: allowed and denied, with and without
// expectations (one failing), under a second semantics, with a long path line.
func simulateResults() []*explain.Result {
	var out []*explain.Result
	for i, v := range []string{explain.Allow, explain.Deny, explain.Allow, explain.Deny, explain.Allow} {
		req := &explain.Request{Name: "req-" + strings.Repeat("x", i), From: explain.Caller{Kind: explain.CallerServiceAccount, Namespace: "agents", Name: "sa"},
			Gateway: &explain.NamespacedName{Namespace: "infra", Name: "gw"},
			MCP:     &explain.MCP{Method: "tools/call", Tool: "tool-" + strings.Repeat("long-name-", i)}}
		r := &explain.Result{Name: req.Name, Request: req, Primary: i != 2,
			Decision: explain.Decision{Verdict: v, Level: "backend", DecidedBy: "app/policy-" + string(rune('a'+i)), Semantics: "reference"},
			Path:     explain.PathInfo{Gateway: "infra/gw", Listener: "https", Route: "app/route-" + strings.Repeat("r", 10*i), Backend: "XBackend app/mcp"}}
		if i != 3 {
			r.Expect = &explain.Expectation{Decision: explain.Allow, Passed: v == explain.Allow}
			if v != explain.Allow {
				r.Expect.Failed = []explain.Failure{{Field: explain.FailDecision, Expected: explain.Allow, Got: explain.Deny}}
			}
		}
		out = append(out, r)
	}
	return out
}

// TestSimulateWriterChunks: results written in chunks of any size, an empty chunk
// among them, give the bytes of the results written one by one and of the whole
// rendering, in every format.
func TestSimulateWriterChunks(t *testing.T) {
	results := simulateResults()
	for _, format := range []Format{FormatText, FormatJSON, FormatYAML, FormatJUnit} {
		var whole bytes.Buffer
		var err error
		switch format {
		case FormatText:
			err = SimulateText(&whole, results, Styler{})
		case FormatJUnit:
			err = SimulateJUnit(&whole, "requests.yaml", results)
		default:
			err = format.Encode(&whole, NewDecisionList(nil, results))
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, sizes := range [][]int{{1, 1, 1, 1, 1}, {0, 2, 3}, {5}, {2, 0, 0, 3}} {
			var out bytes.Buffer
			sw, err := NewSimulateWriter(SimulateOutput{Out: &out, ErrOut: &out, Format: format, Requests: "requests.yaml"}, len(results))
			if err != nil {
				t.Fatal(err)
			}
			next := 0
			for _, n := range sizes {
				c := sw.Chunk()
				for _, r := range results[next : next+n] {
					if err := c.Add(r); err != nil {
						t.Fatal(err)
					}
				}
				next += n
				if err := sw.WriteChunk(c); err != nil {
					t.Fatal(err)
				}
			}
			if err := sw.Close(explain.Tally{}); err != nil {
				t.Fatal(err)
			}
			if out.String() != whole.String() {
				t.Errorf("%s in chunks of %v:\n%s\nwant\n%s", format, sizes, out.String(), whole.String())
			}
		}
	}
}
