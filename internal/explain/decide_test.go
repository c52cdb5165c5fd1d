package explain

import (
	"testing"
	"time"

	"github.com/agpol/agpol/internal/effective"
)

const (
	saRule = `- name: %s
  source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: %s}}
  authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [%s]}]}}`
	handshake = `- name: handshake
  authorization: {type: Inline, mcp: {mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}}`
)

func rules(rs ...string) string {
	out := "rules:\n"
	for _, r := range rs {
		out += indent(r, "")
		out += "\n"
	}
	return out
}

func saTools(rule, who, tools string) string {
	return "- name: " + rule + "\n  source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: " + who + "}}\n" +
		"  authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [" + tools + "]}]}}"
}

type decideCase struct {
	name     string
	policies []string
	sem      string
	mod      func(*effective.Semantics)
	req      *Request
	want     want
}

func runCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := loadYAML(t, append([]string{baseTopology}, tc.policies...)...)
			name := tc.sem
			if name == "" {
				name = effective.PresetReference
			}
			se := sem(t, name)
			if tc.mod != nil {
				tc.mod(&se)
			}
			check3(t, decideOne(t, s, se, tc.req), tc.want)
		})
	}
}

// docs/semantics.md#levels: levels, defaults, rule-less policies, union, implicit deny.
func TestDecideLevels(t *testing.T) {
	gwAllow := policy("gw-allow", "gw", "Allow", "", rules(saTools("billing", "billing", "add, refund"), handshake))
	beAllow := policy("be-allow", "xb", "Allow", "", rules(saTools("sum", "billing", "add")))
	runCases(t, []decideCase{
		{name: "no policy allows", req: call("billing", "add"), want: want{Allow, "none", DecidedNoPolicy}},
		{name: "gateway rule allows", policies: []string{gwAllow}, req: call("billing", "add"), want: want{Allow, "gateway", "gw/gw-allow#billing"}},
		{name: "gateway implicit deny", policies: []string{gwAllow}, req: call("support", "add"), want: want{Deny, "gateway", DecidedImplicitDeny}},
		{name: "backend only", policies: []string{beAllow}, req: call("billing", "add"), want: want{Allow, "backend", "app/be-allow#sum"}},
		{name: "backend deny", policies: []string{beAllow}, req: call("billing", "refund"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "innermost level decides an allow", policies: []string{gwAllow, beAllow}, req: call("billing", "add"), want: want{Allow, "backend", "app/be-allow#sum"}},
		{name: "gateway allows, backend denies", policies: []string{gwAllow, beAllow}, req: call("billing", "refund"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "service backend: gateway only", policies: []string{gwAllow, beAllow},
			req: func() *Request {
				r := call("billing", "refund")
				r.Backend, r.Service = nil, &NamespacedName{"app", "svc"}
				return r
			}(),
			want: want{Allow, "gateway", "gw/gw-allow#billing"}},
		{name: "rule-less Allow alone allows", policies: []string{policy("open", "xb", "Allow", "", "")}, req: call("x", "any"), want: want{Allow, "backend", "app/open"}},
		{name: "rule-less Allow next to another adds nothing", policies: []string{policy("open", "xb", "Allow", "", ""), beAllow},
			req: call("billing", "refund"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "union of two Allow policies", policies: []string{beAllow, policy("be2", "xb", "Allow", "2026-02-01T00:00:00Z", rules(saTools("other", "support", "refund")))},
			req: call("support", "refund"), want: want{Allow, "backend", "app/be2#other"}},
		{name: "first matching rule in RBAC map (name) order", policies: []string{policy("p", "xb", "Allow", "", rules(saTools("zz", "billing", "add"), saTools("aa", "billing", "add")))},
			req: call("billing", "add"), want: want{Allow, "backend", "app/p#aa"}},
		{name: "no route: the gateway level lets it through, then 404", policies: []string{gwAllow, beAllow},
			req:  func() *Request { r := call("billing", "refund"); r.Backend = nil; r.HTTP.Path = "/nothing"; return r }(),
			want: want{Deny, "gateway", DecidedNoRoute}},
		{name: "no route: the gateway level refuses first (403)", policies: []string{gwAllow, beAllow},
			req:  func() *Request { r := call("support", "refund"); r.Backend = nil; r.HTTP.Path = "/nothing"; return r }(),
			want: want{Deny, "gateway", DecidedImplicitDeny}},
		{name: "routed to XBackend", policies: []string{gwAllow, beAllow},
			req:  func() *Request { r := call("billing", "refund"); r.Backend = nil; r.HTTP.Path = "/mcp"; return r }(),
			want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "plain HTTP listener: caller is anonymous", policies: []string{gwAllow},
			req:  func() *Request { r := call("billing", "add"); r.Listener = "http"; return r }(),
			want: want{Deny, "gateway", DecidedImplicitDeny}},
		{name: "v0alpha0 policy inert", policies: []string{legacyPolicy},
			req: call("support", "add"), want: want{Allow, "none", DecidedNoPolicy}},
	})
}

// docs/semantics.md#principals, #source-fail-open.
func TestDecidePrincipal(t *testing.T) {
	pol := func(source string) string {
		return policy("p", "xb", "Allow", "", "rules:\n- name: r\n"+source+"  authorization: {type: Inline, mcp: {methods: [{name: tools/call}]}}\n")
	}
	spiffe := pol("  source: {type: SPIFFE, spiffe: spiffe://example.org/agent}\n")
	saDefaultNS := pol("  source: {type: ServiceAccount, serviceAccount: {name: billing}}\n")
	typeOnly := pol("  source: {type: ServiceAccount}\n")
	none := func(s *effective.Semantics) { s.SourceFailOpen = effective.SourceNone }
	runCases(t, []decideCase{
		{name: "spiffe exact", policies: []string{spiffe},
			req: func() *Request {
				r := call("", "t")
				r.From, r.Listener = Caller{Kind: CallerSPIFFE, SPIFFE: "spiffe://example.org/agent"}, "https"
				return r
			}(),
			want: want{Allow, "backend", "app/p#r"}},
		{name: "spiffe other", policies: []string{spiffe},
			req: func() *Request {
				r := call("", "t")
				r.From = Caller{Kind: CallerSPIFFE, SPIFFE: "spiffe://example.org/agent/x"}
				return r
			}(),
			want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "sa namespace defaults to the policy's", policies: []string{saDefaultNS},
			req: func() *Request {
				r := call("", "t")
				r.From, r.Listener = Caller{Kind: CallerServiceAccount, Namespace: "app", Name: "billing"}, "https"
				return r
			}(),
			want: want{Allow, "backend", "app/p#r"}},
		{name: "sa in another namespace", policies: []string{saDefaultNS}, req: call("billing", "t"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "source omitted: anonymous matches", policies: []string{pol("")}, req: call("", "t"), want: want{Allow, "backend", "app/p#r"}},
		{name: "source-fail-open type without field matches anyone (reference)", policies: []string{typeOnly}, req: call("", "t"), want: want{Allow, "backend", "app/p#r"}},
		{name: "source-fail-open type without field matches nobody (alt)", policies: []string{typeOnly}, mod: none, req: call("", "t"), want: want{Deny, "backend", DecidedImplicitDeny}},
	})
}

// docs/semantics.md#permissions: MCP methods, params, base protocol set, #params-name.
func TestDecideMCP(t *testing.T) {
	pol := func(mcp string) string {
		return policy("p", "xb", "Allow", "", "rules:\n- name: r\n  authorization: {type: Inline, mcp: "+mcp+"}\n")
	}
	tools := pol("{methods: [{name: tools}]}")
	exact := pol("{methods: [{name: tools/list}]}")
	base := pol("{mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}")
	res := pol("{methods: [{name: resources/read, params: [weather]}]}")
	empty := pol("{}")
	runCases(t, []decideCase{
		{name: "category is a prefix", policies: []string{tools}, req: mcpReq("a", "tools/list"), want: want{Allow, "backend", "app/p#r"}},
		{name: "category does not match other methods", policies: []string{tools}, req: mcpReq("a", "prompts/list"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "exact method", policies: []string{exact}, req: mcpReq("a", "tools/list"), want: want{Allow, "backend", "app/p#r"}},
		{name: "exact method refuses tools/call", policies: []string{exact}, req: call("a", "x"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "method permission never matches plain HTTP", policies: []string{tools}, req: httpReq("a", "GET", nil), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "base: initialize", policies: []string{base}, req: mcpReq("a", "initialize"), want: want{Allow, "backend", "app/p#r"}},
		{name: "base: notifications prefix", policies: []string{base}, req: mcpReq("a", "notifications/initialized"), want: want{Allow, "backend", "app/p#r"}},
		{name: "base: ping", policies: []string{base}, req: mcpReq("a", "ping"), want: want{Allow, "backend", "app/p#r"}},
		{name: "base: GET any path", policies: []string{base}, req: httpReq("a", "GET", nil), want: want{Allow, "backend", "app/p#r"}},
		{name: "base: DELETE with session", policies: []string{base}, req: httpReq("a", "DELETE", map[string]string{"mcp-session-id": "1"}), want: want{Allow, "backend", "app/p#r"}},
		{name: "base: DELETE without session", policies: []string{base}, req: httpReq("a", "DELETE", nil), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "base excludes prompts/list", policies: []string{base}, req: mcpReq("a", "prompts/list"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "base only: tools/call refused", policies: []string{base}, req: call("a", "x"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "params-name resources params match params.name", policies: []string{res},
			req: func() *Request { r := mcpReq("a", "resources/read"); r.MCP.Tool = "weather"; return r }(), want: want{Allow, "backend", "app/p#r"}},
		{name: "params-name uri is not matched", policies: []string{res},
			req: func() *Request { r := mcpReq("a", "resources/read"); r.MCP.URI = "weather"; return r }(), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "empty-authorization empty mcp: any request (reference)", policies: []string{empty}, req: call("a", "x"), want: want{Allow, "backend", "app/p#r"}},
		{name: "empty-authorization empty mcp: deny tools (alt)", policies: []string{empty}, mod: func(s *effective.Semantics) { s.EmptyAuthorization = effective.EmptyAuthDenyTools },
			req: call("a", "x"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "empty-authorization empty mcp: deny tools still allows other methods", policies: []string{empty}, mod: func(s *effective.Semantics) { s.EmptyAuthorization = effective.EmptyAuthDenyTools },
			req: mcpReq("a", "prompts/list"), want: want{Allow, "backend", "app/p#r"}},
	})
}

// docs/semantics.md#cel, #cel-only-tools-call.
func TestDecideCEL(t *testing.T) {
	pol := func(expr string) string {
		return policy("p", "xb", "Allow", "", "rules:\n- name: c\n  authorization:\n    type: CEL\n    cel: {expression: \""+expr+"\"}\n")
	}
	at := func(r *Request, f func(*Request)) *Request { f(r); return r }
	runCases(t, []decideCase{
		{name: "tool name", policies: []string{pol("request.mcp.tool_name in ['add']")}, req: call("a", "add"), want: want{Allow, "backend", "app/p#c"}},
		{name: "tool name false", policies: []string{pol("request.mcp.tool_name in ['add']")}, req: call("a", "sub"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "cel-only-tools-call CEL only matches tools/call", policies: []string{pol("true")}, req: mcpReq("a", "initialize"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "cel-only-tools-call alt: CEL alone", policies: []string{pol("request.method == 'GET'")}, mod: func(s *effective.Semantics) { s.CELOnlyToolsCall = false },
			req: httpReq("a", "GET", nil), want: want{Allow, "backend", "app/p#c"}},
		{name: "missing header is an error, no match", policies: []string{pol("request.headers['x-team'] == 'a'")}, req: call("a", "t"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "header present", policies: []string{pol("request.headers['x-team'] == 'a'")},
			req: at(call("a", "t"), func(r *Request) { r.HTTP.Headers = map[string]string{"X-Team": "a"} }), want: want{Allow, "backend", "app/p#c"}},
		{name: "path keeps the query", policies: []string{pol("request.path == '/mcp?x=1' && request.url_path == '/mcp'")},
			req: at(call("a", "t"), func(r *Request) { r.HTTP.Path = "/mcp?x=1" }), want: want{Allow, "backend", "app/p#c"}},
		{name: "host includes the port sent", policies: []string{pol("request.host.endsWith(':10001')")},
			req: at(call("a", "t"), func(r *Request) { r.HTTP.Host = "calc.example.com:10001" }), want: want{Allow, "backend", "app/p#c"}},
		{name: "time", policies: []string{pol("request.time.getFullYear() == 2026")},
			req: at(call("a", "t"), func(r *Request) { r.HTTP.Time = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC) }), want: want{Allow, "backend", "app/p#c"}},
		{name: "strings extension", policies: []string{pol("request.mcp.tool_name.lowerAscii() == 'add'")}, req: call("a", "ADD"), want: want{Allow, "backend", "app/p#c"}},
		// Past the runtime cost budget the outcome is unknown (Envoy has no budget): the
		// rule decides the request, so the verdict is indeterminate, not a deny.
		{name: "over the runtime budget, deciding: indeterminate", policies: []string{pol(expensiveCEL)},
			req: call("a", "t"), want: want{Indeterminate, "backend", DecidedImplicitDeny}},
		// At the gateway, another rule admits the call whatever the expensive rule says;
		// the backend then refuses it: the verdict does not depend on the unknown rule.
		{name: "over the runtime budget, not deciding: the shared verdict", policies: []string{
			policy("g", "gw", "Allow", "", "rules:\n- name: c\n  authorization:\n    type: CEL\n    cel: {expression: \""+expensiveCEL+"\"}\n"+
				"- name: any\n  authorization: {type: Inline, mcp: {methods: [{name: tools}]}}\n"),
			policy("q", "xb", "Allow", "", "rules:\n- name: other\n  authorization: {type: Inline, mcp: {methods: [{name: prompts/list}]}}\n")},
			req: call("a", "t"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "within the budget, the same shape decides", policies: []string{pol("[1,2,3].all(a, [1,2,3].all(b, a+b > 0))")},
			req: call("a", "t"), want: want{Allow, "backend", "app/p#c"}},
	})
}

// expensiveCEL iterates 10^6 times: past the runtime cost budget on every request.
const expensiveCEL = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))"

const legacyPolicy = `
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XAccessPolicy
metadata: {name: legacy, namespace: app, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  targetRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
  rules:
  - name: only-billing
    source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: billing}}
    authorization: {type: InlineTools, tools: [add]}
`
