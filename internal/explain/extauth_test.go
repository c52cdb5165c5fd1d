package explain

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
)

func withExt(r *Request, gw, be Answer) *Request {
	r.ExtAuth = ExtAuth{Gateway: gw, Backend: be}
	return r
}

// docs/semantics.md#external-auth, #filter-order, #extauth-backendref-group.
func TestDecideExtAuth(t *testing.T) {
	extAll := policy("ext", "xb", "ExternalAuth", "", "")
	extRefund := policy("ext", "xb", "ExternalAuth", "", rules("- name: refunds\n  authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [refund]}]}}"))
	gwExt := policy("gext", "gw", "ExternalAuth", "", "")
	beAllow := policy("be-allow", "xb", "Allow", "", rules(saTools("sum", "billing", "add, refund")))
	gwAllow := policy("gw-allow", "gw", "Allow", "", rules(saTools("g", "billing", "add")))
	juniorExt := policy("ext-junior", "xb", "ExternalAuth", "2026-03-01T00:00:00Z", "")
	runCases(t, []decideCase{
		{name: "unknown authorizer: indeterminate", policies: []string{extAll}, req: call("billing", "add"), want: want{Indeterminate, "backend", "app/ext"}},
		{name: "authorizer allows, no Allow policy", policies: []string{extAll}, req: withExt(call("billing", "add"), "", AnswerAllow), want: want{Allow, "backend", "app/ext"}},
		{name: "authorizer denies", policies: []string{extAll}, req: withExt(call("billing", "add"), "", AnswerDeny), want: want{Deny, "backend", "app/ext"}},
		{name: "rule-less ExternalAuth also sees GET", policies: []string{extAll}, req: withExt(httpReq("", "GET", nil), "", AnswerDeny), want: want{Deny, "backend", "app/ext"}},
		{name: "caller not selected skips the authorizer", policies: []string{extRefund}, req: call("billing", "add"), want: want{Allow, "none", DecidedNoPolicy}},
		{name: "selected by rule", policies: []string{extRefund}, req: withExt(call("billing", "refund"), "", AnswerDeny), want: want{Deny, "backend", "app/ext#refunds"}},
		{name: "authorizer allow is not final", policies: []string{extAll, beAllow}, req: withExt(call("support", "add"), "", AnswerAllow), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "Allow denies anyway: not indeterminate", policies: []string{extAll, beAllow}, req: call("support", "add"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "allow after authorizer: the Allow rule decides", policies: []string{extAll, beAllow}, req: withExt(call("billing", "add"), "", AnswerAllow), want: want{Allow, "backend", "app/be-allow#sum"}},
		{name: "only the oldest ExternalAuth counts", policies: []string{extRefund, juniorExt}, req: call("billing", "add"), want: want{Allow, "none", DecidedNoPolicy}},
		{name: "per-level answers", policies: []string{gwExt, extAll}, req: withExt(call("billing", "add"), AnswerAllow, AnswerDeny), want: want{Deny, "backend", "app/ext"}},
		{name: "gateway authorizer runs first", policies: []string{gwExt, extAll}, req: withExt(call("billing", "add"), AnswerDeny, AnswerDeny), want: want{Deny, "gateway", "gw/gext"}},
		{name: "last consulted authorizer decides an allow", policies: []string{gwExt, extAll}, req: withExt(call("billing", "add"), AnswerAllow, AnswerAllow), want: want{Allow, "backend", "app/ext"}},
		// docs/semantics.md#filter-order: under the reference the backend authorizer runs before the gateway Allow filter.
		{name: "filter-order reference: backend authorizer before gateway Allow", policies: []string{gwAllow, extAll},
			req: withExt(call("billing", "refund"), "", AnswerDeny), want: want{Deny, "backend", "app/ext"}},
		{name: "filter-order per-level (0059): gateway Allow refuses first", policies: []string{gwAllow, extAll}, sem: effective.PresetProposal,
			req: withExt(call("billing", "refund"), "", AnswerDeny), want: want{Deny, "gateway", "gw/gw-allow"}},
		{name: "filter-order per-level (pr-220): gateway Allow refuses first", policies: []string{gwAllow, extAll}, sem: effective.PresetPR220,
			req: withExt(call("billing", "refund"), "", AnswerDeny), want: want{Deny, "gateway", DecidedImplicitDeny}},
		// Per level, every step allowing: the deciding step is the last one evaluated.
		{name: "proposal-0059: every step allows, the backend authorizer ran last", policies: []string{gwAllow, extAll}, sem: effective.PresetProposal,
			req: withExt(call("billing", "add"), "", AnswerAllow), want: want{Allow, "backend", "app/ext"}},
		{name: "proposal-0059: an Allow policy after the authorizer decides", policies: []string{gwAllow, extAll, beAllow}, sem: effective.PresetProposal,
			req: withExt(call("billing", "add"), "", AnswerAllow), want: want{Allow, "backend", "app/be-allow#sum"}},
		{name: "pr-220: a level that selects nobody is passed", policies: []string{gwAllow, extAll}, sem: effective.PresetPR220,
			req: withExt(call("support", "add"), "", AnswerAllow), want: want{Allow, "backend", "app/ext"}},
	})
}

// docs/semantics.md#extauth-backendref-group: a backend ExternalAuth gets an ext_authz filter only if a route of the gateway
// references its XBackend with the exact agentic group.
func TestDecideExtAuthBackendRefGroup(t *testing.T) {
	topo := `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: gw}
spec:
  gatewayClassName: c
  listeners: [{name: https, protocol: HTTPS, port: 443, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: gw}]
  rules:
  - backendRefs: [{group: agentic.prototype.x-k8s.io, kind: XBackend, name: xb}]
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: xb, namespace: app}
spec: {mcp: {serviceName: s, port: 80}}
---
apiVersion: v1
kind: Service
metadata: {name: s, namespace: app}
spec: {ports: [{port: 80}]}
`
	s := loadYAML(t, topo, policy("ext", "xb", "ExternalAuth", "", ""))
	r := call("billing", "add")
	r.Backend = nil
	check3(t, decideOne(t, s, effective.Reference(), r), want{Allow, "none", DecidedNoPolicy})
	alt := effective.Reference()
	alt.ExtAuthBackendRefGroup = effective.ExtAuthAlways
	r = call("billing", "add")
	r.Backend = nil
	check3(t, decideOne(t, s, alt, r), want{Indeterminate, "backend", "app/ext"})
}

// Branches of an indeterminate decision.
func TestIndeterminateBranches(t *testing.T) {
	s := loadYAML(t, baseTopology, policy("gext", "gw", "ExternalAuth", "", ""), policy("ext", "xb", "ExternalAuth", "", ""))
	res := decideOne(t, s, effective.Reference(), call("billing", "add"))
	if res.Verdict != Indeterminate || len(res.Branches) != 3 {
		t.Fatalf("want indeterminate with 3 branches (gw deny; gw allow × be allow|deny), got %s %+v", res.Verdict, res.Branches)
	}
	seen := map[string]string{}
	for _, b := range res.Branches {
		seen[b.Assume.String()] = b.Decision + " " + b.DecidedBy
	}
	for k, v := range map[string]string{
		"gateway authorizer allow, backend authorizer allow": "allow app/ext",
		"gateway authorizer allow, backend authorizer deny":  "deny app/ext",
		"gateway authorizer deny":                            "deny gw/gext",
	} {
		if seen[k] != v {
			t.Errorf("branch %q: got %q, want %q (all: %v)", k, seen[k], v, seen)
		}
	}
}

// Weighted backendRefs: one result per backend.
func TestWeightedBackends(t *testing.T) {
	s := loadYAML(t, baseTopology, policy("a", "xb", "Allow", "", rules(saTools("r", "billing", "add"))))
	r := call("billing", "add")
	r.Backend, r.HTTP.Path = nil, "/split"
	res, err := New(model.New(s), nil, "").Explain(Full, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("want 2 results, got %d", len(res))
	}
	if res[0].Path.Backend != "XBackend app/xb" || res[0].Verdict != Allow || res[1].Path.Backend != "XBackend app/xb2" || res[1].Verdict != Allow ||
		res[1].DecidedBy != DecidedNoPolicy {
		t.Errorf("got %s %s %s / %s %s %s", res[0].Path.Backend, res[0].Verdict, res[0].DecidedBy, res[1].Path.Backend, res[1].Verdict, res[1].DecidedBy)
	}
}

// docs/semantics.md#external-auth: the same ExternalAuth config at both levels is one ext_authz filter, called once.
func TestSharedExtAuthConfig(t *testing.T) {
	shared := func(name, target string) string {
		p := policy(name, target, "ExternalAuth", "", "")
		return strings.Replace(p, "authz-"+name, "authz", 1)
	}
	s := loadYAML(t, baseTopology, shared("gext", "gw"), shared("ext", "xb"))
	res := decideOne(t, s, effective.Reference(), withExt(call("billing", "add"), AnswerAllow, AnswerDeny))
	check3(t, res, want{Allow, "gateway", "gw/gext"})
	if len(res.Branches) != 0 {
		t.Errorf("no branches expected: %+v", res.Branches)
	}
}
