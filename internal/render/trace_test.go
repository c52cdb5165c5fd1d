package render

import (
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

func TestStepReason(t *testing.T) {
	toolsCall := explain.Call{MCP: true, Method: "tools/call", Tool: "add"}
	perm := &effective.Permission{Methods: []effective.MethodMatcher{{Name: "tools/call", Params: []string{"sum"}}, {Name: "prompts/", Prefix: true}},
		L7: &effective.L7Match{Methods: []string{"GET"}, Ports: []int32{8080}}}
	mismatch := func(m explain.Mismatch) explain.Step {
		return explain.Step{Event: explain.EventNotMatched, Mismatch: &m}
	}
	tests := []struct {
		step explain.Step
		want string
	}{
		{explain.Step{Reason: "route note"}, "route note"},
		{explain.Step{Event: explain.EventNoFilter, NoFilter: &effective.NoExtAuthFilter{Gateway: topology.GatewayRef("gw", "gw"), Backend: topology.XBackendRef("app", "be")}},
			"no ext_authz filter on gateway gw/gw for this config: no HTTPRoute of the gateway references XBackend app/be with group agentic.networking.x-k8s.io: the authorizer is never called"},
		{explain.Step{Event: explain.EventAnswerMoot, Level: "backend", Verdict: "allow"}, "the backend authorizer's answer is unknown but does not change the verdict (allow either way)"},
		{explain.Step{Event: explain.EventReplaced, RuleName: "r", KeptBy: "ns/young#r"}, `rule "r" is replaced by the same-named rule of ns/young#r: rules merge by name, the younger policy's wins`},
		{explain.Step{Event: explain.EventAllows, Allows: perm}, "allows tools/call [sum], prompts/* and method in [GET] and port in [8080]"},
		{explain.Step{Event: explain.EventCELSame, CEL: []string{"a", "b"}, DecidedByEither: []string{"x", "y"}},
			"CEL a, b ran past agpol's runtime cost budget of 1000000, so its outcome is unknown (Envoy evaluates it without a limit); the verdict is the same whatever it is (decided by x or y, depending on it)"},
		{mismatch(explain.Mismatch{Field: "source", Test: "nobody", Principal: &effective.Principal{None: true, Why: effective.SourceFieldWithoutType}}), "source: source field without type: matches nobody"},
		{mismatch(explain.Mismatch{Field: "source", Wants: "spiffe://a", Saw: ""}), "source: wants spiffe://a; caller is no client certificate (anonymous)"},
		{mismatch(explain.Mismatch{Field: "source", Wants: "spiffe://a", Saw: "spiffe://b"}), "source: wants spiffe://a; caller is spiffe://b"},
		{mismatch(explain.Mismatch{Field: "source", Wants: "spiffe://cluster.local/ns/mcp/sa/triage", Saw: "spiffe://cluster.local/ns/ai/sa/triage", Test: "namespace-defaulted", Note: "mcp"}),
			"source: wants sa:mcp/triage (the ServiceAccount names no namespace: it defaults to the policy's, mcp); caller is sa:ai/triage"},
		{mismatch(explain.Mismatch{Field: "source", Wants: "spiffe://cluster.local/ns/agents/sa/support", Saw: "spiffe://cluster.local/ns/agents/sa/billing"}),
			"source: wants sa:agents/support; caller is sa:agents/billing"},
		{mismatch(explain.Mismatch{Field: "source", Wants: "spiffe://cluster.local/ns/agents/sa/support", Saw: "spiffe://other.example/ns/agents/sa/support"}),
			"source: wants spiffe://cluster.local/ns/agents/sa/support; caller is spiffe://other.example/ns/agents/sa/support"},
		{mismatch(explain.Mismatch{Field: "cel", Test: "tools-call-only", Wants: "true", Saw: explain.Call{MCP: true, Method: "tools/list"}}), "CEL rules only match tools/call; saw tools/list"},
		{mismatch(explain.Mismatch{Field: "cel", Test: "error", Wants: "x.y", Saw: toolsCall, Note: "no such key: y"}), "CEL x.y: evaluation error (no match): no such key: y"},
		{mismatch(explain.Mismatch{Field: "cel", Test: "error", Wants: "x.y", Saw: toolsCall, CEL: &explain.CELFailure{Why: explain.CELFailEval, Err: "no such key: y"}}), "CEL x.y: evaluation error (no match): no such key: y"},
		{mismatch(explain.Mismatch{Field: "cel", Test: "error", Wants: "x", Saw: toolsCall, CEL: &explain.CELFailure{Why: explain.CELFailOverBudget, Limit: 1000000}}),
			"CEL x: evaluation error (no match): its evaluation ran past agpol's runtime cost budget of 1000000, so its outcome is unknown (Envoy evaluates it without a limit)"},
		{mismatch(explain.Mismatch{Field: "cel", Test: "error", Wants: "'a'", Saw: toolsCall, CEL: &explain.CELFailure{Why: explain.CELFailNotBool, Type: "string"}}), "CEL 'a': evaluation error (no match): expression returned string, not bool"},
		{mismatch(explain.Mismatch{Field: "cel", Test: "false", Wants: "false", Saw: toolsCall}), `CEL false is false for tools/call "add"`},
		{mismatch(explain.Mismatch{Field: "mcp", Wants: perm, Saw: explain.Call{HTTPMethod: "GET", Path: "/mcp?x=1"}}),
			"allows tools/call [sum], prompts/* and method in [GET] and port in [8080]; saw HTTP GET /mcp?x=1 without MCP metadata"},
		{mismatch(explain.Mismatch{Field: "methods", Wants: []string{"GET", "PUT"}, Saw: "POST"}), "methods: wants [GET PUT]; saw POST"},
		{mismatch(explain.Mismatch{Field: "paths", Wants: []effective.PathMatcher{{Type: "Exact", Value: "/a"}}, Saw: "/b"}), "paths: no path match for /b"},
		{mismatch(explain.Mismatch{Field: "headers", Test: "absent", Name: "x-a", Wants: "1"}), "headers: wants x-a; header absent"},
		{mismatch(explain.Mismatch{Field: "headers", Test: "regex", Name: "x-a", Wants: "[0-9]+", Saw: "b"}), `headers: x-a wants /[0-9]+/; saw "b"`},
		{mismatch(explain.Mismatch{Field: "headers", Test: "value", Name: "x-a", Wants: "1", Saw: "2"}), `headers: x-a wants "1"; saw "2"`},
		{mismatch(explain.Mismatch{Field: "headers", Test: "invalid", Name: "x-a", Wants: "(", Saw: "2"}), "headers: x-a has an invalid regular expression"},
		{mismatch(explain.Mismatch{Field: "hosts", Wants: []string{"a.example", "*.b.example"}, Saw: "c.example"}), `hosts: wants [a.example *.b.example]; saw "c.example"`},
		{mismatch(explain.Mismatch{Field: "ports", Wants: []int32{80, 443}, Saw: 8080}), "ports: wants [80 443]; saw 8080"},
		{explain.Step{Event: explain.EventTLSHandshakeFails, Listener: "https", Handshake: explain.HandshakeNoCertificate},
			"listener https requires a client certificate and the caller presents none: the TLS handshake fails before any HTTP request (the kube-agentic-networking translator sets RequireClientCertificate on every HTTPS listener, listener.go:695)"},
		{explain.Step{Event: explain.EventTLSHandshakeFails, Listener: "https", Handshake: explain.HandshakeNotSVID},
			"listener https validates client certificates against the SPIFFE trust bundle (no spec.tls.frontend CA for its port) and the caller's certificate is not a SPIFFE SVID: the TLS handshake fails before any HTTP request (listener.go:684-730)"},
		{explain.Step{Event: explain.EventUnread, Unread: []snapshot.Warning{{Message: "cannot list a: forbidden"}, {Message: "cannot list b: forbidden"}},
			Was: &explain.Was{Verdict: "deny", DecidedBy: "x/p", Level: "backend"}},
			"cannot list a: forbidden; cannot list b: forbidden; on the objects that could be read: DENY by x/p at level backend"},
		{explain.Step{Event: explain.EventUnread, Unread: []snapshot.Warning{{Message: "cannot list a: forbidden"}}}, "cannot list a: forbidden"},
		{explain.Step{Event: explain.EventTLSCAAssumed, Listener: "https", CA: "ConfigMap gw/ca"},
			"listener https validates client certificates against ConfigMap gw/ca, not the SPIFFE trust bundle: agpol assumes that CA issued the caller's SVID (else the TLS handshake fails)"},
	}
	for _, tt := range tests {
		if got := StepReason(tt.step); got != tt.want {
			t.Errorf("StepReason(%+v)\n got %q\nwant %q", tt.step, got, tt.want)
		}
	}
}

func TestDecisionReason(t *testing.T) {
	pos := snapshot.Source{File: "p.yaml", Line: 7}
	near := []explain.Step{{Rule: "r1", Position: &pos, Event: explain.EventNotMatched,
		Mismatch: &explain.Mismatch{Field: "source", Wants: "spiffe://a", Saw: "spiffe://b"}}}
	tests := []struct {
		d    explain.Decision
		want string
	}{
		{explain.Decision{Reason: "no route takes the request: the data plane answers 404", Cause: &explain.Cause{Event: explain.CauseAllowedBy}},
			"no route takes the request: the data plane answers 404"},
		{explain.Decision{}, ""},
		{explain.Decision{Level: "backend", DecidedBy: "ns/p#r", Cause: &explain.Cause{Event: explain.CauseAllowedBy}}, "allowed by ns/p#r at backend level"},
		{explain.Decision{Level: "gateway", DecidedBy: "ns/ea", Cause: &explain.Cause{Event: explain.CauseExtAuthLast}},
			"allowed: every step allowed, the last the authorizer behind ns/ea at gateway level"},
		{explain.Decision{Level: "gateway", DecidedBy: "ns/p", Cause: &explain.Cause{Event: explain.CauseRuleLessOnly}},
			"allowed: the only Allow policy at gateway level, ns/p, has no rules"},
		{explain.Decision{Level: "gateway", DecidedBy: "ns/ea", Cause: &explain.Cause{Event: explain.CauseExtAuthDenied}}, "the gateway authorizer behind ns/ea denied"},
		{explain.Decision{Level: "gateway", DecidedBy: "ns/ea", Cause: &explain.Cause{Event: explain.CauseExtAuthUnknown},
			Branches: []explain.Branch{{Assume: explain.ExtAuth{Gateway: explain.AnswerAllow}, Decision: "allow", DecidedBy: "ns/p#r"},
				{Assume: explain.ExtAuth{Gateway: explain.AnswerDeny}, Decision: "deny", DecidedBy: "ns/ea"}}},
			"depends on the gateway authorizer behind ns/ea; outcome per answer: gateway authorizer allow → ALLOW (ns/p#r); gateway authorizer deny → DENY (ns/ea)"},
		{explain.Decision{Level: "backend", Cause: &explain.Cause{Event: explain.CauseNoRuleMatches}}, "no Allow rule at backend level matches; no rule selects caller without client certificate"},
		{explain.Decision{Level: "backend", Cause: &explain.Cause{Event: explain.CauseNoRuleMatches, Caller: "spiffe://c"}}, "no Allow rule at backend level matches; no rule selects caller spiffe://c"},
		{explain.Decision{Level: "backend", Cause: &explain.Cause{Event: explain.CauseNoRuleMatches, Caller: "spiffe://cluster.local/ns/agents/sa/billing"}},
			"no Allow rule at backend level matches; no rule selects caller sa:agents/billing"},
		{explain.Decision{Level: "backend", Cause: &explain.Cause{Event: explain.CauseNoRuleMatches, Near: near}},
			`no Allow rule at backend level matches; rule "r1" (p.yaml:7) source: wants spiffe://a; caller is spiffe://b`},
		{explain.Decision{Level: "gateway", DecidedBy: "ns/p", Cause: &explain.Cause{Event: explain.CausePolicyMatchesNothing, Near: append(near, near...)}},
			`Allow policy ns/p at gateway level matches nothing (every Allow policy must allow); rule "r1" (p.yaml:7) source: wants spiffe://a; caller is spiffe://b; rule "r1" (p.yaml:7) source: wants spiffe://a; caller is spiffe://b`},
		{explain.Decision{Cause: &explain.Cause{Event: explain.CauseTLSHandshake, Listener: "https", Handshake: explain.HandshakeNoCertificate}},
			"listener https requires a client certificate and the caller presents none: the TLS handshake fails before any HTTP request (the kube-agentic-networking translator sets RequireClientCertificate on every HTTPS listener, listener.go:695)"},
		{explain.Decision{Cause: &explain.Cause{Event: explain.CauseUnread, Unread: []snapshot.Warning{
			{Kind: "xaccesspolicies.agentic.networking.x-k8s.io", Namespace: "infra", Message: "cannot list xaccesspolicies.agentic.networking.x-k8s.io in namespace \"infra\": forbidden"},
			{Kind: "httproutes.gateway.networking.k8s.io", Message: "httproutes.gateway.networking.k8s.io is served only at v9"}},
			Was: &explain.Was{Verdict: "allow", DecidedBy: "infra/p#r", Level: "gateway"}}},
			"cannot decide: agpol could not read xaccesspolicies.agentic.networking.x-k8s.io (missing permission: list xaccesspolicies.agentic.networking.x-k8s.io in namespace infra), httproutes.gateway.networking.k8s.io (httproutes.gateway.networking.k8s.io is served only at v9); the answer depends on them (on the objects that could be read: ALLOW by infra/p#r at level gateway)"},
		{explain.Decision{Cause: &explain.Cause{Event: explain.CauseNotRead, Object: "xbackend pay/ledger", Unread: []snapshot.Warning{
			{Kind: "xbackends.agentic.networking.x-k8s.io", Message: "cannot list xbackends.agentic.networking.x-k8s.io: forbidden"}}}},
			"cannot decide: xbackend pay/ledger is not among the objects read, and agpol could not read xbackends.agentic.networking.x-k8s.io (missing permission: list xbackends.agentic.networking.x-k8s.io)"},
		{explain.Decision{Cause: &explain.Cause{Event: explain.CauseCELUnknown, CEL: []string{"e"}}},
			"CEL e ran past agpol's runtime cost budget of 1000000, so its outcome is unknown (Envoy evaluates it without a limit), and the verdict depends on it"},
	}
	for _, tt := range tests {
		if got := DecisionReason(&tt.d); got != tt.want {
			t.Errorf("DecisionReason(%+v)\n got %q\nwant %q", tt.d, got, tt.want)
		}
	}
}

func TestSentencesFillsJSONText(t *testing.T) {
	pos := snapshot.Source{File: "p.yaml", Line: 7}
	r := &explain.Result{Decision: explain.Decision{Level: "backend", DecidedBy: "ns/p#r", Cause: &explain.Cause{Event: explain.CauseAllowedBy},
		Trace: []explain.Step{{Policy: "ns/p", Rule: "r", Position: &pos, Event: explain.EventAllows, Allows: &effective.Permission{Any: true}}}}}
	v := Sentences(r)
	if v.Reason != "allowed by ns/p#r at backend level" || v.Trace[0].Reason != "allows any request" || v.Trace[0].Source != "p.yaml:7" {
		t.Errorf("Sentences: reason %q, step %q (%q)", v.Reason, v.Trace[0].Reason, v.Trace[0].Source)
	}
	// explain's result is left as it was: render builds its own view.
	if r.Reason != "" || r.Trace[0].Reason != "" || r.Trace[0].Source != "" {
		t.Errorf("Sentences edited explain's result: reason %q, step %q (%q)", r.Reason, r.Trace[0].Reason, r.Trace[0].Source)
	}
	if w := Sentences(v); w.Reason != v.Reason || w.Trace[0].Reason != v.Trace[0].Reason {
		t.Errorf("Sentences of a view differs: %q, %q", w.Reason, w.Trace[0].Reason)
	}
}

// TestCELFailureCodesHaveSentences fails when a CEL failure code has no sentence of its
// own (CELFailureText falls back to the code), and checks that -o json's copy of the
// step carries the sentence in note while explain's step keeps only the data.
func TestCELFailureCodesHaveSentences(t *testing.T) {
	for _, code := range explain.CELFailCodes {
		f := &explain.CELFailure{Why: code, Err: "e", Type: "t", Limit: 1}
		if got := CELFailureText(f); got == "" || got == code {
			t.Errorf("CEL failure %q has no sentence (got %q)", code, got)
		}
	}
	f := &explain.CELFailure{Why: explain.CELFailNotBool, Type: "int"}
	s := explain.Step{Event: explain.EventNotMatched, Mismatch: &explain.Mismatch{Field: "cel", Test: "error", Wants: "1", CEL: f}}
	v := s
	fillStep(&v)
	if v.Mismatch.Note != "expression returned int, not bool" || s.Mismatch.Note != "" {
		t.Errorf("view note %q, step note %q", v.Mismatch.Note, s.Mismatch.Note)
	}
}
