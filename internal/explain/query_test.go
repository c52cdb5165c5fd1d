package explain

import (
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

func allSemantics(t testing.TB) []effective.Semantics {
	t.Helper()
	sems, err := effective.ParsePresets("all")
	if err != nil {
		t.Fatal(err)
	}
	return sems
}

// untraced is the part of a decision Decide gives.
func untraced(d Decision) Decision {
	return Decision{Verdict: d.Verdict, Explicit: d.Explicit, Level: d.Level, DecidedBy: d.DecidedBy, Semantics: d.Semantics, Branches: d.Branches}
}

// checkDecide explains r and decides every path Explain took with Decide, on the same
// chain, caller and port; it fails on any difference and returns the number compared.
// One query serves every semantics of a listener, and decides first for another
// caller, as a caller deciding many requests uses it.
func checkDecide(t *testing.T, sim *Simulator, r *Request) int {
	t.Helper()
	res, err := sim.Explain(Full, r)
	checkBatch(t, sim, r, res, err)
	if err != nil {
		return 0 // a request naming missing objects has no path to decide
	}
	queries := map[string]*Query{}
	for i, x := range res {
		q := queries[x.Path.Listener]
		if q == nil {
			rq := *r
			rq.Listener = x.Path.Listener // Explain's port is that of the listener it took
			q = sim.Query(&rq)
			queries[x.Path.Listener] = q
		}
		principal := r.From.Principal(sim.TrustDomain)
		if r.From.Kind == CallerCertificate {
			principal = CertificatePrincipal
		}
		if x.Path.Protocol == "HTTP" {
			principal = ""
		}
		var be *topology.Ref
		if x.Path.BackendKind == topology.BackendXBackend && x.Path.NoBackend == "" {
			n, err := ParseNamespacedName(strings.TrimPrefix(x.Path.Backend, "XBackend "), "")
			if err != nil {
				t.Fatal(err)
			}
			ref := topology.XBackendRef(n.Namespace, n.Name)
			be = &ref
		}
		e := sim.Engines[i%len(sim.Engines)]
		chain := e.Chain(topology.GatewayRef(r.Gateway.Namespace, r.Gateway.Name), x.Path.Listener, be)
		end := PathEnd{listener: x.Path.Listener,
			clientCert: sim.Graph.ClientCertificate(topology.GatewayRef(r.Gateway.Namespace, r.Gateway.Name), x.Path.Listener)}
		if x.Path.NoBackend != "" {
			// No backend is reached: the data plane's own answer.
			end.refused = DecidedNoBackend
			if x.Path.NoBackend == topology.NoBackendNoRoute {
				end.refused = DecidedNoRoute
			}
		}
		q.Decide(chain, "spiffe://other.example/caller", &end) // another caller first: its CEL results are kept
		got := q.Decide(chain, principal, &end)
		if got.Reason != "" || got.Trace != nil {
			t.Errorf("%s: untraced decision has a reason %q or a trace (%d steps)", r.Describe(), got.Reason, len(got.Trace))
		}
		if want := untraced(x.Decision); !reflect.DeepEqual(got, want) {
			t.Errorf("%s on %s (%s):\n got  %+v\n want %+v", r.Describe(), x.Path.Backend, x.Semantics, got, want)
		}
	}
	return len(res)
}

// batches keeps one Decider per simulator while the test that made it runs, so that its
// scratch space is reused across the requests of a test, as a caller deciding many
// requests reuses it.
var batches = struct {
	sync.Mutex
	m map[*Simulator]*Decider
}{m: map[*Simulator]*Decider{}}

// checkBatch checks that Decider.Decide and an untraced Explain give r what Explain
// gave it (res, err): Decider the primary decisions without reason or trace, untraced Explain
// every result with the same path and expectation, untraced unless the expectation
// fails (then traced, as Explain), and without the AuthPolicy view.
func checkBatch(t *testing.T, sim *Simulator, r *Request, res []*Result, err error) {
	t.Helper()
	batches.Lock()
	b := batches.m[sim]
	if b == nil {
		b = sim.Decider()
		batches.m[sim] = b
		t.Cleanup(func() {
			batches.Lock()
			delete(batches.m, sim)
			batches.Unlock()
		})
	}
	batches.Unlock()
	ds, berr := b.Decide(r)
	brief, serr := sim.Explain(Options{}, []*Request{r}...)
	if (err != nil) != (berr != nil) || (err != nil) != (serr != nil) {
		t.Fatalf("%s: Explain error %v, Decider.Decide error %v, untraced Explain error %v", r.Describe(), err, berr, serr)
	}
	if err != nil {
		return
	}
	var prim []*Result
	for _, x := range res {
		if x.Primary {
			prim = append(prim, x)
		}
	}
	if len(ds) != len(prim) {
		t.Fatalf("%s: Decider.Decide made %d decisions, Explain %d", r.Describe(), len(ds), len(prim))
	}
	for i, x := range prim {
		if want := untraced(x.Decision); !reflect.DeepEqual(ds[i], want) {
			t.Errorf("%s on %s: Decider.Decide:\n got  %+v\n want %+v", r.Describe(), x.Path.Backend, ds[i], want)
		}
	}
	if len(brief) != len(res) {
		t.Fatalf("%s: untraced Explain made %d results, Explain %d", r.Describe(), len(brief), len(res))
	}
	for i, x := range res {
		got := *brief[i]
		want := *x
		want.AuthPolicy = nil
		if x.Expect == nil || x.Expect.Passed {
			want.Decision = untraced(x.Decision)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s on %s: untraced Explain:\n got  %+v\n want %+v", r.Describe(), x.Path.Backend, got, want)
		}
	}
}

// TestDecideMatchesExplain: on the examples and every simulate scenario, under every
// preset (and the reference with incomplete sources matching nobody), each primary in
// turn, Decide and Decider.Decide give each
// request the verdict, level, deciding rule and branches Explain gives it, under the
// file's answers and under every other pair of answers.
func TestDecideMatchesExplain(t *testing.T) {
	sems := allSemantics(t)
	sourceNone := effective.Reference()
	sourceNone.Name, sourceNone.SourceFailOpen = "reference-source-none", effective.SourceNone
	// The legacy built-in allowances under a merged Allow filter: no preset has them
	// there, but the flat path reads them (session close, HTTP GET) like any rule.
	builtinMerged := effective.Reference()
	builtinMerged.Name, builtinMerged.BaseMethods = "reference-builtin-allowances", effective.BaseMethodsBuiltin
	// The L7 fields as the API documents them (no preset enforces them).
	l7 := effective.Reference()
	l7.Name, l7.L7Fields = "reference-l7-enforced", effective.Enforced
	sems = append(sems, sourceNone, builtinMerged, l7)
	dirs := []string{"../../testdata/examples"}
	m, _ := filepath.Glob("../../testdata/simulate/*")
	dirs = append(dirs, m...)
	answers := []Answer{AnswerUnknown, AnswerAllow, AnswerDeny}
	for _, d := range dirs {
		if filepath.Base(d) == "cel-runtime-budget" {
			// Every evaluation of its rules runs to the runtime budget (tens of
			// milliseconds): too slow for this product of semantics, answers and callers.
			// whatif's TestEngineMatchesExplain compares the untraced and traced paths
			// on it.
			continue
		}
		t.Run(filepath.Base(d), func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(d, "*.yaml"))
			var manifests []string
			for _, f := range files {
				if filepath.Base(f) != "requests.yaml" {
					manifests = append(manifests, f)
				}
			}
			s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: manifests})
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(requestsOf(d))
			if err != nil {
				t.Fatal(err)
			}
			rf, err := ParseRequestFile("requests.yaml", data, "default")
			if err != nil {
				t.Fatal(err)
			}
			// Decider.Decide decides under the primary semantics: make each one primary.
			sims := []*Simulator{New(model.New(s), sems, rf.TrustDomain)}
			for _, sem := range sems[1:] {
				sims = append(sims, New(model.New(s), []effective.Semantics{sem}, rf.TrustDomain))
			}
			n := 0
			for _, sim := range sims {
				for _, r := range rf.Requests {
					n += checkDecide(t, sim, r)
					for _, g := range answers {
						for _, b := range answers {
							rr := *r
							rr.ExtAuth = ExtAuth{Gateway: g, Backend: b}
							n += checkDecide(t, sim, &rr)
						}
					}
				}
			}
			if n == 0 {
				t.Fatal("no decision compared")
			}
			t.Logf("%d decisions compared", n)
		})
	}
}

// TestDecideMatchesExplainRandom: the same on the decision fuzzer's random topologies
// and requests (listeners with hostnames, L7 route matches, CEL over every variable,
// headers, plain HTTP, Services and weighted backends).
func TestDecideMatchesExplainRandom(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	sems := allSemantics(t)
	rnd := rand.New(rand.NewSource(1))
	total := 0
	for i := 0; i < n; i++ {
		data := make([]byte, 80)
		rnd.Read(data)
		b := &byteSource{data: data}
		manifests := fuzzTopology(b)
		s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(manifests)})
		if err != nil {
			t.Fatalf("generated topology does not load: %v\n%s", err, manifests)
		}
		sim := New(model.New(s), sems, "cluster.local")
		for j := 0; j < 8; j++ {
			total += checkDecide(t, sim, fuzzRequest(b))
		}
		if t.Failed() {
			t.Fatalf("input %d:\n%s", i, manifests)
		}
	}
	if total < n {
		t.Fatalf("only %d decisions compared", total)
	}
	t.Logf("%d decisions compared", total)
}

// FuzzDecideUntraced: Decide agrees with Explain on any fuzzed topology and request.
func FuzzDecideUntraced(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("ExternalAuth CEL headers spiffe"))
	sems := allSemantics(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		b := &byteSource{data: data}
		manifests := fuzzTopology(b)
		s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(manifests)})
		if err != nil {
			t.Fatalf("generated topology does not load: %v\n%s", err, manifests)
		}
		checkDecide(t, New(model.New(s), sems, "cluster.local"), fuzzRequest(b))
	})
}

// celSnapshot has one CEL rule per level, both about the tool name.
func celSnapshot(t testing.TB) *snapshot.Snapshot {
	return loadYAML(t, baseTopology,
		policy("g", "gw", "Allow", "", rules(`- name: tools
  authorization: {type: CEL, cel: {expression: "request.mcp.tool_name.startsWith('a')"}}`)),
		policy("x", "xb", "Allow", "", rules(`- name: billing
  source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: billing}}
  authorization: {type: CEL, cel: {expression: "request.mcp.tool_name == 'add'"}}`)))
}

// TestQueryCallers: one query decided for several callers keeps one CEL result per
// condition and decides each caller for itself.
func TestQueryCallers(t *testing.T) {
	sim := New(model.New(celSnapshot(t)), []effective.Semantics{effective.Reference()}, "cluster.local")
	chain := sim.Engines[0].Chain(topology.GatewayRef("gw", "gw"), "https", ptr(topology.XBackendRef("app", "xb")))
	q := sim.Query(call("billing", "add"))
	cases := []struct {
		who  string
		want want
	}{
		{"billing", want{Allow, "backend", "app/x#billing"}},
		{"support", want{Deny, "backend", DecidedImplicitDeny}},
		{"", want{Deny, "backend", DecidedImplicitDeny}},
		{"billing", want{Allow, "backend", "app/x#billing"}},
	}
	for _, tc := range cases {
		principal := ""
		if tc.who != "" {
			principal = sa(tc.who).Principal("cluster.local")
		}
		d := q.Decide(chain, principal, &PathEnd{})
		if d.Verdict != tc.want.decision || d.Level != tc.want.level || d.DecidedBy != tc.want.by {
			t.Errorf("%q: got %s/%s/%s, want %v", tc.who, d.Verdict, d.Level, d.DecidedBy, tc.want)
		}
	}
	if got := len(q.c.cel.results); got != 2 {
		t.Errorf("%d CEL results kept for two conditions", got)
	}
	// Queries of one request line and call share their CEL variables; with headers, a
	// query has its own.
	if a, b := sim.Query(call("billing", "add")).c.cel.act, sim.Query(call("support", "add")).c.cel.act; a == nil || a != b {
		t.Error("two queries of one request do not share their CEL variables")
	}
	if sim.Query(call("billing", "refund")).c.cel.act == sim.Query(call("billing", "add")).c.cel.act {
		t.Error("queries of two tools share their CEL variables")
	}
	withHeaders := call("billing", "add")
	withHeaders.HTTP.Headers = map[string]string{"x-tenant": "a"}
	if sim.Query(withHeaders).c.cel.act != nil {
		t.Error("a query with headers takes shared CEL variables")
	}
	// The port is the listener's.
	if p := sim.Query(call("billing", "add")).c.port; p != 443 {
		t.Errorf("port %d, want the https listener's 443", p)
	}
}

// TestDecideAllocations: an untraced decision builds no reason: denies and allows on a
// compiled chain allocate nothing (branches over unknown answers are the exception).
func TestDecideAllocations(t *testing.T) {
	gwAllow := policy("g", "gw", "Allow", "", rules(saTools("billing", "billing", "add, refund"), saTools("support", "support", "add")))
	beAllow := policy("x", "xb", "Allow", "", rules(saTools("sum", "billing", "add")))
	beExt := policy("ext", "xb", "ExternalAuth", "", rules(saTools("refund", "billing", "refund")))
	gwExtAll := policy("ext-all", "gw", "ExternalAuth", "", "")
	ruleLess := policy("open", "xb", "Allow", "", "")
	gw, xb := topology.GatewayRef("gw", "gw"), topology.XBackendRef("app", "xb")
	cases := []struct {
		name     string
		policies []string
		req      *Request
		ans      ExtAuth
	}{
		{"allow", []string{gwAllow, beAllow, beExt}, call("billing", "add"), ExtAuth{}},
		{"gateway implicit deny", []string{gwAllow, beAllow, beExt}, call("nobody", "add"), ExtAuth{}},
		{"backend implicit deny", []string{gwAllow, beAllow, beExt}, call("support", "add"), ExtAuth{}},
		{"authorizer deny", []string{gwAllow, beAllow, beExt}, call("billing", "refund"), ExtAuth{Backend: AnswerDeny}},
		{"rule-less authorizer allows", []string{gwExtAll}, call("billing", "add"), ExtAuth{Gateway: AnswerAllow}},
		{"rule-less authorizer denies", []string{gwExtAll, beAllow}, call("billing", "add"), ExtAuth{Gateway: AnswerDeny}},
		{"rule-less Allow", []string{ruleLess}, call("billing", "add"), ExtAuth{}},
		{"no policy", nil, call("billing", "add"), ExtAuth{}},
	}
	for _, tc := range cases {
		sim := New(model.New(loadYAML(t, append([]string{baseTopology}, tc.policies...)...)), allSemantics(t), "cluster.local")
		tc.req.ExtAuth = tc.ans
		q, principal := sim.Query(tc.req), tc.req.From.Principal("cluster.local")
		for _, e := range sim.Engines {
			chain := e.Chain(gw, "https", &xb)
			if d := q.Decide(chain, principal, &PathEnd{}); d.Verdict == Indeterminate {
				t.Fatalf("%s under %s: indeterminate", tc.name, chain.Semantics.Name)
			}
			if n := testing.AllocsPerRun(50, func() { q.Decide(chain, principal, &PathEnd{}) }); n != 0 {
				t.Errorf("%s under %s: %.0f allocations per decision", tc.name, chain.Semantics.Name, n)
			}
		}
	}
}

// TestBatchAllocations: Decider.Decide routes and decides a request that reaches a
// backend, a Service, a weighted split, nothing (no route), or a plain-HTTP listener,
// for a service account, a SPIFFE ID or an anonymous caller, without allocating.
func TestBatchAllocations(t *testing.T) {
	s := loadYAML(t, baseTopology,
		policy("g", "gw", "Allow", "", rules(`- name: billing
  source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: billing}}
  authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [add]}]}}
- name: spiffe
  source: {type: SPIFFE, spiffe: "spiffe://cluster.local/ns/agents/sa/ops"}
- name: base
  authorization: {type: Inline, mcp: {mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}}`)),
		policy("x", "xb", "Allow", "", rules(`- name: billing
  source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: billing}}
  authorization: {type: Inline, mcp: {methods: [{name: tools/call}]}}`)))
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "cluster.local")
	b := sim.Decider()
	callers := []Caller{sa("billing"), sa("support"), {Kind: CallerSPIFFE, SPIFFE: "spiffe://cluster.local/ns/agents/sa/ops"}, {Kind: CallerAnonymous}}
	verdicts := map[string]int{}
	for _, path := range []string{"/mcp", "/svc", "/split/x", "/nothing"} {
		for _, listener := range []string{"", "http"} {
			for _, from := range callers {
				r := &Request{Name: "a", From: from, Gateway: &NamespacedName{"gw", "gw"}, Listener: listener,
					HTTP: HTTP{Path: path, Headers: map[string]string{"x-tenant": "t"}}, MCP: &MCP{Method: "tools/call", Tool: "add"}}
				ds, err := b.Decide(r) // first: compiles the chains
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range ds {
					verdicts[d.Verdict]++
				}
				if n := testing.AllocsPerRun(20, func() { _, _ = b.Decide(r) }); n != 0 {
					t.Errorf("%s via %q from %s: %.0f allocations per request", path, listener, from.String(), n)
				}
			}
		}
	}
	if verdicts[Allow] == 0 || verdicts[Deny] == 0 {
		t.Errorf("verdicts %v: the requests do not exercise both", verdicts)
	}
}

// TestDecideMatchesExplainGenerated: the same on the small generated topology (hack/gen,
// as the benchmarks use it) and its request file, under every semantics: many policies
// per level, CEL, ExternalAuth, v0alpha0 and base-protocol rules, callers of many
// namespaces.
func TestDecideMatchesExplainGenerated(t *testing.T) {
	f, s := stages.GeneratedSnapshot(t, "small")
	data, err := os.ReadFile(f.Requests)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := ParseRequestFile(f.Requests, data, "default")
	if err != nil {
		t.Fatal(err)
	}
	reqs := rf.Requests
	if testing.Short() {
		reqs = reqs[:200]
	}
	sim := New(model.New(s), allSemantics(t), rf.TrustDomain)
	n := 0
	for _, r := range reqs {
		n += checkDecide(t, sim, r)
		if t.Failed() {
			t.FailNow()
		}
	}
	if n < len(reqs) {
		t.Fatalf("only %d decisions compared for %d requests", n, len(reqs))
	}
	t.Logf("%d decisions compared", n)
}

// requestsOf is the request file of a scenario directory: its requests.yaml, or for the
// shipped examples testdata/requests.yaml (kept out of the folder so that kubectl apply
// -f testdata/examples/ applies it whole).
func requestsOf(dir string) string {
	if filepath.Base(dir) == "examples" {
		return filepath.Join(filepath.Dir(dir), "requests.yaml")
	}
	return filepath.Join(dir, "requests.yaml")
}
