package effective

import (
	"strings"
	"sync"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
)

// countingResolver counts the lookups it forwards.
type countingResolver struct {
	mu    sync.Mutex
	next  snapshot.PositionResolver
	calls int
}

func (c *countingResolver) Position(src snapshot.Source, fieldPath string) (int, int, bool) {
	c.mu.Lock()
	c.calls++
	c.mu.Unlock()
	return c.next.Position(src, fieldPath)
}

// Rule positions are resolved when first asked for, once, and point at the rule.
func TestRuleSourceLazy(t *testing.T) {
	rules := "  rules:\n  - name: r0\n    source: {type: ServiceAccount, serviceAccount: {name: x}}\n  - name: r1\n    source: {type: ServiceAccount, serviceAccount: {name: yy}}\n"
	s := load(t, pol("p", day(1), "Allow", []string{"Gateway/gw"}, rules))
	cr := &countingResolver{next: s.Positions}
	s.Positions = cr
	e := NewEngine(s, Reference(), "cluster.local")
	cp := e.compile(s.XAccessPolicies[0], true)
	if cr.calls != 0 {
		t.Fatalf("compile resolved %d positions, want none", cr.calls)
	}
	if len(cp.All) != 2 {
		t.Fatalf("%d rules", len(cp.All))
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); _ = cp.All[1].Source.String() }()
	}
	wg.Wait()
	if cr.calls != 2 {
		t.Errorf("resolver called %d times for one rule of a policy of two, want 2 (the policy's rules, once)", cr.calls)
	}
	// pol writes 6 header lines, then "rules:" (7): r0 at 8, r1 at 10.
	for i, want := range []int{8, 10} {
		got := cp.All[i].Position()
		if got.Line != want || got.String() != cp.All[i].Source.String() || !strings.Contains(got.String(), "in.yaml:") {
			t.Errorf("rule %d at %s (line %d), want line %d", i, got, got.Line, want)
		}
		if !cp.All[i].Source.IsFile() {
			t.Errorf("rule %d: IsFile false", i)
		}
	}
	for _, r := range cp.Rules {
		if r.Builtin && r.Position() != s.XAccessPolicies[0].Source {
			t.Errorf("built-in %s at %s, want the policy's %s", r.Name, r.Position(), s.XAccessPolicies[0].Source)
		}
	}
	if (RuleSource{}).String() != (snapshot.Source{}).String() {
		t.Errorf("zero RuleSource = %q", RuleSource{}.String())
	}
}

// orderResolver records the field paths it is asked for, in order.
type orderResolver struct {
	mu    sync.Mutex
	next  snapshot.PositionResolver
	asked []string
}

func (o *orderResolver) Position(src snapshot.Source, fieldPath string) (int, int, bool) {
	o.mu.Lock()
	o.asked = append(o.asked, fieldPath)
	o.mu.Unlock()
	return o.next.Position(src, fieldPath)
}

// The rules of one policy are resolved together, one after another, when the first is
// asked for: FilePositions then parses the policy's document once for all of them
// (its last documents parsed are kept), not once a rule.
func TestRuleSourcesOfAPolicyTogether(t *testing.T) {
	rules := "  rules:\n  - name: r0\n    source: {type: ServiceAccount, serviceAccount: {name: x}}\n" +
		"  - name: r1\n    source: {type: ServiceAccount, serviceAccount: {name: yy}}\n" +
		"  - name: r2\n    source: {type: ServiceAccount, serviceAccount: {name: z}}\n"
	s := load(t, pol("p", day(1), "Allow", []string{"Gateway/gw"}, rules), pol("q", day(2), "Allow", []string{"Gateway/gw"}, rules))
	or := &orderResolver{next: s.Positions}
	s.Positions = or
	e := NewEngine(s, Reference(), "cluster.local")
	p, q := e.compile(s.XAccessPolicies[0], true), e.compile(s.XAccessPolicies[1], true)
	want := []snapshot.Source{p.All[0].Position(), p.All[1].Position(), p.All[2].Position()}
	_ = q.All[2].Position()
	if got := strings.Join(or.asked, " "); got != "spec.rules[0] spec.rules[1] spec.rules[2] spec.rules[0] spec.rules[1] spec.rules[2]" {
		t.Errorf("asked for %s, want each policy's three rules in a row", got)
	}
	for i, r := range p.All {
		first, again := r.Source.At(), r.Source.At() // resolved once: the same position
		if r.Position() != want[i] || first != again {
			t.Errorf("rule %d: %v, then %v", i, want[i], r.Position())
		}
	}
	if want[0].Line >= want[1].Line || want[1].Line >= want[2].Line {
		t.Errorf("lines %d, %d, %d: want the rules' own", want[0].Line, want[1].Line, want[2].Line)
	}
}
