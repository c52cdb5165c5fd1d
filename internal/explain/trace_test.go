package explain

import (
	"reflect"
	"testing"
)

// TestTraceIsData: a traced decision says what failed as values (field, wanted, saw,
// position) and why it was made as a Cause; it carries no sentences.
func TestTraceIsData(t *testing.T) {
	s := loadYAML(t, baseTopology, policy("be", "xb", "Allow", "", rules(saTools("sum", "billing", "add"), saTools("support", "support", "faq"))))
	tests := []struct {
		name  string
		req   *Request
		cause string
		rule  string
		want  Mismatch
	}{
		{name: "wrong caller", req: call("other", "add"), cause: CauseNoRuleMatches, rule: "sum",
			want: Mismatch{Field: "source", Wants: "spiffe://cluster.local/ns/agents/sa/billing", Saw: "spiffe://cluster.local/ns/agents/sa/other"}},
		{name: "anonymous", req: call("", "add"), cause: CauseNoRuleMatches, rule: "sum",
			want: Mismatch{Field: "source", Wants: "spiffe://cluster.local/ns/agents/sa/billing", Saw: ""}},
		{name: "wrong tool", req: call("billing", "refund"), cause: CauseNoRuleMatches, rule: "sum",
			want: Mismatch{Field: "mcp", Saw: Call{MCP: true, Method: "tools/call", Tool: "refund", HTTPMethod: "POST", Path: "/mcp"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decideOne(t, s, sem(t, "reference"), tt.req)
			if got.Reason != "" {
				t.Errorf("reason %q: explain writes no sentence", got.Reason)
			}
			if got.Cause == nil || got.Cause.Event != tt.cause {
				t.Fatalf("cause %+v, want %s", got.Cause, tt.cause)
			}
			var st *Step
			for i := range got.Trace {
				if got.Trace[i].Rule == tt.rule && got.Trace[i].Event == EventNotMatched {
					st = &got.Trace[i]
				}
				if got.Trace[i].Event != "" && got.Trace[i].Reason != "" {
					t.Errorf("step %+v has both an event and a sentence", got.Trace[i])
				}
			}
			if st == nil || st.Mismatch == nil {
				t.Fatalf("no not-matched step of rule %s with a mismatch: %+v", tt.rule, got.Trace)
			}
			if st.Position == nil || st.Position.Line == 0 {
				t.Errorf("step position %+v, want the rule's line", st.Position)
			}
			m := *st.Mismatch
			if tt.want.Field == "mcp" {
				if m.Wants == nil {
					t.Errorf("mcp mismatch wants nothing")
				}
				m.Wants = nil // the rule's permission
			}
			if !reflect.DeepEqual(m, tt.want) {
				t.Errorf("mismatch %+v, want %+v", m, tt.want)
			}
		})
	}
}

// The near misses of an implicit deny come ranked by what a person would fix: a rule that
// names the call and misses only on the caller (here, a ServiceAccount source without a
// namespace, which took the policy's) before a rule that selects the caller for other
// calls.
func TestNearMissRanking(t *testing.T) {
	body := `rules:
- name: base-protocol
  source: {type: ServiceAccount, serviceAccount: {namespace: ai, name: triage}}
  authorization: {type: Inline, mcp: {methods: [{name: initialize}, {name: tools/list}]}}
- name: ticket
  source: {type: ServiceAccount, serviceAccount: {name: triage}}
  authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [create_ticket]}]}}
`
	s := loadYAML(t, baseTopology, policy("be", "xb", "Allow", "", body))
	r := call("", "create_ticket")
	r.From = Caller{Kind: CallerServiceAccount, Namespace: "ai", Name: "triage"}
	got := decideOne(t, s, sem(t, "reference"), r)
	if got.Cause == nil || got.Cause.Event != CauseNoRuleMatches || len(got.Cause.Near) == 0 {
		t.Fatalf("cause %+v, want no-rule-matches with near misses", got.Cause)
	}
	n := got.Cause.Near[0]
	if n.Rule != "ticket" || n.Mismatch == nil || n.Mismatch.Field != "source" || n.Mismatch.Test != "namespace-defaulted" || n.Mismatch.Note != "app" {
		t.Errorf("first near miss %s %+v, want rule ticket missing on its defaulted namespace (app)", n.Rule, n.Mismatch)
	}
}
