package render

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// UntranslatedText is the sentence of a part of a v1beta2 AuthPolicy that has no
// kuadrant.io/v1 form (authpolicy.Untranslated; docs/authpolicy-v1beta2.md): describe
// authpolicy and lint AGP106 quote it.
func UntranslatedText(u authpolicy.Untranslated) string {
	var why string
	switch u.Code {
	case authpolicy.UntranslatedSelectsNothing:
		return u.Field + " select nothing (no condition to translate)"
	case authpolicy.UntranslatedModifiers:
		why = fmt.Sprintf("selector %q uses Authorino JSON path modifiers, which have no CEL form", u.Arg)
	case authpolicy.UntranslatedNoAttribute:
		why = fmt.Sprintf("selector %q names no well-known attribute", u.Arg)
	case authpolicy.UntranslatedNoPattern:
		why = "no named pattern " + u.Arg
	case authpolicy.UntranslatedOperator:
		why = fmt.Sprintf("operator %q has no CEL form", u.Arg)
	case authpolicy.UntranslatedTooDeep:
		why = "conditions nested too deeply"
	default:
		why = "untranslated: " + u.Code // a code this function does not know yet: still shown
	}
	return u.Field + ": " + why
}

// ChangeText is the sentence of a difference in meaning of a v1beta2 AuthPolicy at
// kuadrant.io/v1 (authpolicy.Change; docs/authpolicy-v1beta2.md): describe authpolicy
// and lint AGP106 quote it.
func ChangeText(c authpolicy.Change) string {
	switch c.Code {
	case authpolicy.ChangeOnePerRule:
		return fmt.Sprintf("one v1 policy per selected rule (%d): a v1 targetRef names one section", c.Rules)
	case authpolicy.ChangeDynamicMetadata:
		return "response.success.dynamicMetadata is response.success.filters at v1"
	case authpolicy.ChangeCompetes:
		return "at v1 several policies on one target are legal: this one, not enforced today, would become an atomic default competing with " + c.Policy + " (the newer wins)"
	case authpolicy.ChangeHostsUnclaimed:
		return "at v1 hostnames are not claimed: this policy would be enforced on its own routes for the hosts an older policy holds today"
	}
	return "changes: " + c.Code // a code this function does not know yet: still shown
}

// untranslatedTexts and changeTexts are the sentences of a migration's untranslated
// parts and changes, in order (nil for none).
func untranslatedTexts(m *authpolicy.V1Migration) []string {
	if len(m.UntranslatedWhys) == 0 {
		return nil
	}
	out := make([]string, len(m.UntranslatedWhys))
	for i, u := range m.UntranslatedWhys {
		out[i] = UntranslatedText(u)
	}
	return out
}

func changeTexts(m *authpolicy.V1Migration) []string {
	if len(m.ChangeWhys) == 0 {
		return nil
	}
	out := make([]string, len(m.ChangeWhys))
	for i, c := range m.ChangeWhys {
		out[i] = ChangeText(c)
	}
	return out
}

// migrationView is a copy of m with its sentences written (Untranslated, Changes), for
// -o json; nil stays nil.
func migrationView(m *authpolicy.V1Migration) *authpolicy.V1Migration {
	if m == nil {
		return nil
	}
	v := *m
	v.Untranslated, v.Changes = untranslatedTexts(m), changeTexts(m)
	return &v
}

// MigrationParagraph says the kuadrant.io/v1 form of a v1beta2 AuthPolicy in one
// paragraph, as lint AGP106 quotes it (describe authpolicy writes it one item a line).
func MigrationParagraph(m *authpolicy.V1Migration) string {
	var ts []string
	for _, t := range m.Targets {
		s := "targetRef " + t.Kind + "/" + t.Name
		if t.SectionName != "" {
			s += " sectionName " + t.SectionName
		}
		ts = append(ts, s)
	}
	parts := []string{}
	if len(ts) == 1 {
		parts = append(parts, ts[0])
	} else {
		parts = append(parts, fmt.Sprintf("%d policies, %s", len(ts), strings.Join(ts, "; ")))
	}
	for _, n := range m.RuleNames {
		parts = append(parts, fmt.Sprintf("add name: %s to spec.rules[%d] of HTTPRoute %s", n.Name, n.Index, n.Route))
	}
	if len(m.When) > 0 {
		var ws []string
		for _, w := range m.When {
			ws = append(ws, "{predicate: "+quoteYAML(w)+"}")
		}
		parts = append(parts, "when: ["+strings.Join(ws, ", ")+"]")
	}
	keys := make([]string, 0, len(m.RuleWhen))
	for k := range m.RuleWhen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, "rules."+k+".when += {predicate: "+quoteYAML(m.RuleWhen[k])+"}")
	}
	parts = append(parts, "patterns and rules as they are")
	for _, u := range m.UntranslatedWhys {
		parts = append(parts, "no v1 form: "+UntranslatedText(u))
	}
	for _, c := range m.ChangeWhys {
		parts = append(parts, "changes: "+ChangeText(c))
	}
	return strings.Join(parts, "; ")
}

// quoteYAML single-quotes a CEL predicate for a YAML flow value.
func quoteYAML(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// NoSelectionText says why the selection of a routeSelectors list was not computed
// (authpolicy.NoSelection); "" for nil.
func NoSelectionText(n *authpolicy.NoSelection) string {
	if n == nil {
		return ""
	}
	return "no route to select from: " + n.Condition
}

// SelectorMissText says why kuadrant-operator fails a v1beta2 AuthPolicy on a
// routeSelectors list (authpolicy.SelectorMiss; docs/authpolicy-v1beta2.md); "" for nil.
func SelectorMissText(m *authpolicy.SelectorMiss) string {
	switch {
	case m == nil:
		return ""
	case m.OutsideTarget:
		return "a hostname is not within the target's hostnames: the operator fails the policy"
	case m.CatchAll:
		return "selects only rules without matches, under all the route's hostnames: the operator builds no condition from them and fails the policy"
	}
	return "selects no rule: the operator fails the policy (\"cannot match any route rules\")"
}
