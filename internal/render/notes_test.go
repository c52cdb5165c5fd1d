package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/describe"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/topology"
)

// TestEveryCodeHasASentence fails when effective or describe adds a code that render
// does not write: the sentence of a known code is not the fallback a function gives
// for a code it does not know.
func TestEveryCodeHasASentence(t *testing.T) {
	const unknown = "no-such-code"
	families := []struct {
		name  string
		codes []string
		text  func(code string) string
	}{
		{"effective.Ignored", effective.IgnoredWhys, func(c string) string { return IgnoredText(&effective.Ignored{Why: c}) }},
		{"effective.Principal", effective.SourceWhys, func(c string) string { return PrincipalNote(&effective.Principal{Why: c}) }},
		{"effective.Permission", effective.PermissionWhys, func(c string) string { return PermissionNote(&effective.Permission{Why: c}) }},
		{"describe.NotRun", describe.NotRunWhys, func(c string) string {
			return NotRunText(&describe.NotRun{Why: c, Ignored: &effective.Ignored{}, OtherDataPlane: &effective.OtherDataPlane{}})
		}},
		{"describe.Note", describe.NoteWhys, func(c string) string { return ViewNoteText(describe.Note{Why: c}) }},
		{"describe.Listener.MTLS", describe.MTLSModes, func(c string) string { return MTLSText(describe.Listener{MTLS: c}) }},
	}
	for _, f := range families {
		if len(f.codes) == 0 {
			t.Errorf("%s: no codes listed", f.name)
		}
		fallback := f.text(unknown)
		if !strings.Contains(fallback, unknown) {
			t.Fatalf("%s: the fallback %q does not show the code", f.name, fallback)
		}
		for _, c := range f.codes {
			if got := f.text(c); got == "" || got == strings.ReplaceAll(fallback, unknown, c) {
				t.Errorf("%s: code %q has no sentence in render (got %q)", f.name, c, got)
			}
		}
	}
}

// TestNoteSentences writes each note from effective's and describe's data.
func TestNoteSentences(t *testing.T) {
	gw, be := topology.GatewayRef("infra", "edge"), topology.XBackendRef("pay", "ledger")
	for _, tt := range []struct{ got, want string }{
		{IgnoredText(&effective.Ignored{Why: effective.IgnoredNotAccepted, Code: "InvalidCEL", From: "computed", Message: "m"}), "not accepted (InvalidCEL, computed): m"},
		{IgnoredText(&effective.Ignored{Why: effective.IgnoredNoSections, SectionName: "a", TargetKind: "XBackend"}), `sectionName "a": XBackend has no sections, the policy does not attach`},
		{IgnoredText(&effective.Ignored{Why: effective.IgnoredNoListener, SectionName: "a"}), `sectionName "a" names no listener of the gateway, the policy does not attach`},
		{IgnoredText(&effective.Ignored{Why: effective.IgnoredOtherListener, SectionName: "a"}), `sectionName "a": applies only to listener a`},
		{IgnoredText(&effective.Ignored{Why: effective.IgnoredExtAuthNotFirst, UsedExtAuth: "pay/first"}), "not the first ExternalAuth policy on the target (only pay/first is used)"},
		{IgnoredText(&effective.Ignored{Why: effective.IgnoredUnknownAction, Action: "Deny"}), `action "Deny" is neither Allow nor ExternalAuth`},
		{PrincipalNote(&effective.Principal{Any: true, Why: effective.SourceOmitted}), "source omitted: any caller"},
		{PrincipalNote(&effective.Principal{None: true, Why: effective.SourceTypeWithoutField, SourceType: "SPIFFE"}), `source type "SPIFFE" without its field: matches nobody`},
		{PrincipalNote(&effective.Principal{Any: true, Why: effective.SourceOtherKindField, SourceType: "ServiceAccount"}), `source type "ServiceAccount" with the other kind's field: matches any caller`},
		{PrincipalNote(&effective.Principal{Value: "spiffe://x"}), ""},
		{PermissionNote(&effective.Permission{Any: true, Why: effective.PermissionAuthorizationOmitted}), "authorization omitted: any request"},
		{PermissionNote(&effective.Permission{NotToolsCall: true, Why: effective.PermissionUnknownType, AuthorizationType: "Foo"}), `authorization type "Foo": everything but tools/call`},
		{PermissionNote(&effective.Permission{Why: effective.PermissionEmptyMethods}), "methods: [] lists no MCP method: matches nothing"},
		{NoExtAuthFilterText(&effective.NoExtAuthFilter{Gateway: gw, Backend: be}),
			"no ext_authz filter on gateway infra/edge for this config: no HTTPRoute of the gateway references XBackend pay/ledger with group agentic.networking.x-k8s.io"},
		{NotRunText(&describe.NotRun{Why: describe.NotRunInert, NoFilter: &effective.NoExtAuthFilter{Gateway: gw, Backend: be}}),
			"inert: no ext_authz filter on gateway infra/edge for this config: no HTTPRoute of the gateway references XBackend pay/ledger with group agentic.networking.x-k8s.io"},
		{NotRunText(&describe.NotRun{Why: describe.NotRunTargetNotFound, Kind: "XBackend", Name: "pay/gone"}), "XBackend pay/gone is not in the input"},
		{NotRunText(nil), ""},
		{ViewNoteText(describe.Note{Why: describe.NoteNotAttached, Gateway: gw, Listener: "https",
			Attachment: &topology.Attachment{Reason: topology.ReasonNotAllowedByListeners, Miss: &topology.AttachMiss{Why: topology.AttachFromNone}}}),
			"not attached to infra/edge listener https: NotAllowedByListeners: the listener allows no routes (allowedRoutes from None)"},
		{MTLSText(describe.Listener{MTLS: describe.MTLSUnknown, Protocol: "TCP", DataPlane: topology.DataPlaneIstio}), "agpol does not model client certificates of TCP listeners on the istio data plane"},
		{ShadowText(describe.Shadow{Rule: "call", Other: "app/p2#call", On: "app/xb"}), `rule "call" is replaced by app/p2#call on app/xb`},
		{ShadowText(describe.Shadow{Rule: "call", Other: "app/p1#call", On: "app/xb", Replaces: true}), `rule "call" replaces app/p1#call on app/xb`},
	} {
		if tt.got != tt.want {
			t.Errorf("got  %q\nwant %q", tt.got, tt.want)
		}
	}
}

// TestNoteViewsCopy writes the notes of -o json into copies: the engine's shared
// chains, levels and rules keep no sentence, and what two paths share is copied once.
func TestNoteViewsCopy(t *testing.T) {
	rule := &effective.Rule{Name: "r", Principal: effective.Principal{Any: true, Why: effective.SourceOmitted},
		Permission: effective.Permission{Any: true, Why: effective.PermissionAuthorizationOmitted}}
	plain := &effective.Rule{Name: "plain", Principal: effective.Principal{Value: "spiffe://x"}}
	pol := &effective.Policy{Namespace: "app", Name: "p", Rules: []*effective.Rule{plain, rule}}
	nf := &effective.NoExtAuthFilter{Gateway: topology.GatewayRef("gw", "gw"), Backend: topology.XBackendRef("app", "xb")}
	lvl := &effective.Level{Name: effective.LevelBackend, Allow: []*effective.Policy{pol}, NoFilter: nf,
		Ignored: []effective.Ignored{{ID: "app/q", Why: effective.IgnoredLegacyNoAction}}}
	untouched := &effective.Level{Name: effective.LevelGateway, Merged: []*effective.Rule{plain}}
	chain := &effective.Chain{Gateway: untouched, Backend: lvl}

	nv := newNoteViews()
	c := nv.chain(chain)
	if c == chain || c.Gateway != untouched || c.Backend == lvl {
		t.Fatalf("copy %p of %p: gateway level copied %v, backend level copied %v", c, chain, c.Gateway != untouched, c.Backend != lvl)
	}
	b := c.Backend
	if b.ExtAuthNote != NoExtAuthFilterText(nf) || b.Ignored[0].Reason != "v0alpha0 object: stored without spec.action, never enforced" {
		t.Errorf("level notes %q, %q", b.ExtAuthNote, b.Ignored[0].Reason)
	}
	r := b.Allow[0].Rules[1]
	if r.Principal.Note != "source omitted: any caller" || r.Permission.Note != "authorization omitted: any request" || b.Allow[0].Rules[0] != plain {
		t.Errorf("rule notes %q, %q; rule without notes copied: %v", r.Principal.Note, r.Permission.Note, b.Allow[0].Rules[0] != plain)
	}
	if lvl.ExtAuthNote != "" || lvl.Ignored[0].Reason != "" || rule.Principal.Note != "" || rule.Permission.Note != "" || pol.Rules[1] != rule {
		t.Errorf("the engine's level or rule was written into: %+v %+v", lvl, rule)
	}
	if nv.level(lvl) != b || nv.rule(rule) != r {
		t.Errorf("a level or rule shared by two paths is copied twice")
	}

	step := explain.Step{Event: explain.EventNotMatched, Allows: &rule.Permission,
		Mismatch: &explain.Mismatch{Field: "source", Test: "nobody", Principal: &effective.Principal{None: true, Why: effective.SourceFieldWithoutType}}}
	res := &explain.Result{Decision: explain.Decision{Trace: []explain.Step{step}}}
	v := Sentences(res)
	if got := v.Trace[0]; got.Allows.Note != "authorization omitted: any request" || got.Mismatch.Note != "source field without type: matches nobody" {
		t.Errorf("step notes %q, %q", got.Allows.Note, got.Mismatch.Note)
	}
	if rule.Permission.Note != "" || step.Mismatch.Note != "" {
		t.Errorf("Sentences wrote into explain's result")
	}
}
