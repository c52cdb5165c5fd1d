package authpolicy

import (
	"strconv"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
	"github.com/agpol/agpol/internal/apis/kuadrant/v1beta2"
)

// V1Migration is the kuadrant.io/v1 form of a v1beta2 AuthPolicy: v1 has no
// routeSelectors (a policy targets a route rule by sectionName, which names the rule)
// and its policy-level `when` holds CEL predicates only
// (docs/semantics.md#kuadrant-v1-form). Named patterns, rule bodies and rule-level `when` patterns carry over as they are.
type V1Migration struct {
	// Targets are the v1 targetRefs: one policy per selected rule (sectionName), or
	// the v1beta2 target when it selects no rules.
	Targets []V1Target `json:"targets"`
	// RuleNames are the route rules that need a name for sectionName to name them.
	RuleNames []RuleNameToAdd `json:"ruleNames,omitempty"`
	// When is the policy-level CEL predicates (all must hold).
	When []string `json:"when,omitempty"`
	// RuleWhen maps a rule ("authentication.api-key") to the CEL predicate its
	// routeSelectors become, added to its `when`.
	RuleWhen map[string]string `json:"ruleWhen,omitempty"`
	// UntranslatedWhys are the parts that have no v1 form, as data; Untranslated is
	// their sentences (render.UntranslatedText): empty here, written by render.
	UntranslatedWhys []Untranslated `json:"-"`
	Untranslated     []string       `json:"untranslated,omitempty"`
	// ChangeWhys are the differences in meaning at v1, as data; Changes is their
	// sentences (render.ChangeText): empty here, written by render.
	ChangeWhys []Change `json:"-"`
	Changes    []string `json:"changes,omitempty"`
}

// Untranslated is one part of a v1beta2 policy that has no kuadrant.io/v1 form: a code
// (one of the Untranslated* constants), the part, and what the code names.
type Untranslated struct {
	Code string
	// Field is the part: "when", "routeSelectors" (the top-level ones) or
	// "SECTION.NAME.routeSelectors" (a rule's).
	Field string
	// Arg is the selector (UntranslatedModifiers, UntranslatedNoAttribute), the named
	// pattern (UntranslatedNoPattern) or the operator (UntranslatedOperator).
	Arg string
}

// Untranslated codes (Untranslated.Code).
const (
	UntranslatedSelectsNothing = "selects-nothing"     // Field selects no rule: no condition to translate
	UntranslatedModifiers      = "json-path-modifiers" // selector Arg uses Authorino JSON path modifiers
	UntranslatedNoAttribute    = "no-attribute"        // selector Arg names no well-known attribute
	UntranslatedNoPattern      = "no-named-pattern"    // the named pattern Arg is not defined
	UntranslatedOperator       = "operator"            // operator Arg has no CEL form
	UntranslatedTooDeep        = "too-deep"            // the conditions nest deeper than 16 levels
)

// UntranslatedCodes are every Untranslated code, for the test that render writes a
// sentence for each.
var UntranslatedCodes = []string{UntranslatedSelectsNothing, UntranslatedModifiers, UntranslatedNoAttribute,
	UntranslatedNoPattern, UntranslatedOperator, UntranslatedTooDeep}

// Change is one difference in meaning of a policy at kuadrant.io/v1: a code (one of the
// Change* constants) and what it names.
type Change struct {
	Code string
	// Rules is the number of route rules the policy selects (ChangeOnePerRule).
	Rules int
	// Policy is the policy on the same target ("ns/name") this one would compete with
	// (ChangeCompetes).
	Policy string
}

// Change codes (Change.Code).
const (
	// ChangeOnePerRule: a v1 targetRef names one section, so one policy per selected rule.
	ChangeOnePerRule = "one-policy-per-rule"
	// ChangeDynamicMetadata: response.success.dynamicMetadata is response.success.filters.
	ChangeDynamicMetadata = "dynamic-metadata"
	// ChangeCompetes: several policies on one target are legal at v1, and this one, not
	// enforced today, becomes an atomic default competing with Policy.
	ChangeCompetes = "competing-default"
	// ChangeHostsUnclaimed: v1 does not claim hostnames, so this policy would be enforced
	// for the hosts an older policy holds today.
	ChangeHostsUnclaimed = "hosts-unclaimed"
)

// ChangeCodes are every Change code, for the test that render writes a sentence for each.
var ChangeCodes = []string{ChangeOnePerRule, ChangeDynamicMetadata, ChangeCompetes, ChangeHostsUnclaimed}

// V1Target is one v1 targetRef.
type V1Target struct {
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	SectionName string `json:"sectionName,omitempty"`
}

// RuleNameToAdd is a name to give to a route rule.
type RuleNameToAdd struct {
	Route string `json:"route"` // ns/name
	Index int    `json:"index"`
	Name  string `json:"name"`
}

// Migrate computes the v1 form of the policy.
func (p *V1beta2Policy) Migrate() *V1Migration {
	m := &V1Migration{RuleWhen: map[string]string{}}
	tr := p.spec.TargetRef
	base := V1Target{Kind: string(tr.Kind), Name: string(tr.Name)}
	for _, c := range p.spec.Conditions {
		if s, gap := patternCEL(toV1Pattern(c), p.spec.NamedPatterns, 0); gap != nil {
			gap.Field = "when"
			m.UntranslatedWhys = append(m.UntranslatedWhys, *gap)
		} else {
			m.When = append(m.When, s)
		}
	}
	if len(p.spec.RouteSelectors) > 0 && p.route != nil {
		rules, conds := p.selected(p.spec.RouteSelectors)
		narrowed := false
		for _, s := range p.spec.RouteSelectors {
			if h := hostnamesForConditions(s, p.route); len(h) != 1 || h[0] != "*" {
				narrowed = true
			}
		}
		if tr.Kind == "HTTPRoute" && len(p.Routes) == 1 {
			for _, i := range rules {
				name := string(ptrOr(p.route.Spec.Rules[i].Name))
				if name == "" {
					name = "rule-" + strconv.Itoa(i+1)
					m.RuleNames = append(m.RuleNames, RuleNameToAdd{Route: p.Routes[0].Route, Index: i, Name: name})
				}
				m.Targets = append(m.Targets, V1Target{Kind: base.Kind, Name: base.Name, SectionName: name})
			}
			if len(rules) > 1 {
				m.ChangeWhys = append(m.ChangeWhys, Change{Code: ChangeOnePerRule, Rules: len(rules)})
			}
		}
		if len(conds) == 0 {
			m.UntranslatedWhys = append(m.UntranslatedWhys, Untranslated{Code: UntranslatedSelectsNothing, Field: "routeSelectors"})
		} else if narrowed || tr.Kind == "Gateway" {
			// The selectors narrow the hostnames, or select among the Gateway's routes:
			// sectionName cannot say it; the conditions the operator built can.
			if s, gap := patternCEL(kuadrantv1.PatternExpressionOrRef{Any: conds}, nil, 0); gap != nil {
				gap.Field = "routeSelectors"
				m.UntranslatedWhys = append(m.UntranslatedWhys, *gap)
			} else if s != "" {
				m.When = append(m.When, s)
			}
		}
	}
	if len(m.Targets) == 0 {
		m.Targets = []V1Target{base}
	}
	for _, nr := range p.spec.AuthScheme.Rules() {
		if len(nr.Rule.RouteSelectors) == 0 || p.route == nil {
			continue
		}
		_, conds := p.selected(nr.Rule.RouteSelectors)
		key := nr.Section + "." + nr.Name
		if len(conds) == 0 {
			m.UntranslatedWhys = append(m.UntranslatedWhys, Untranslated{Code: UntranslatedSelectsNothing, Field: key + ".routeSelectors"})
		} else if s, gap := patternCEL(kuadrantv1.PatternExpressionOrRef{Any: conds}, nil, 0); gap != nil {
			gap.Field = key + ".routeSelectors"
			m.UntranslatedWhys = append(m.UntranslatedWhys, *gap)
		} else {
			m.RuleWhen[key] = s
		}
	}
	if p.spec.AuthScheme.Response != nil && len(p.spec.AuthScheme.Response.Success.DynamicMetadata) > 0 {
		m.ChangeWhys = append(m.ChangeWhys, Change{Code: ChangeDynamicMetadata})
	}
	if p.SecondOn != "" {
		m.ChangeWhys = append(m.ChangeWhys, Change{Code: ChangeCompetes, Policy: p.SecondOn})
	}
	if len(p.LostHosts) > 0 {
		m.ChangeWhys = append(m.ChangeWhys, Change{Code: ChangeHostsUnclaimed})
	}
	return m
}

func ptrOr(n *gwapiv1.SectionName) gwapiv1.SectionName {
	if n == nil {
		return ""
	}
	return *n
}

// patternCEL writes an Authorino pattern as the CEL predicate that states it over
// Kuadrant's well-known attributes (RFC 0002): eq ==, neq !=, incl in, excl !in,
// matches .matches() (both unanchored RE2), all &&, any ||; or, when it has none, why
// (without its Field).
func patternCEL(p kuadrantv1.PatternExpressionOrRef, named map[string][]v1beta2.PatternExpression, depth int) (string, *Untranslated) {
	if depth > 16 {
		return "", &Untranslated{Code: UntranslatedTooDeep}
	}
	join := func(list []kuadrantv1.PatternExpressionOrRef, op string) (string, *Untranslated) {
		var parts []string
		for _, q := range list {
			s, gap := patternCEL(q, named, depth+1)
			if gap != nil {
				return "", gap
			}
			if s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) == 1 {
			return parts[0], nil
		}
		if len(parts) == 0 {
			return "", nil
		}
		return "(" + strings.Join(parts, " "+op+" ") + ")", nil
	}
	switch {
	case p.Predicate != "":
		return p.Predicate, nil
	case p.PatternRef != "":
		allOf, ok := named[p.PatternRef]
		if !ok {
			return "", &Untranslated{Code: UntranslatedNoPattern, Arg: p.PatternRef}
		}
		var list []kuadrantv1.PatternExpressionOrRef
		for _, pe := range allOf {
			list = append(list, kuadrantv1.PatternExpressionOrRef{PatternExpression: kuadrantv1.PatternExpression{Selector: pe.Selector, Operator: pe.Operator, Value: pe.Value}})
		}
		return join(list, "&&")
	case len(p.All) > 0:
		return join(p.All, "&&")
	case len(p.Any) > 0:
		return join(p.Any, "||")
	}
	attr, gap := celAttribute(p.Selector)
	if gap != nil {
		return "", gap
	}
	v := strconv.Quote(p.Value)
	switch p.Operator {
	case "eq":
		return attr + " == " + v, nil
	case "neq":
		return attr + " != " + v, nil
	case "incl":
		return v + " in " + attr, nil
	case "excl":
		return "!(" + v + " in " + attr + ")", nil
	case "matches":
		return attr + ".matches(" + v + ")", nil
	}
	return "", &Untranslated{Code: UntranslatedOperator, Arg: p.Operator}
}

// celAttribute maps an Authorino selector to a CEL attribute expression.
func celAttribute(sel string) (string, *Untranslated) {
	if strings.ContainsAny(sel, "@|#*?") {
		return "", &Untranslated{Code: UntranslatedModifiers, Arg: sel}
	}
	s := strings.TrimPrefix(sel, "context.")
	s = strings.Replace(s, "request.http.", "request.", 1)
	if h, ok := strings.CutPrefix(s, "request.headers."); ok {
		return "request.headers[" + strconv.Quote(strings.ToLower(h)) + "]", nil
	}
	for _, root := range []string{"request.", "source.", "destination.", "auth.", "connection.", "metadata."} {
		if strings.HasPrefix(s, root) {
			return s, nil
		}
	}
	return "", &Untranslated{Code: UntranslatedNoAttribute, Arg: sel}
}
