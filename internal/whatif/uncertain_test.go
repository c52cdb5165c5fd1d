package whatif

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/topology"
)

// uncertainExamples is the example scenario with the ledger route's path match written
// as a regular expression using \C, which Envoy accepts and Go's regexp does not.
func uncertainExamples(t *testing.T) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(examples, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples: %v", err)
	}
	var docs []string
	for _, f := range files {
		docs = append(docs, string(mustRead(t, f)))
	}
	all := strings.Join(docs, "\n---\n")
	out := strings.Replace(all, "        type: PathPrefix\n        value: /mcp", "        type: RegularExpression\n        value: '/mcp\\C*'", 1)
	if out == all {
		t.Fatal("the examples have no /mcp prefix match")
	}
	return out
}

// TestUncertainRegexPaths: can-i, who-can, matrix and diff mark the paths whose route
// Envoy may read otherwise (a \C path regex): every decision there is indeterminate,
// decided by uncertain-route, as explain answers a request on such a path; the paths
// of other routes are decided as before.
func TestUncertainRegexPaths(t *testing.T) {
	e := New(model.New(loadYAML(t, uncertainExamples(t))), reference(), Options{})
	ledger := Filter{Backend: "pay/ledger"}
	uncertain := func(what string, o Outcome) {
		t.Helper()
		if c := o.Primary(); c.Decision != explain.Indeterminate || c.DecidedBy != explain.UncertainRouteBy {
			t.Errorf("%s: %s by %s, want indeterminate by %s", what, c.Decision, c.DecidedBy, explain.UncertainRouteBy)
		}
	}
	for _, tg := range e.Targets {
		if marked := tg.UncertainRoute != nil; marked != (tg.Backend == "pay/ledger") {
			t.Errorf("%s: uncertain route %+v", tg.Label(), tg.UncertainRoute)
		}
	}
	// can-i
	answers, err := e.CanI(e.Identity("sa:agents/billing"), Op{Method: "tools/call", Tool: "balance"}, ledger)
	if err != nil || len(answers) != 1 {
		t.Fatalf("can-i: %v %v", answers, err)
	}
	uncertain("can-i balance", answers[0].Outcome)
	if u := answers[0].Target.UncertainRoute; u == nil || u.Why != topology.RegexAnyByte {
		t.Errorf("can-i: target says %+v", u)
	}
	calc, _ := e.CanI(e.Identity("sa:agents/billing"), Op{Method: "tools/call", Tool: "add"}, Filter{Backend: "tools/calc", Listener: "https"})
	if c := calc[0].Outcome.Primary(); c.Decision != explain.Allow {
		t.Errorf("can-i add on calc: %s by %s, want allow", c.Decision, c.DecidedBy)
	}
	// who-can: nobody is allowed, every caller with a certificate is indeterminate.
	res, err := e.WhoCan(Op{Method: "tools/call", Tool: "balance"}, ledger)
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0].Allowed) != 0 || len(res[0].Indeterminate) == 0 {
		t.Errorf("who-can: allowed %d, indeterminate %d", len(res[0].Allowed), len(res[0].Indeterminate))
	}
	for _, en := range res[0].Indeterminate {
		uncertain("who-can "+en.Identity.ID, en.Outcome)
	}
	// matrix
	m := e.Matrix(ledger)
	if len(m.Targets) != 1 {
		t.Fatalf("matrix: %d targets", len(m.Targets))
	}
	mt := m.Targets[0]
	for i, id := range m.Identities {
		if id.ID == "anonymous" {
			continue // fails the HTTPS listener's handshake first
		}
		for o := range mt.Ops {
			uncertain("matrix "+id.ID+" "+mt.Ops[o].Label(), mt.At(i, o))
		}
	}
	// diff: from the examples, the ledger's decisions change to indeterminate.
	d := Diff(New(model.New(load(t, examples)), reference(), Options{}), e, Filter{})
	n := 0
	for _, cs := range []*Changes{&d.Granted, &d.Revoked, &d.DecidedBy} {
		for _, c := range cs.All() {
			if c.Target.Backend != "pay/ledger" || c.After.DecidedBy != explain.UncertainRouteBy {
				t.Errorf("diff: %s %s: after %s by %s", c.Target.Label(), c.Op.Label(), c.After.Decision, c.After.DecidedBy)
			}
			n++
		}
	}
	if n == 0 {
		t.Error("diff: no change")
	}
}
