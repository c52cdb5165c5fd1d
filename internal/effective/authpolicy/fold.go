package authpolicy

import (
	"sort"
)

// Why a rule lost in the fold (Lost.Code), as data; render writes the sentence
// (render.LostText).
const (
	LostAtomicDefaultsKeptLower = "atomic-defaults-kept-lower" // atomic defaults kept the lower policy
	LostAtomicDefaultsFilled    = "atomic-defaults-filled"     // atomic defaults replaced a lower policy without rules
	LostAtomicOverridesReplaced = "atomic-overrides-replaced"  // atomic overrides replaced it
	LostMergeDefaultsKeptLower  = "merge-defaults-kept-lower"  // merge kept the lower rule of the same name
	LostMergeOverridesReplaced  = "merge-overrides-replaced"   // merge overrides replaced the rule of the same name
)

// LostCodes are every Lost code, for the test that render writes a sentence for each.
var LostCodes = []string{LostAtomicDefaultsKeptLower, LostAtomicDefaultsFilled, LostAtomicOverridesReplaced,
	LostMergeDefaultsKeptLower, LostMergeOverridesReplaced}

// Step is one reduction of the fold: the (less specific) policy Policy combined with what
// the more specific policies produced, by Policy's strategy.
type Step struct {
	Policy   string   `json:"policy"`
	Strategy Strategy `json:"strategy"`
	// Added are the keys this step took from Policy into the effective policy.
	Added []string `json:"added,omitempty"`
	// Dropped are the keys this step removed from the effective policy.
	Dropped []string `json:"dropped,omitempty"`
}

// Lost records a rule that did not make it into the effective policy.
type Lost struct {
	Key   string `json:"key"`
	Group string `json:"group"`
	Name  string `json:"name"`
	// Source is the policy whose rule lost.
	Source string `json:"source"`
	// BeatenBy are the policies whose rules are effective instead: the source of the
	// rule of the same key, or, when the key is gone altogether, every source of the
	// effective policy at that step.
	BeatenBy []string `json:"beatenBy"`
	// DecidedBy is the (less specific) policy whose strategy decided, and Strategy that strategy.
	DecidedBy string   `json:"decidedBy"`
	Strategy  Strategy `json:"strategy"`
	// SameTarget is true when the loser and the winners attach to the same node (then
	// age, not hierarchy, made one of them the less specific).
	SameTarget bool `json:"sameTarget,omitempty"`
	// Code is why the rule lost (a Lost* constant); Reason is its sentence: empty here,
	// written by render.
	Code   string `json:"-"`
	Reason string `json:"reason"`
}

// Effective is the effective policy of a path (or a path prefix).
type Effective struct {
	// Policies are the usable policies along the path, least specific first.
	Policies []*Policy `json:"-"`
	// Rules by key, each with the policy it came from. Nil when no policy applies.
	Rules map[string]Rule `json:"rules"`
	// Steps of the reduction, most specific first (the first step is the most specific policy).
	Steps []Step `json:"steps,omitempty"`
	// Lost are the rules that lost, in the order the fold dropped them.
	Lost []Lost `json:"lost,omitempty"`
}

// Empty reports whether no policy applies, or only patterns and `when` remain.
func (e *Effective) Empty() bool { return e == nil || emptyRules(e.Rules) }

// Keys returns the effective rule keys, sorted.
func (e *Effective) Keys() []string {
	if e == nil {
		return nil
	}
	return sortedKeys(e.Rules)
}

// Sources returns the sorted unique policies that contributed rules.
func (e *Effective) Sources() []string {
	if e == nil {
		return nil
	}
	return sources(e.Rules)
}

// Group returns the rules of one contract group ("authentication", "response", "when", ...)
// sorted by name.
func (e *Effective) Group(group string) []Rule {
	if e == nil {
		return nil
	}
	var out []Rule
	for _, k := range sortedKeys(e.Rules) {
		if r := e.Rules[k]; r.Group == group {
			out = append(out, r)
		}
	}
	return out
}

func sources(rules map[string]Rule) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rules {
		if !seen[r.Source] {
			seen[r.Source] = true
			out = append(out, r.Source)
		}
	}
	sort.Strings(out)
	return out
}

// OrderPolicies sorts policies attached to one node the way policy-machinery does:
// oldest creationTimestamp first, then "namespace/name" ascending.
func OrderPolicies(ps []*Policy) {
	sort.SliceStable(ps, func(i, j int) bool { return older(ps[i], ps[j]) })
}

// Fold reduces policies ordered least → most specific into the effective policy,
// exactly as kuadrant-operator's EffectivePolicyForPath (lo.ReduceRight), where the
// strategy of the less specific policy decides each step. Every rule that loses is
// recorded with why (a Lost code).
func Fold(policies []*Policy) *Effective {
	e := &Effective{Policies: policies}
	n := len(policies)
	if n == 0 {
		return e
	}
	last := policies[n-1]
	eff := copyRules(last.Rules)
	e.Steps = append(e.Steps, Step{Policy: last.Ref, Strategy: last.Strategy, Added: sortedKeys(last.Rules)})
	for i := n - 2; i >= 0; i-- {
		src := policies[i]
		step := Step{Policy: src.Ref, Strategy: src.Strategy}
		lose := func(r Rule, beatenBy []string, code string) {
			e.Lost = append(e.Lost, Lost{Key: r.Key, Group: r.Group, Name: r.Name, Source: r.Source,
				BeatenBy: beatenBy, DecidedBy: src.Ref, Strategy: src.Strategy,
				SameTarget: sameNode(policies, r.Source, beatenBy), Code: code})
		}
		switch src.Strategy {
		case AtomicOverrides:
			for _, k := range sortedKeys(eff) {
				lose(eff[k], []string{src.Ref}, LostAtomicOverridesReplaced)
				step.Dropped = append(step.Dropped, k)
			}
			eff = copyRules(src.Rules)
			step.Added = sortedKeys(src.Rules)
		case MergeDefaults:
			for _, k := range sortedKeys(src.Rules) {
				if cur, ok := eff[k]; ok {
					lose(src.Rules[k], []string{cur.Source}, LostMergeDefaultsKeptLower)
					continue
				}
				eff[k] = src.Rules[k]
				step.Added = append(step.Added, k)
			}
		case MergeOverrides:
			for _, k := range sortedKeys(src.Rules) {
				if cur, ok := eff[k]; ok {
					lose(cur, []string{src.Ref}, LostMergeOverridesReplaced)
					step.Dropped = append(step.Dropped, k)
				}
				eff[k] = src.Rules[k]
				step.Added = append(step.Added, k)
			}
		default: // AtomicDefaults
			if !emptyRules(eff) {
				beaten := sources(eff)
				for _, k := range sortedKeys(src.Rules) {
					by := beaten
					if cur, ok := eff[k]; ok {
						by = []string{cur.Source}
					}
					lose(src.Rules[k], by, LostAtomicDefaultsKeptLower)
				}
				break
			}
			for _, k := range sortedKeys(eff) {
				lose(eff[k], []string{src.Ref}, LostAtomicDefaultsFilled)
				step.Dropped = append(step.Dropped, k)
			}
			eff = copyRules(src.Rules)
			step.Added = sortedKeys(src.Rules)
		}
		e.Steps = append(e.Steps, step)
	}
	e.Rules = eff
	return e
}

// sameNode reports whether the losing rule's policy and every winning policy attach to
// the same node (then age, not hierarchy, decided).
func sameNode(policies []*Policy, loser string, winners []string) bool {
	nodes := map[string]string{}
	for _, p := range policies {
		nodes[p.Ref] = p.node
	}
	n := nodes[loser]
	if n == "" || len(winners) == 0 {
		return false
	}
	for _, w := range winners {
		if w == loser || nodes[w] != n {
			return false
		}
	}
	return true
}

func copyRules(in map[string]Rule) map[string]Rule {
	out := make(map[string]Rule, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}
