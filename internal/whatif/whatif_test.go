package whatif

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

const examples = "../../testdata/examples"

func reference() []effective.Semantics { return []effective.Semantics{effective.Reference()} }

func loadYAML(t testing.TB, docs string) *snapshot.Snapshot {
	t.Helper()
	objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(docs)})
	if err != nil {
		t.Fatal(err)
	}
	cluster.DefaultNamespace(objs, "default")
	s, err := cluster.Build(objs, pos, "files")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(l []*Caller) []string {
	var out []string
	for _, id := range l {
		out = append(out, id.ID+"("+strings.Join(id.From, "+")+")")
	}
	return out
}

func TestIdentities(t *testing.T) {
	s := loadYAML(t, `
apiVersion: v1
kind: ServiceAccount
metadata: {name: b, namespace: x}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: a, namespace: x}
---
apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: p, namespace: pol}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  action: Allow
  rules:
  - name: by-sa-default-ns
    source: {type: ServiceAccount, serviceAccount: {name: c}}
  - name: by-spiffe-of-sa
    source: {type: SPIFFE, spiffe: spiffe://cluster.local/ns/x/sa/a}
  - name: by-spiffe
    source: {type: SPIFFE, spiffe: spiffe://other.example/workload}
  - name: any
`)
	got := ids(identities(s, "cluster.local"))
	want := []string{"sa:pol/c(policy)", "sa:x/a(policy+serviceaccount)", "sa:x/b(serviceaccount)",
		"spiffe://other.example/workload(policy)", "anonymous(synthetic)", "<other authenticated>(synthetic)"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("identities:\n got  %v\n want %v", got, want)
	}
	// Another trust domain: the SPIFFE ID is not the ServiceAccount's.
	got = ids(identities(s, "corp.example"))
	if !contains(got, "spiffe://cluster.local/ns/x/sa/a(policy)") || !contains(got, "sa:x/a(serviceaccount)") {
		t.Errorf("trust domain corp.example: %v", got)
	}
}

func TestTargetsExamples(t *testing.T) {
	e := New(model.New(load(t, examples)), reference(), Options{})
	var got []string
	for _, tg := range e.Targets {
		var ops []string
		for _, o := range tg.Ops {
			ops = append(ops, o.Label())
		}
		got = append(got, fmt.Sprintf("%s plain=%v routes=%v ops=%v", tg.Label(), tg.PlainHTTP(), tg.Routes, ops))
	}
	want := []string{
		"infra/edge:https → XBackend pay/ledger plain=false routes=[pay/ledger] ops=[initialize tools/list balance history refund <other tool>]",
		"infra/edge:http → XBackend tools/calc plain=true routes=[tools/tools] ops=[initialize tools/list add multiply <other tool>]",
		"infra/edge:https → XBackend tools/calc plain=false routes=[tools/tools] ops=[initialize tools/list add multiply <other tool>]",
		"infra/edge:http → Service tools/docs-mcp plain=true routes=[tools/tools] ops=[initialize tools/list <other tool>]",
		"infra/edge:https → Service tools/docs-mcp plain=false routes=[tools/tools] ops=[initialize tools/list <other tool>]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("targets:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseInventory(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       map[string][]string
		err        string
	}{
		{"result", `{"backends": {"a/b": {"tools": [{"name": "y"}, {"name": "x"}, {"name": "x"}]}}}`, map[string][]string{"a/b": {"x", "y"}}, ""},
		{"jsonrpc response", `{"backends": {"a/b": {"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "x", "inputSchema": {}}]}}}}`, map[string][]string{"a/b": {"x"}}, ""},
		{"pages and service", `{"apiVersion": "agpol.dev/v1alpha1", "kind": "ToolInventory", "backends": {
  "service/a/s": [{"tools": [{"name": "p"}], "nextCursor": "2"}, {"result": {"tools": [{"name": "q"}]}}]}}`, map[string][]string{"service/a/s": {"p", "q"}}, ""},
		{"empty tools", `{"backends": {"a/b": {"tools": []}}}`, map[string][]string{"a/b": {}}, ""},
		{"syntax", "{\"backends\": {\n\"a/b\": {\"tools\": [}}}", nil, "inv.json:2: invalid JSON"},
		{"unknown field", "{\n\"backend\": {}}", nil, "inv.json:2:"},
		{"no backends", `{}`, nil, `no "backends" object`},
		{"bad key", "{\"backends\": {\n  \"ledger\": {\"tools\": []}}}", nil, `inv.json:2: backend "ledger"`},
		{"no name", `{"backends": {"a/b": {"tools": [{"description": "x"}]}}}`, nil, "tool 1 has no name"},
		{"error response", `{"backends": {"a/b": {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601}}}}`, nil, "JSON-RPC error"},
		{"wrong kind", `{"kind": "Pod", "backends": {}}`, nil, `kind "Pod"`},
		{"trailing", `{"backends": {}} {}`, nil, "unexpected data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := ParseInventory("inv.json", []byte(tc.data))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(inv.Tools) != fmt.Sprint(tc.want) {
				t.Errorf("tools %v, want %v", inv.Tools, tc.want)
			}
		})
	}
}

func TestInventoryColumns(t *testing.T) {
	inv, err := ParseInventory("t", []byte(`{"backends": {"pay/ledger": {"tools": [{"name": "balance"}, {"name": "statement"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e := New(model.New(load(t, examples)), reference(), Options{Inventory: inv})
	for _, tg := range e.Targets {
		var ops []string
		for _, o := range tg.Ops {
			ops = append(ops, o.Label())
		}
		switch {
		case tg.Backend == "pay/ledger":
			if tg.ToolsFrom != "inventory" || fmt.Sprint(ops) != "[initialize tools/list balance statement]" {
				t.Errorf("ledger: %s %v", tg.ToolsFrom, ops)
			}
		case tg.ToolsFrom != "policies" || ops[len(ops)-1] != OtherTool:
			t.Errorf("%s: %s %v", tg.Label(), tg.ToolsFrom, ops)
		}
	}
	if u := inv.Unknown(map[string]bool{"pay/ledger": true}); len(u) != 0 {
		t.Errorf("unknown %v", u)
	}
	if u := inv.Unknown(map[string]bool{}); fmt.Sprint(u) != "[pay/ledger]" {
		t.Errorf("unknown %v", u)
	}
}

func TestCELToolLiterals(t *testing.T) {
	for _, tc := range []struct{ expr, want string }{
		{"request.mcp.tool_name in ['add', 'multiply']", "[add multiply]"},
		{`request.mcp.tool_name == "a" || request.mcp.tool_name.startsWith('get_')`, "[a get_]"},
		{"request.path == '/x'", "[]"},
		{"request.mcp.tool_name in [", "[]"},
	} {
		if got := fmt.Sprint(celToolLiterals(tc.expr)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.expr, got, tc.want)
		}
	}
}

func TestKind(t *testing.T) {
	allow := func(by string) Cell { return Cell{Decision: explain.Allow, Level: "backend", DecidedBy: by} }
	deny := Cell{Decision: explain.Deny, Level: "backend", DecidedBy: explain.DecidedImplicitDeny}
	ind := Cell{Decision: explain.Indeterminate, Level: "backend", DecidedBy: "x#r"}
	for _, tc := range []struct {
		b, a Cell
		want string
	}{
		{deny, allow("p#r"), Granted},
		{deny, ind, Granted},
		{ind, allow("p#r"), Granted},
		{allow("p#r"), deny, Revoked},
		{allow("p#r"), ind, Revoked},
		{noPath, allow("p#r"), Granted},
		{allow("p#r"), noPath, Revoked},
		{noPath, deny, ""},
		{deny, noPath, ""},
		{allow("p#r"), allow("p#s"), DecidedBy},
		{allow("p#r"), allow("p#r"), ""},
		{ind, Cell{Decision: explain.Indeterminate, Level: "backend", DecidedBy: "x#r", Branches: []explain.Branch{{Decision: explain.Allow}}}, DecidedBy},
	} {
		if got := kind(tc.b, tc.a); got != tc.want {
			t.Errorf("kind(%+v, %+v) = %q, want %q", tc.b, tc.a, got, tc.want)
		}
	}
}

func changeLines(cs []*Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s | %s | %s | %s -> %s", c.Identity.ID, c.Target.Label(), c.Op.Label(), c.Before.DecidedBy, c.After.DecidedBy))
	}
	sort.Strings(out)
	return out
}

// TestDiffExamples: the after copy has one grant, one revoke and one rename; the diff
// shows exactly their consequences and nothing else.
func TestDiffExamples(t *testing.T) {
	before := New(model.New(load(t, examples)), reference(), Options{})
	after := New(model.New(load(t, "../../testdata/whatif/after")), reference(), Options{})
	d := Diff(before, after, Filter{})
	check := func(name string, got []*Change, want ...string) {
		t.Helper()
		if g := changeLines(got); strings.Join(g, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", name, strings.Join(g, "\n"), strings.Join(want, "\n"))
		}
	}
	check("granted", d.Granted.List(), "sa:agents/support | infra/edge:https → XBackend pay/ledger | statement | implicit-deny -> pay/ledger-access#read-only")
	check("revoked", d.Revoked.List(),
		"sa:agents/billing | infra/edge:https → XBackend tools/calc | multiply | tools/calc-arithmetic#arithmetic -> implicit-deny",
		"sa:agents/support | infra/edge:https → XBackend tools/calc | multiply | tools/calc-arithmetic#arithmetic -> implicit-deny")
	check("decidedBy", d.DecidedBy.List(),
		"sa:agents/billing | infra/edge:https → XBackend pay/ledger | balance | pay/ledger-access#refunds -> pay/ledger-access#billing-refunds",
		"sa:agents/billing | infra/edge:https → XBackend pay/ledger | history | pay/ledger-access#refunds -> pay/ledger-access#billing-refunds",
		// The authorizer's answer is unknown; when it allows, the renamed rule decides.
		"sa:agents/billing | infra/edge:https → XBackend pay/ledger | refund | pay/ledger-fraud-check#refund-calls -> pay/ledger-fraud-check#refund-calls")
	if d.OtherSemantics.Len() != 0 {
		t.Errorf("other semantics: %v", changeLines(d.OtherSemantics.List()))
	}
	// 5 identities × (6+1 ledger ops with statement, 5 calc ops × 2 listeners, 3 docs ops × 2 listeners).
	if d.Compared != 5*(7+5*2+3*2) {
		t.Errorf("compared %d", d.Compared)
	}
	// Reversed, grants and revocations swap.
	r := Diff(after, before, Filter{})
	if r.Granted.Len() != d.Revoked.Len() || r.Revoked.Len() != d.Granted.Len() || r.DecidedBy.Len() != d.DecidedBy.Len() {
		t.Errorf("reverse: %d/%d/%d", r.Granted.Len(), r.Revoked.Len(), r.DecidedBy.Len())
	}
	if z := Diff(before, before, Filter{}); z.Count() != 0 || z.Compared == 0 {
		t.Errorf("self diff: %d changes, %d compared", z.Count(), z.Compared)
	}
}

// TestDiffKeepsNoDecision: diff compares each point as it is decided; neither
// engine keeps the decisions (two large inputs' decisions held to the end took most of
// diff's memory).
func TestDiffKeepsNoDecision(t *testing.T) {
	before := New(model.New(load(t, examples)), reference(), Options{})
	after := New(model.New(load(t, "../../testdata/whatif/after")), reference(), Options{})
	d := Diff(before, after, Filter{})
	for _, e := range []*Engine{before, after} {
		for i, st := range e.state {
			for c, row := range st.cells {
				if row != nil {
					t.Errorf("%s: class %s decided and kept", e.Targets[i].Label(), st.classes[c])
				}
			}
			if len(st.memo) != 0 || st.queries != nil {
				t.Errorf("%s: %d memoised outcomes, queries kept: %v", e.Targets[i].Label(), len(st.memo), st.queries != nil)
			}
		}
	}
	if d.Count() == 0 {
		t.Error("no change")
	}
}

const newBackend = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: extra, namespace: pay}
spec:
  parentRefs: [{name: edge, namespace: infra, sectionName: https}]
  hostnames: [extra.mcp.example.com]
  rules:
  - backendRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: extra}]
---
apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: extra, namespace: pay}
spec: {mcp: {serviceName: ledger-mcp, port: 8080}}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: newcomer, namespace: agents}
`

// TestDiffNewPath: a new route to a new backend grants what the gateway allows there,
// to every identity, including one only the after side knows; denials are not changes.
func TestDiffNewPath(t *testing.T) {
	before := New(model.New(load(t, examples)), reference(), Options{})
	s := load(t, examples)
	extra := loadYAML(t, newBackend)
	s.HTTPRoutes = append(s.HTTPRoutes, extra.HTTPRoutes...)
	s.XBackends = append(s.XBackends, extra.XBackends...)
	s.ServiceAccounts = append(s.ServiceAccounts, extra.ServiceAccounts...)
	after := New(model.New(s), reference(), Options{})
	d := Diff(before, after, Filter{})
	got := changeLines(d.Granted.List())
	want := []string{}
	// Not anonymous: without a client certificate it fails the HTTPS listener's TLS
	// handshake, before and after.
	for _, id := range []string{"<other authenticated>", "sa:agents/analytics", "sa:agents/billing", "sa:agents/newcomer", "sa:agents/support"} {
		for _, op := range []string{"initialize", "tools/list"} {
			rule := "handshake"
			if id == "sa:agents/billing" && op == "tools/list" {
				rule = "billing-tools" // methods "tools" (a category) come first in RBAC map order
			}
			want = append(want, fmt.Sprintf("%s | infra/edge:https → XBackend pay/extra | %s | no-path -> infra/edge-baseline#%s", id, op, rule))
		}
	}
	for _, id := range []string{"sa:agents/billing", "sa:agents/support"} {
		want = append(want, fmt.Sprintf("%s | infra/edge:https → XBackend pay/extra | <other tool> | no-path -> infra/edge-baseline#%s-tools", id, strings.TrimPrefix(id, "sa:agents/")))
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("granted:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d.Count() != len(want) {
		t.Errorf("%d changes, want %d: %v %v", d.Count(), len(want), changeLines(d.Revoked.List()), changeLines(d.DecidedBy.List()))
	}
}

func TestWhoCan(t *testing.T) {
	e := New(model.New(load(t, examples)), reference(), Options{})
	res, err := e.WhoCan(Op{Method: "tools/call", Tool: "balance"}, Filter{Backend: "pay/ledger"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, en := range res[0].Allowed {
		got = append(got, en.Identity.ID+"="+en.Outcome.Primary().DecidedBy)
	}
	if fmt.Sprint(got) != "[sa:agents/billing=pay/ledger-access#refunds sa:agents/support=pay/ledger-access#read-only]" || res[0].Anyone != nil {
		t.Errorf("balance: %v anyone=%v", got, res[0].Anyone)
	}
	res, _ = e.WhoCan(Op{Method: "tools/call", Tool: "refund"}, Filter{Backend: "pay/ledger"})
	if len(res[0].Allowed) != 0 || len(res[0].Indeterminate) != 1 || res[0].Indeterminate[0].Identity.ID != "sa:agents/billing" {
		t.Errorf("refund: %+v", res[0])
	}
	res, _ = e.WhoCan(Op{Method: "tools/list"}, Filter{Backend: "pay/ledger"})
	// Every caller with a client certificate: anonymous fails the HTTPS listener's handshake.
	if res[0].Anyone == nil || res[0].AnyoneAnonymous || len(res[0].Allowed) != len(e.Identities)-1 {
		t.Errorf("tools/list: anyone=%v anonymous=%v allowed=%d", res[0].Anyone, res[0].AnyoneAnonymous, len(res[0].Allowed))
	}
	// A tool no policy names is decided like <other tool>.
	res, _ = e.WhoCan(Op{Method: "tools/call", Tool: "never-named"}, Filter{Backend: "tools/docs-mcp", Listener: "https"})
	if len(res) != 1 || len(res[0].Allowed) != 2 {
		t.Errorf("docs: %+v", res)
	}
	if _, err := e.WhoCan(Op{Method: "tools/call", Tool: "x"}, Filter{Backend: "pay/none"}); err == nil {
		t.Error("missing backend: no error")
	}
}

func TestCanI(t *testing.T) {
	e := New(model.New(load(t, examples)), reference(), Options{ExtAuth: explain.ExtAuth{Backend: explain.AnswerAllow}})
	billing := e.Identity("sa:agents/billing")
	for _, tc := range []struct {
		id   *Caller
		op   Op
		f    Filter
		want string
	}{
		{billing, Op{Method: "tools/call", Tool: "refund"}, Filter{Backend: "pay/ledger"}, explain.Allow},
		{e.Identity("sa:agents/support"), Op{Method: "tools/call", Tool: "refund"}, Filter{Backend: "pay/ledger"}, explain.Deny},
		// Allowed on https, denied on plain http (seen as anonymous): no, since yes holds
		// only when every path says yes.
		{billing, Op{Method: "tools/call", Tool: "add"}, Filter{Backend: "tools/calc"}, explain.Deny},
		{billing, Op{Method: "tools/call", Tool: "add"}, Filter{Backend: "tools/calc", Listener: "https"}, explain.Allow},
		// Through the gateway, refund is asked only of pay/ledger, whose policies name it:
		// the Service path whose gateway rule allows any tool is not asked.
		{e.Identity("sa:agents/support"), Op{Method: "tools/call", Tool: "refund"}, Filter{Gateway: "infra/edge"}, explain.Deny},
		{billing, Op{Method: "tools/call", Tool: "add"}, Filter{Backend: "tools/calc", Listener: "http"}, explain.Deny},
		// A caller the snapshot does not know is any other caller.
		{e.IdentityFor(explain.Caller{Kind: explain.CallerServiceAccount, Namespace: "x", Name: "y"}), Op{Method: "initialize"}, Filter{Backend: "pay/ledger"}, explain.Allow},
		{e.IdentityFor(explain.Caller{Kind: explain.CallerSPIFFE, SPIFFE: "spiffe://cluster.local/ns/agents/sa/billing"}), Op{Method: "tools/call", Tool: "balance"}, Filter{Backend: "pay/ledger"}, explain.Allow},
		// Without a client certificate, or with one the SPIFFE bundle does not validate,
		// the HTTPS listener's TLS handshake fails (docs/routing.md).
		{e.Identity("anonymous"), Op{Method: "initialize"}, Filter{Backend: "pay/ledger"}, explain.Deny},
		{e.IdentityFor(explain.Caller{Kind: explain.CallerCertificate, Subject: "CN=agent"}), Op{Method: "initialize"}, Filter{Backend: "pay/ledger"}, explain.Deny},
	} {
		as, err := e.CanI(tc.id, tc.op, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := Verdict(as); got != tc.want {
			t.Errorf("%s %s %+v: %s, want %s", tc.id.ID, tc.op.Label(), tc.f, got, tc.want)
		}
	}
	support := e.Identity("sa:agents/support")
	refund := Op{Method: "tools/call", Tool: "refund"}
	as, _ := e.CanI(support, refund, Filter{Gateway: "infra/edge"})
	if len(as) != 1 || as[0].Target.Backend != "pay/ledger" {
		t.Errorf("refund through infra/edge asked %d paths, want only pay/ledger's", len(as))
	}
	if sk := e.Skipped(refund, Filter{Gateway: "infra/edge"}); len(sk) != 4 {
		t.Errorf("skipped %d paths, want 4 (tools/calc and docs-mcp on two listeners)", len(sk))
	}
	// A tool no backend offers is asked of every path.
	if as, _ := e.CanI(support, Op{Method: "tools/call", Tool: "unknown"}, Filter{Gateway: "infra/edge"}); len(as) != 5 {
		t.Errorf("an unknown tool asked %d paths, want 5", len(as))
	}
	l := e.CanIList(billing, Filter{})
	if l.Counts != (Counts{Allow: 16, Deny: 6}) || len(l.Entries) != 22 {
		t.Errorf("list: %+v (%d entries)", l.Counts, len(l.Entries))
	}
}

// With an inventory, the paths asked are those whose backend lists the tool; when they
// disagree the verdict is no and the counts say so.
func TestCanIInventory(t *testing.T) {
	inv, err := ParseInventory("tools.json", mustRead(t, "../../testdata/whatif/tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	e := New(model.New(load(t, examples)), reference(), Options{Inventory: inv})
	as, err := e.CanI(e.Identity("sa:agents/support"), Op{Method: "tools/call", Tool: "search_docs"}, Filter{Gateway: "infra/edge"})
	if err != nil {
		t.Fatal(err)
	}
	if n := Count(as); len(as) != 2 || n[explain.Allow] != 1 || n[explain.Deny] != 1 || Verdict(as) != explain.Deny {
		t.Errorf("search_docs: %d paths, counts %v, verdict %s; want 2 paths, one yes one no, no", len(as), n, Verdict(as))
	}
	ws, err := e.WhoCan(Op{Method: "tools/call", Tool: "refund"}, Filter{})
	if err != nil || len(ws) != 1 || ws[0].Target.Backend != "pay/ledger" {
		t.Errorf("who-can refund without --backend: %d targets, %v; want pay/ledger's", len(ws), err)
	}
	if _, err := e.WhoCan(Op{Method: "tools/call", Tool: "nothing"}, Filter{}); err == nil {
		t.Error("who-can of a tool no backend offers, without --backend: no error")
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMatrix(t *testing.T) {
	e := New(model.New(load(t, examples)), allPresets(t), Options{})
	m := e.Matrix(Filter{})
	c := m.Counts()
	if total := c.Allow + c.Deny + c.Indeterminate; total != len(m.Identities)*(6+5*2+3*2) {
		t.Errorf("counts %+v", c)
	}
	if c.Differs == 0 {
		t.Error("no disagreement although calc-legacy is enforced by v0alpha0-legacy")
	}
	var dis []string
	for _, id := range m.Disagreements() {
		dis = append(dis, id.ID)
	}
	if fmt.Sprint(dis) != "[sa:agents/billing sa:agents/support]" {
		t.Errorf("disagreements %v", dis)
	}
	// Every identity's cells equal a direct decision; identities in one group have equal rows.
	for _, mt := range m.Targets {
		for _, g := range m.Groups(mt, false) {
			for _, i := range g.Identities {
				for o, op := range mt.Ops {
					if fmt.Sprint(mt.At(i, o)) != fmt.Sprint(e.Decide(mt.Target, m.Identities[i], op)) {
						t.Errorf("%s %s %s: matrix differs from Decide", mt.Label(), m.Identities[i].ID, op.Label())
					}
					if fmt.Sprint(mt.At(i, o)) != fmt.Sprint(mt.At(g.Identities[0], o)) {
						t.Errorf("%s: group %v not uniform", mt.Label(), g.Identities)
					}
				}
			}
		}
		if n := len(m.Groups(mt, true)); n != len(m.Identities) {
			t.Errorf("ungrouped: %d rows", n)
		}
	}
	if rows := m.Rows(false); len(rows) == 0 || len(rows) > len(m.Identities) {
		t.Errorf("rows %d", len(rows))
	}
	f := e.Matrix(Filter{Backend: "pay/ledger", Identities: []string{"anonymous"}})
	if len(f.Targets) != 1 || len(f.Identities) != 1 {
		t.Errorf("filtered: %d targets, %d identities", len(f.Targets), len(f.Identities))
	}
}
