package authpolicy

import (
	"fmt"
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
	// Untranslated lists what has no v1 form.
	Untranslated []string `json:"untranslated,omitempty"`
	// Changes are the differences in meaning at v1.
	Changes []string `json:"changes,omitempty"`
}

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
		if s, err := patternCEL(toV1Pattern(c), p.spec.NamedPatterns, 0); err != nil {
			m.Untranslated = append(m.Untranslated, "when: "+err.Error())
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
				m.Changes = append(m.Changes, fmt.Sprintf("one v1 policy per selected rule (%d): a v1 targetRef names one section", len(rules)))
			}
		}
		if len(conds) == 0 {
			m.Untranslated = append(m.Untranslated, "routeSelectors select nothing (no condition to translate)")
		} else if narrowed || tr.Kind == "Gateway" {
			// The selectors narrow the hostnames, or select among the Gateway's routes:
			// sectionName cannot say it; the conditions the operator built can.
			if s, err := patternCEL(kuadrantv1.PatternExpressionOrRef{Any: conds}, nil, 0); err != nil {
				m.Untranslated = append(m.Untranslated, "routeSelectors: "+err.Error())
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
			m.Untranslated = append(m.Untranslated, key+".routeSelectors select nothing (no condition to translate)")
		} else if s, err := patternCEL(kuadrantv1.PatternExpressionOrRef{Any: conds}, nil, 0); err != nil {
			m.Untranslated = append(m.Untranslated, key+".routeSelectors: "+err.Error())
		} else {
			m.RuleWhen[key] = s
		}
	}
	if p.spec.AuthScheme.Response != nil && len(p.spec.AuthScheme.Response.Success.DynamicMetadata) > 0 {
		m.Changes = append(m.Changes, "response.success.dynamicMetadata is response.success.filters at v1")
	}
	if p.SecondOn != "" {
		m.Changes = append(m.Changes, "at v1 several policies on one target are legal: this one, not enforced today, would become an atomic default competing with "+p.SecondOn+" (the newer wins)")
	}
	if len(p.LostHosts) > 0 {
		m.Changes = append(m.Changes, "at v1 hostnames are not claimed: this policy would be enforced on its own routes for the hosts an older policy holds today")
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
// matches .matches() (both unanchored RE2), all &&, any ||.
func patternCEL(p kuadrantv1.PatternExpressionOrRef, named map[string][]v1beta2.PatternExpression, depth int) (string, error) {
	if depth > 16 {
		return "", fmt.Errorf("conditions nested too deeply")
	}
	join := func(list []kuadrantv1.PatternExpressionOrRef, op string) (string, error) {
		var parts []string
		for _, q := range list {
			s, err := patternCEL(q, named, depth+1)
			if err != nil {
				return "", err
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
			return "", fmt.Errorf("no named pattern %s", p.PatternRef)
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
	attr, err := celAttribute(p.Selector)
	if err != nil {
		return "", err
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
	return "", fmt.Errorf("operator %q has no CEL form", p.Operator)
}

// celAttribute maps an Authorino selector to a CEL attribute expression.
func celAttribute(sel string) (string, error) {
	if strings.ContainsAny(sel, "@|#*?") {
		return "", fmt.Errorf("selector %q uses Authorino JSON path modifiers, which have no CEL form", sel)
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
	return "", fmt.Errorf("selector %q names no well-known attribute", sel)
}
