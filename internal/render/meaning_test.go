package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
	"github.com/agpol/agpol/internal/whatif"
)

// TestExplainAndDescribeAgreeOnSteps runs explain on every call of the decision space
// (every target, identity and operation) of every testdata scenario under every preset,
// and checks that describe's chain of the same path states the meaning of each Allow
// step explain took: a level passed because no rule selects the caller (PR #220), a
// level that denies such a caller, a rule-less policy that allows (or not tools/call).
func TestExplainAndDescribeAgreeOnSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("explains every call of every scenario under every preset")
	}
	scenarios := map[string][]string{"examples": {"../../testdata/examples"}}
	dirs, _ := filepath.Glob("../../testdata/simulate/*")
	for _, d := range dirs {
		if m := filepath.Join(d, "manifests.yaml"); fileExists(m) {
			scenarios[filepath.Base(d)] = []string{m}
		}
	}
	// The examples without the gateway's handshake rule: under pr-220 the gateway level
	// selects only some callers, so the others pass it.
	b, err := os.ReadFile("../../testdata/examples/40-access-policies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const handshake = "  - name: handshake\n    authorization:\n      type: Inline\n      mcp:\n        mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS\n"
	if !strings.Contains(string(b), handshake) {
		t.Fatal("the examples' edge-baseline has no handshake rule to remove")
	}
	tmp := t.TempDir()
	files, _ := filepath.Glob("../../testdata/examples/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "40-access-policies.yaml" {
			data = []byte(strings.Replace(string(data), handshake, "", 1))
		}
		if err := os.WriteFile(filepath.Join(tmp, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scenarios["examples-without-handshake"] = []string{tmp}

	sems, err := effective.ParsePresets("all")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for name, files := range scenarios {
		s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: files})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, sem := range sems {
			checkMeanings(t, name, s, sem, seen)
		}
	}
	for _, what := range []string{"passed", "denied-unselected", "rule-less-allows"} {
		if seen[what] == 0 {
			t.Errorf("no explained call took a step %s: the check cannot fail", what)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// checkMeanings checks every call of the decision space of s under sem.
func checkMeanings(t *testing.T, scenario string, s *snapshot.Snapshot, sem effective.Semantics, seen map[string]int) {
	e := whatif.New(model.New(s), []effective.Semantics{sem}, whatif.Options{})
	sim := e.Simulator()
	trees := map[*effective.Chain]*node{}
	for _, tg := range e.Targets {
		for _, id := range e.Identities {
			for _, op := range tg.Ops {
				res, err := sim.Explain(explain.Full, e.Request(tg, id.Caller, op))
				if err != nil {
					t.Fatalf("%s/%s: %v", scenario, sem.Name, err)
				}
				for _, r := range res {
					chain := chainOf(t, sim, r)
					tree := trees[chain]
					if tree == nil {
						tree = &node{}
						chainTree(tree, chain, Styler{}, chainFull, "")
						trees[chain] = tree
					}
					where := scenario + "/" + sem.Name + ": " + r.Request.Describe()
					checkResult(t, where, r, tree, op.Method == "tools/call", seen)
				}
			}
		}
	}
}

// chainOf is the chain explain decided r on.
func chainOf(t *testing.T, sim *explain.Simulator, r *explain.Result) *effective.Chain {
	gw, err := explain.ParseNamespacedName(r.Path.Gateway, "")
	if err != nil {
		t.Fatal(err)
	}
	var be *topology.Ref
	if r.Path.BackendKind == topology.BackendXBackend {
		n, err := explain.ParseNamespacedName(strings.TrimPrefix(r.Path.Backend, "XBackend "), "")
		if err != nil {
			t.Fatal(err)
		}
		ref := topology.XBackendRef(n.Namespace, n.Name)
		be = &ref
	}
	return sim.Engines[0].Chain(topology.GatewayRef(gw.Namespace, gw.Name), r.Path.Listener, be)
}

// allowStep is the text of describe's Allow step of a level (of policy p when set).
func allowStep(tree *node, level, p string) []string {
	var out []string
	for _, c := range tree.children {
		if strings.Contains(c.text, ". "+level+" Allow") && (p == "" || strings.Contains(c.text, " "+p+" ")) {
			out = append(out, c.text)
		}
	}
	return out
}

func checkResult(t *testing.T, where string, r *explain.Result, tree *node, toolsCall bool, seen map[string]int) {
	const pass = "a caller no rule selects passes the level"
	for _, st := range r.Trace {
		switch st.Event {
		case explain.EventLevelPassed:
			seen["passed"]++
			if steps := allowStep(tree, st.Level, ""); len(steps) != 1 || !strings.Contains(steps[0], pass) {
				t.Errorf("%s: explain passes the %s level (no rule selects the caller); describe says %q", where, st.Level, steps)
			}
		case explain.EventRuleLessAllows:
			seen["rule-less-allows"]++
			steps := allowStep(tree, st.Level, st.Policy)
			if len(steps) != 1 || !strings.Contains(steps[0], "no rules, allows everything") || (toolsCall && strings.Contains(steps[0], "but tools/call")) {
				t.Errorf("%s: explain lets rule-less %s allow; describe says %q", where, st.Policy, steps)
			}
		}
	}
	if r.Cause == nil {
		return
	}
	switch r.Cause.Event {
	case explain.CauseNoRuleMatches:
		if len(r.Cause.Near) > 0 {
			return // some rule selects the caller
		}
		seen["denied-unselected"]++
		if steps := allowStep(tree, r.Level, ""); len(steps) != 1 || strings.Contains(steps[0], pass) || !strings.Contains(steps[0], "any rule admits") {
			t.Errorf("%s: explain denies at the %s level a caller no rule selects; describe says %q", where, r.Level, steps)
		}
	case explain.CausePolicyMatchesNothing:
		if steps := allowStep(tree, r.Level, r.DecidedBy); len(steps) != 1 ||
			(strings.Contains(steps[0], "no rules, allows everything") && !(toolsCall && strings.Contains(steps[0], "but tools/call"))) {
			t.Errorf("%s: explain denies by Allow policy %s; describe says %q", where, r.DecidedBy, steps)
		}
	}
}
