package explain

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
)

// One test per disputed choice (docs/semantics.md#proposals): the reference outcome and the alternative's.
func TestSemanticsChoices(t *testing.T) {
	p1 := policy("p1", "xb", "Allow", "2026-01-01T00:00:00Z", rules(saTools("r1", "billing", "add")))
	p2 := policy("p2", "xb", "Allow", "2026-02-01T00:00:00Z", rules(saTools("r2", "support", "add")))
	sameName := policy("p2", "xb", "Allow", "2026-02-01T00:00:00Z", rules(saTools("r1", "support", "add")))
	gwSupport := policy("gw-p", "gw", "Allow", "", rules(saTools("g", "support", "add")))
	saOnly := policy("p", "xb", "Allow", "", rules(saTools("r", "billing", "add")))
	l7 := policy("p", "xb", "Allow", "", "rules:\n- name: get-only\n  authorization: {type: Inline, methods: [GET]}\n")
	section := strings.Replace(policy("gw-p", "gw", "Allow", "", rules(saTools("g", "support", "add"))),
		"name: gw}", "name: gw, sectionName: http}", 1)
	enforce := func(f func(*effective.Semantics)) func(*effective.Semantics) { return f }
	runCases(t, []decideCase{
		// docs/semantics.md#allow-combine.
		{name: "allow-combine reference: union", policies: []string{p1, p2}, req: call("billing", "add"), want: want{Allow, "backend", "app/p1#r1"}},
		{name: "allow-combine proposal-0059: every policy must allow", policies: []string{p1, p2}, sem: effective.PresetProposal, req: call("billing", "add"), want: want{Deny, "backend", "app/p2"}},
		{name: "allow-combine proposal-0059: allowed by all", policies: []string{p1, policy("p2", "xb", "Allow", "2026-02-01T00:00:00Z", rules(saTools("r2", "billing", "add")))},
			sem: effective.PresetProposal, req: call("billing", "add"), want: want{Allow, "backend", "app/p2#r2"}},
		{name: "allow-combine reference: unselected caller denied", policies: []string{p1}, req: call("analytics", "add"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "allow-combine pr-220: unselected caller passes the level", policies: []string{p1}, sem: effective.PresetPR220, req: call("analytics", "add"), want: want{Allow, "none", DecidedNoPolicy}},
		{name: "allow-combine pr-220: selected caller must match", policies: []string{p1}, sem: effective.PresetPR220, req: call("billing", "refund"), want: want{Deny, "backend", DecidedImplicitDeny}},
		// docs/semantics.md#rule-name-collision (and #policy-order: the younger policy is the one that wins).
		{name: "rule-name-collision reference: younger same-named rule replaces the older", policies: []string{p1, sameName}, req: call("billing", "add"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "rule-name-collision reference: the younger rule applies", policies: []string{p1, sameName}, req: call("support", "add"), want: want{Allow, "backend", "app/p2#r1"}},
		{name: "rule-name-collision keep-both", policies: []string{p1, sameName}, mod: enforce(func(s *effective.Semantics) { s.RuleCollision = effective.CollisionKeepBoth }),
			req: call("billing", "add"), want: want{Allow, "backend", "app/p1#r1"}},
		// kube-agentic-networking #293 keys rules {namespace}/{policy}/{rule}: both rules stay.
		{name: "rule-name-collision pr-293: rules keyed by policy", policies: []string{p1, sameName}, sem: effective.PresetPR293, req: call("billing", "add"), want: want{Allow, "backend", "app/p1#r1"}},
		{name: "rule-name-collision pr-293-keys: rules keyed by policy", policies: []string{p1, sameName}, sem: effective.PresetPR293Keys, req: call("billing", "add"), want: want{Allow, "backend", "app/p1#r1"}},
		{name: "rule-name-collision pr-293-methods: rules keyed by name", policies: []string{p1, sameName}, sem: effective.PresetPR293Methods, req: call("billing", "add"), want: want{Deny, "backend", DecidedImplicitDeny}},
		// docs/semantics.md#base-protocol.
		{name: "base-protocol reference: no built-in handshake", policies: []string{saOnly}, req: mcpReq("", "initialize"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "base-protocol legacy: built-in handshake", policies: []string{saOnly}, sem: effective.PresetLegacy, req: mcpReq("", "initialize"),
			want: want{Allow, "backend", "app/p#" + effective.BuiltinInitialize}},
		{name: "base-protocol builtin allowances in union mode", policies: []string{saOnly}, mod: enforce(func(s *effective.Semantics) { s.BaseMethods = effective.BaseMethodsBuiltin }),
			req: httpReq("", "GET", nil), want: want{Allow, "backend", "app/p#" + effective.BuiltinHTTPGet}},
		// docs/semantics.md#no-policy.
		{name: "no-policy reference: no policy allows", req: call("billing", "add"), want: want{Allow, "none", DecidedNoPolicy}},
		{name: "no-policy alt: no policy denies", mod: enforce(func(s *effective.Semantics) { s.NoPolicyDefault = effective.NoPolicyDeny }), req: call("billing", "add"),
			want: want{Deny, "none", DecidedNoPolicy}},
		// docs/semantics.md#l7-fields.
		{name: "l7-fields reference: methods ignored", policies: []string{l7}, req: call("billing", "add"), want: want{Allow, "backend", "app/p#get-only"}},
		{name: "l7-fields api-doc: methods enforced", policies: []string{l7}, mod: enforce(func(s *effective.Semantics) { s.L7Fields = effective.Enforced }),
			req: call("billing", "add"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "l7-fields api-doc: GET passes", policies: []string{l7}, mod: enforce(func(s *effective.Semantics) { s.L7Fields = effective.Enforced }),
			req: httpReq("billing", "GET", nil), want: want{Allow, "backend", "app/p#get-only"}},
		// docs/semantics.md#section-name.
		{name: "section-name reference: sectionName ignored", policies: []string{section}, req: call("billing", "add"), want: want{Deny, "gateway", DecidedImplicitDeny}},
		{name: "section-name api-doc: policy only on its listener", policies: []string{section}, mod: enforce(func(s *effective.Semantics) { s.SectionName = effective.Enforced }),
			req: call("billing", "add"), want: want{Allow, "none", DecidedNoPolicy}},
		{name: "section-name api-doc: applies on its listener", policies: []string{gwSupport, section}, mod: enforce(func(s *effective.Semantics) { s.SectionName = effective.Enforced }),
			req: func() *Request { r := call("support", "add"); r.Listener = "http"; return r }(), want: want{Deny, "gateway", DecidedImplicitDeny}},
		// docs/semantics.md#v0alpha0.
		{name: "v0alpha0 reference: v0alpha0 inert", policies: []string{legacyPolicy}, req: call("support", "add"), want: want{Allow, "none", DecidedNoPolicy}},
		{name: "v0alpha0 legacy: v0alpha0 enforced", policies: []string{legacyPolicy}, sem: effective.PresetLegacy, req: call("support", "add"), want: want{Deny, "backend", "app/legacy"}},
		// The legacy translator ran before upstream #271, when objects were stored at
		// v0alpha0: the tools list a v1alpha1 storage prunes is there (TestLegacyKeepsInlineTools).
		{name: "v0alpha0 legacy: the stored object keeps its tools list", policies: []string{legacyPolicy}, sem: effective.PresetLegacy, req: call("billing", "add"), want: want{Allow, "backend", "app/legacy#only-billing"}},
		{name: "empty-authorization legacy: empty tools deny tools/call only", sem: effective.PresetLegacy,
			policies: []string{strings.Replace(legacyPolicy, "tools: [add]", "tools: []", 1)}, req: call("billing", "add"), want: want{Deny, "backend", "app/legacy"}},
		{name: "legacy: ExternalAuth rule asks the authorizer after the RBAC filters", sem: effective.PresetLegacy,
			policies: []string{strings.Replace(legacyPolicy, "{type: InlineTools, tools: [add]}", "{type: ExternalAuth, externalAuth: {protocol: GRPC, backendRef: {name: a, port: 1}, grpc: {}}}", 1)},
			req:      withExt(call("billing", "add"), "", AnswerDeny), want: want{Deny, "backend", "app/legacy#only-billing"}},
	})
}

// docs/semantics.md#recorded-status: recorded status first (reference) vs recomputed admission.
func TestSemanticsRecordedStatus(t *testing.T) {
	rejected := policy("p", "xb", "Allow", "", rules(saTools("r", "billing", "add"))) + `status:
  ancestors:
  - ancestorRef: {group: agentic.networking.x-k8s.io, kind: XBackend, name: xb, namespace: app}
    controllerName: sigs.k8s.io/kube-agentic-networking-controller
    conditions:
    - {type: Accepted, status: "False", reason: InvalidCEL, message: stale, lastTransitionTime: "2026-01-01T00:00:00Z"}
`
	s := loadYAML(t, baseTopology, rejected)
	check3(t, decideOne(t, s, effective.Reference(), call("support", "add")), want{Allow, "none", DecidedNoPolicy})
	alt := effective.Reference()
	alt.Admission = effective.AdmissionRecompute
	check3(t, decideOne(t, s, alt, call("support", "add")), want{Deny, "backend", DecidedImplicitDeny})
}

// Several semantics at once flag the disagreement.
func TestMultiSemanticsDisagreement(t *testing.T) {
	s := loadYAML(t, baseTopology, policy("p1", "xb", "Allow", "", rules(saTools("r1", "billing", "add"))),
		policy("p2", "xb", "Allow", "2026-02-01T00:00:00Z", rules(saTools("r2", "support", "add"))))
	sems, err := effective.ParsePresets("all")
	if err != nil {
		t.Fatal(err)
	}
	res, err := New(model.New(s), sems, "").Explain(Full, call("billing", "add"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(effective.PresetNames()) || !res[0].Primary || res[1].Primary || !res[0].Disagreement {
		t.Fatalf("want one result per preset, primary first, flagged: %d %v %v", len(res), res[0].Primary, res[0].Disagreement)
	}
	got := map[string]string{}
	for _, r := range res {
		got[r.Semantics] = r.Verdict
	}
	if got["reference"] != Allow || got["proposal-0059"] != Deny || got["pr-220"] != Allow || got["v0alpha0-legacy"] != Deny {
		t.Errorf("verdicts per semantics: %v", got)
	}
}

// TestSectionNameChainsPerListener: one simulator decides the same route through two
// listeners. Under a semantics that enforces sectionName, a policy on one listener
// applies there only, so each listener has its own chain (the compiled-chain cache
// keys on the listener then); under reference both listeners share one chain.
func TestSectionNameChainsPerListener(t *testing.T) {
	only := strings.Replace(policy("gw-p", "gw", "Allow", "", rules(saTools("g", "support", "add"))),
		"name: gw}", "name: gw, sectionName: http}", 1)
	s := loadYAML(t, baseTopology, only)
	enforced := sem(t, effective.PresetReference)
	enforced.SectionName = effective.Enforced
	via := func(listener string) *Request { // routed, not named: its chain is cached
		r := call("billing", "add")
		r.Listener, r.Backend, r.HTTP.Path = listener, nil, "/mcp"
		return r
	}
	for _, tc := range []struct {
		name  string
		sem   effective.Semantics
		order []string
		want  map[string]string // listener -> verdict
	}{
		{"enforced, http first", enforced, []string{"http", "https"}, map[string]string{"http": Deny, "https": Allow}},
		{"enforced, https first", enforced, []string{"https", "http"}, map[string]string{"http": Deny, "https": Allow}},
		{"reference, http first", sem(t, effective.PresetReference), []string{"http", "https"}, map[string]string{"http": Deny, "https": Deny}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := New(model.New(s), []effective.Semantics{tc.sem}, "cluster.local")
			b := sim.Decider()
			for _, l := range tc.order {
				res, err := sim.Explain(Full, via(l))
				if err != nil {
					t.Fatal(err)
				}
				if res[0].Path.BackendKind != "XBackend" || !res[0].Path.Resolved {
					t.Fatalf("via %s: the request does not route to the XBackend: %+v", l, res[0].Path)
				}
				ds, err := b.Decide(via(l))
				if err != nil {
					t.Fatal(err)
				}
				if res[0].Verdict != tc.want[l] || ds[0].Verdict != tc.want[l] {
					t.Errorf("via %s: Explain %s, Decider.Decide %s, want %s", l, res[0].Verdict, ds[0].Verdict, tc.want[l])
				}
			}
		})
	}
}
