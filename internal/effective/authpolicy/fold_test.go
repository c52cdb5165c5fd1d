package authpolicy

import (
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
)

// mk builds a policy whose rules are "key=body" (body defaults to the policy name), each
// sourced from the policy.
func mk(ref string, st Strategy, node string, created int, rules ...string) *Policy {
	p := &Policy{Ref: ref, Strategy: st, node: node, Created: time.Date(2026, 1, 1, 0, created, 0, 0, time.UTC), Rules: map[string]Rule{}}
	for _, r := range rules {
		k, body, ok := strings.Cut(r, "=")
		if !ok {
			body = ref
		}
		g, n := contractName(k)
		p.Rules[k] = Rule{Key: k, Group: g, Name: n, Spec: []byte(`"` + body + `"`), Source: ref}
	}
	return p
}

// view renders an effective policy as "key<-source" sorted.
func view(e *Effective) []string {
	var out []string
	for _, k := range e.Keys() {
		out = append(out, k+"<-"+e.Rules[k].Source)
	}
	return out
}

func lostView(e *Effective) []string {
	var out []string
	for _, l := range e.Lost {
		out = append(out, l.Key+"@"+l.Source+" by "+strings.Join(l.BeatenBy, ",")+": "+l.Code)
	}
	return out
}

// TestFoldStrategyMatrix is policy-machinery's merge-strategy matrix (T18): each strategy
// of the less specific policy against no lower policy, a lower policy without rules, a
// non-conflicting and a conflicting lower policy.
func TestFoldStrategyMatrix(t *testing.T) {
	const gw, rt = "gateway:ns/gw", "httproute:ns/rt"
	lower := map[string]func() *Policy{
		"none":           nil,
		"empty":          func() *Policy { return mk("ns/low", AtomicDefaults, rt, 1, "patterns#p") },
		"nonconflicting": func() *Policy { return mk("ns/low", AtomicDefaults, rt, 1, "authorization#c") },
		"conflicting":    func() *Policy { return mk("ns/low", AtomicDefaults, rt, 1, "authentication#a", "authorization#c") },
	}
	cases := []struct {
		strategy Strategy
		lower    string
		want     []string
		lost     []string
	}{
		{AtomicDefaults, "none", []string{"authentication#a<-ns/high", "authentication#b<-ns/high"}, nil},
		{AtomicDefaults, "empty", []string{"authentication#a<-ns/high", "authentication#b<-ns/high"},
			[]string{"patterns#p@ns/low by ns/high: " + LostAtomicDefaultsFilled}},
		{AtomicDefaults, "nonconflicting", []string{"authorization#c<-ns/low"},
			[]string{"authentication#a@ns/high by ns/low: " + LostAtomicDefaultsKeptLower, "authentication#b@ns/high by ns/low: " + LostAtomicDefaultsKeptLower}},
		{AtomicDefaults, "conflicting", []string{"authentication#a<-ns/low", "authorization#c<-ns/low"},
			[]string{"authentication#a@ns/high by ns/low: " + LostAtomicDefaultsKeptLower, "authentication#b@ns/high by ns/low: " + LostAtomicDefaultsKeptLower}},

		{AtomicOverrides, "none", []string{"authentication#a<-ns/high", "authentication#b<-ns/high"}, nil},
		{AtomicOverrides, "empty", []string{"authentication#a<-ns/high", "authentication#b<-ns/high"},
			[]string{"patterns#p@ns/low by ns/high: " + LostAtomicOverridesReplaced}},
		{AtomicOverrides, "nonconflicting", []string{"authentication#a<-ns/high", "authentication#b<-ns/high"},
			[]string{"authorization#c@ns/low by ns/high: " + LostAtomicOverridesReplaced}},
		{AtomicOverrides, "conflicting", []string{"authentication#a<-ns/high", "authentication#b<-ns/high"},
			[]string{"authentication#a@ns/low by ns/high: " + LostAtomicOverridesReplaced, "authorization#c@ns/low by ns/high: " + LostAtomicOverridesReplaced}},

		{MergeDefaults, "none", []string{"authentication#a<-ns/high", "authentication#b<-ns/high"}, nil},
		{MergeDefaults, "empty", []string{"authentication#a<-ns/high", "authentication#b<-ns/high", "patterns#p<-ns/low"}, nil},
		{MergeDefaults, "nonconflicting", []string{"authentication#a<-ns/high", "authentication#b<-ns/high", "authorization#c<-ns/low"}, nil},
		{MergeDefaults, "conflicting", []string{"authentication#a<-ns/low", "authentication#b<-ns/high", "authorization#c<-ns/low"},
			[]string{"authentication#a@ns/high by ns/low: " + LostMergeDefaultsKeptLower}},

		{MergeOverrides, "none", []string{"authentication#a<-ns/high", "authentication#b<-ns/high"}, nil},
		{MergeOverrides, "empty", []string{"authentication#a<-ns/high", "authentication#b<-ns/high", "patterns#p<-ns/low"}, nil},
		{MergeOverrides, "nonconflicting", []string{"authentication#a<-ns/high", "authentication#b<-ns/high", "authorization#c<-ns/low"}, nil},
		{MergeOverrides, "conflicting", []string{"authentication#a<-ns/high", "authentication#b<-ns/high", "authorization#c<-ns/low"},
			[]string{"authentication#a@ns/low by ns/high: " + LostMergeOverridesReplaced}},
	}
	for _, c := range cases {
		t.Run(string(c.strategy)+"/"+c.lower, func(t *testing.T) {
			high := mk("ns/high", c.strategy, gw, 0, "authentication#a", "authentication#b")
			ps := []*Policy{high}
			if f := lower[c.lower]; f != nil {
				ps = append(ps, f())
			}
			e := Fold(ps)
			if got := view(e); !reflect.DeepEqual(got, c.want) {
				t.Errorf("effective = %v, want %v", got, c.want)
			}
			if got := lostView(e); !reflect.DeepEqual(got, c.lost) {
				t.Errorf("lost = %v, want %v", got, c.lost)
			}
			// The winning body is the winner's, never a field-level mix.
			for k, r := range e.Rules {
				if string(r.Spec) != `"`+r.Source+`"` {
					t.Errorf("%s: body %s does not come from its source %s", k, r.Spec, r.Source)
				}
			}
		})
	}
}

// TestFoldHigherStrategyDecides checks the derived rules of docs/semantics.md#kuadrant-merge: the less specific
// policy's strategy decides, whatever the lower one declares.
func TestFoldHigherStrategyDecides(t *testing.T) {
	const gw, ls, rt, rr = "gateway:ns/gw", "listener:ns/gw#l", "httproute:ns/rt", "httproute-rule:ns/rt#r"
	cases := []struct {
		name     string
		policies []*Policy
		want     []string
	}{
		{"route atomic override does not stop gateway merged defaults", []*Policy{
			mk("ns/gw", MergeDefaults, gw, 0, "authentication#jwt", "authorization#extra"),
			mk("ns/rt", AtomicOverrides, rt, 1, "authentication#jwt", "authorization#own"),
		}, []string{"authentication#jwt<-ns/rt", "authorization#extra<-ns/gw", "authorization#own<-ns/rt"}},
		{"listener atomic default does not stop gateway merged defaults", []*Policy{
			mk("ns/gw", MergeDefaults, gw, 0, "authentication#jwt"),
			mk("ns/l", AtomicDefaults, ls, 1, "authorization#a"),
		}, []string{"authentication#jwt<-ns/gw", "authorization#a<-ns/l"}},
		{"route override acts on the rule policy below it", []*Policy{
			mk("ns/rt", MergeOverrides, rt, 0, "authorization#a"),
			mk("ns/rr", AtomicDefaults, rr, 1, "authorization#a", "authorization#b"),
		}, []string{"authorization#a<-ns/rt", "authorization#b<-ns/rr"}},
		{"override and default on one gateway compose", []*Policy{
			mk("ns/gw-def", MergeDefaults, gw, 0, "authorization#d"),
			mk("ns/gw-ovr", MergeOverrides, gw, 1, "authentication#jwt"),
			mk("ns/rt", AtomicDefaults, rt, 2, "authentication#jwt", "authorization#r"),
		}, []string{"authentication#jwt<-ns/gw-ovr", "authorization#d<-ns/gw-def", "authorization#r<-ns/rt"}},
		{"rule-level bare policy atomically drops the route's authentication", []*Policy{
			mk("ns/rt", AtomicDefaults, rt, 0, "authentication#jwt", "authorization#a"),
			mk("ns/rr", AtomicDefaults, rr, 1, "authorization#b"),
		}, []string{"authorization#b<-ns/rr"}},
		{"T11 get-rule: gateway merged override + route bare + rule bare", []*Policy{
			mk("ns/gw-auth", MergeOverrides, gw, 0, "authentication#jwt"),
			mk("ns/route-auth", AtomicDefaults, rt, 0, "authorization#admins-only"),
			mk("ns/rule-auth", AtomicDefaults, rr, 0, "authorization#admins-or-privileged"),
		}, []string{"authentication#jwt<-ns/gw-auth", "authorization#admins-or-privileged<-ns/rule-auth"}},
		{"inherited when gates the lower rules under merged defaults", []*Policy{
			mk("ns/gw", MergeDefaults, gw, 0, "conditions#", "authentication#jwt"),
			mk("ns/rt", AtomicDefaults, rt, 1, "authorization#a"),
		}, []string{"authentication#jwt<-ns/gw", "authorization#a<-ns/rt", "conditions#<-ns/gw"}},
		{"a lower when replaces the higher one under merged defaults", []*Policy{
			mk("ns/gw", MergeDefaults, gw, 0, "conditions#", "authentication#jwt"),
			mk("ns/rt", AtomicDefaults, rt, 1, "conditions#", "authorization#a"),
		}, []string{"authentication#jwt<-ns/gw", "authorization#a<-ns/rt", "conditions#<-ns/rt"}},
		{"named patterns merge by name", []*Policy{
			mk("ns/gw", MergeDefaults, gw, 0, "patterns#admin", "patterns#gw-only", "authentication#jwt"),
			mk("ns/rt", AtomicDefaults, rt, 1, "patterns#admin", "authorization#a"),
		}, []string{"authentication#jwt<-ns/gw", "authorization#a<-ns/rt", "patterns#admin<-ns/rt", "patterns#gw-only<-ns/gw"}},
		{"same section and name in two sections are two rules", []*Policy{
			mk("ns/gw", MergeDefaults, gw, 0, "authentication#x"),
			mk("ns/rt", AtomicDefaults, rt, 1, "authorization#x"),
		}, []string{"authentication#x<-ns/gw", "authorization#x<-ns/rt"}},
		{"merged sources are kept through later steps (KO, not the PM example)", []*Policy{
			mk("ns/gw", MergeDefaults, gw, 0, "authentication#jwt"),
			mk("ns/l", MergeDefaults, ls, 1, "authorization#l"),
			mk("ns/rt", AtomicDefaults, rt, 2, "authorization#r"),
		}, []string{"authentication#jwt<-ns/gw", "authorization#l<-ns/l", "authorization#r<-ns/rt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := view(Fold(c.policies)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("effective = %v, want %v", got, c.want)
			}
		})
	}
}

func TestFoldEmpty(t *testing.T) {
	e := Fold(nil)
	if e.Rules != nil || !e.Empty() || len(e.Steps) != 0 {
		t.Fatalf("Fold(nil) = %+v, want no rules", e)
	}
}

// TestOrderPolicies covers policy-machinery's ObjectsByCreationTimestamp (T22) and the
// same-target outcomes (kuadrant-operator v1.5.2 api/v1/merge_strategies.go:66-154).
func TestOrderPolicies(t *testing.T) {
	ps := []*Policy{
		mk("ns/pod2", AtomicDefaults, "n", 2),
		mk("ns/pod3", AtomicDefaults, "n", 1),
		mk("ns/pod1", AtomicDefaults, "n", 1),
		mk("a/pod9", AtomicDefaults, "n", 1),
	}
	OrderPolicies(ps)
	var got []string
	for _, p := range ps {
		got = append(got, p.Ref)
	}
	if want := []string{"a/pod9", "ns/pod1", "ns/pod3", "ns/pod2"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("order = %v, want %v", got, want)
	}

	const rt = "httproute:ns/rt"
	same := []struct {
		name string
		a, b *Policy // a is created before b (or ties and sorts first)
		want []string
	}{
		{"atomic defaults: the newest wins", mk("ns/old", AtomicDefaults, rt, 0, "authentication#x"), mk("ns/new", AtomicDefaults, rt, 5, "authentication#y"),
			[]string{"authentication#y<-ns/new"}},
		{"atomic overrides: the oldest wins", mk("ns/old", AtomicOverrides, rt, 0, "authentication#x"), mk("ns/new", AtomicOverrides, rt, 5, "authentication#y"),
			[]string{"authentication#x<-ns/old"}},
		{"merged defaults: union, the newer wins collisions", mk("ns/old", MergeDefaults, rt, 0, "authentication#x=old", "authorization#o"), mk("ns/new", MergeDefaults, rt, 5, "authentication#x=new", "authorization#n"),
			[]string{"authentication#x<-ns/new", "authorization#n<-ns/new", "authorization#o<-ns/old"}},
		{"merged overrides: union, the older wins collisions", mk("ns/old", MergeOverrides, rt, 0, "authentication#x"), mk("ns/new", MergeOverrides, rt, 5, "authentication#x", "authorization#n"),
			[]string{"authentication#x<-ns/old", "authorization#n<-ns/new"}},
		{"equal timestamps: ns/name ascending is older (atomic defaults → b wins)", mk("ns/a", AtomicDefaults, rt, 3, "authentication#x"), mk("ns/b", AtomicDefaults, rt, 3, "authentication#y"),
			[]string{"authentication#y<-ns/b"}},
	}
	for _, c := range same {
		t.Run(c.name, func(t *testing.T) {
			for _, in := range [][]*Policy{{c.a, c.b}, {c.b, c.a}} {
				ps := append([]*Policy(nil), in...)
				OrderPolicies(ps)
				e := Fold(ps)
				if got := view(e); !reflect.DeepEqual(got, c.want) {
					t.Errorf("input order %s,%s: effective = %v, want %v", in[0].Ref, in[1].Ref, got, c.want)
				}
				for _, l := range e.Lost {
					if !l.SameTarget {
						t.Errorf("lost %s: SameTarget = false for two policies on one node", l.Key)
					}
				}
			}
		})
	}
}

func TestContractNames(t *testing.T) {
	cases := map[string][2]string{
		"patterns#admins":              {"patterns", "admins"},
		"conditions#":                  {"when", "predicates"},
		"authentication#jwt":           {"authentication", "jwt"},
		"metadata#user-info":           {"metadata", "user-info"},
		"authorization#rbac":           {"authorization", "rbac"},
		"callbacks#notify":             {"callbacks", "notify"},
		"response.unauthenticated#":    {"response", "unauthenticated"},
		"response.unauthorized#":       {"response", "unauthorized"},
		"response.success.headers#x":   {"responseSuccessHeaders", "x"},
		"response.success.metadata#md": {"responseSuccessFilters", "md"},
	}
	keys := make([]string, 0, len(cases))
	for k := range cases {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, n := contractName(k)
		if [2]string{g, n} != cases[k] {
			t.Errorf("contractName(%q) = %s/%s, want %v", k, g, n, cases[k])
		}
	}
}
