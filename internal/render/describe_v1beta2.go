package render

import (
	"fmt"
	"io"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/describe"
	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// describeAuthPolicyV1beta2 writes the view of a kuadrant.io/v1beta2 AuthPolicy.
func describeAuthPolicyV1beta2(w io.Writer, v *describe.V1beta2AuthPolicyView, st Styler) {
	esc := EscapeTerminal
	line(w, "API version:  "+v.APIVersion+" (enforced as "+v.Semantics+" did)")
	line(w, "Target:       "+esc(v.Target))
	writeV1beta2Status(w, v, st, "")
	if len(v.Hosts) > 0 {
		line(w, "Hosts:        "+esc(strings.Join(v.Hosts, ", "))+" "+st.Dim("(claimed in Authorino's index)"))
	}
	if len(v.Covers) > 0 {
		if v.Enforcement == authpolicy.Enforced || v.Enforcement == authpolicy.PartiallyEnforced {
			fmt.Fprintln(w, st.Bold("Covers:"))
		} else {
			fmt.Fprintln(w, st.Bold("Would cover (not enforced):"))
		}
		for _, r := range v.Covers {
			line(w, "  "+v1beta2RuleText(r, st))
		}
	}
	if len(v.RouteSelectors) > 0 {
		fmt.Fprintln(w, st.Bold("Route selectors:"))
		for _, l := range v.RouteSelectors {
			line(w, "  "+st.Cyan(esc(l.Field))+" "+st.Dim("("+l.Source+")"))
			if l.Miss != nil {
				line(w, "    "+st.Yellow(esc(SelectorMissText(l.Miss))))
			}
			if l.NoSelection != nil {
				line(w, "    "+st.Dim("selection not computed: "+esc(NoSelectionText(l.NoSelection))))
			}
			for i, s := range l.Selectors {
				line(w, fmt.Sprintf("    [%d] %s %s", i, esc(selectorText(s)), st.Dim("("+s.Source+")")))
				if l.NoSelection != nil {
					continue
				}
				if len(s.Selects) == 0 {
					line(w, "        selects nothing")
					continue
				}
				for _, r := range s.Selects {
					line(w, "        selects "+v1beta2RuleText(r, st))
				}
				if len(s.Hostnames) > 0 && !(len(s.Hostnames) == 1 && s.Hostnames[0] == "*") {
					line(w, "        for hostnames "+esc(strings.Join(s.Hostnames, ", ")))
				}
			}
		}
	}
	fmt.Fprintln(w, st.Bold("Rules:"))
	writeV1beta2Rules(w, v.Rules, st, "  ")
	fmt.Fprintln(w, st.Bold("kuadrant.io/v1 form (lint AGP106):"))
	if v.V1Form == nil {
		line(w, "  "+st.Yellow("none computed: "+esc(strings.Join(AuthPolicyReasonsText(v.NoV1FormWhy), "; "))))
		return
	}
	writeV1Form(w, v.V1Form)
}

// writeV1beta2Status writes the enforcement, the condition and why not enforced.
func writeV1beta2Status(w io.Writer, v *describe.V1beta2AuthPolicyView, st Styler, indent string) {
	esc := EscapeTerminal
	enf := v.Enforcement
	if v.Enforcement == authpolicy.Enforced {
		enf = st.Green(enf)
	} else {
		enf = st.Yellow(enf)
	}
	line(w, indent+"Enforcement:  "+enf+" [computed]")
	c := v.Condition
	line(w, fmt.Sprintf("%s  condition:  %s=%s (%s: %s)", indent, c.Type, c.Status, c.Reason, esc(c.Message)))
	if r := v.Recorded; r != nil {
		line(w, fmt.Sprintf("%s  recorded:   %s=%s (%s: %s)", indent, r.Type, r.Status, esc(r.Reason), esc(r.Message)))
	}
	for _, y := range v.NotEnforced {
		line(w, indent+"  "+st.Yellow(esc(v1beta2WhyText(y)))+" "+st.Dim("["+y.Reason+"]"))
	}
}

func writeV1beta2Rules(w io.Writer, rules []describe.AuthRule, st Styler, indent string) {
	if len(rules) == 0 {
		fmt.Fprintln(w, indent+"<none>")
	}
	for _, r := range rules {
		s := indent + st.Cyan(EscapeTerminal(r.Key))
		if r.Source != "" {
			s += " " + st.Dim("("+r.Source+")")
		}
		line(w, s)
	}
}

// writeV1Form writes the kuadrant.io/v1 form, one item a line.
func writeV1Form(w io.Writer, m *authpolicy.V1Migration) {
	esc := EscapeTerminal
	if len(m.Targets) > 1 {
		line(w, fmt.Sprintf("  %d policies, one per selected rule:", len(m.Targets)))
	}
	for _, t := range m.Targets {
		s := "  targetRef: {kind: " + t.Kind + ", name: " + t.Name
		if t.SectionName != "" {
			s += ", sectionName: " + t.SectionName
		}
		line(w, esc(s+"}"))
	}
	for _, n := range m.RuleNames {
		line(w, esc(fmt.Sprintf("  add name: %s to spec.rules[%d] of HTTPRoute %s", n.Name, n.Index, n.Route)))
	}
	for _, p := range m.When {
		line(w, "  when: - predicate: "+esc(p))
	}
	keys := make([]string, 0, len(m.RuleWhen))
	for k := range m.RuleWhen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line(w, "  rules."+esc(k)+".when: + predicate: "+esc(m.RuleWhen[k]))
	}
	line(w, "  named patterns and rule bodies carry over as they are")
	for _, u := range m.UntranslatedWhys {
		line(w, "  no v1 form: "+esc(UntranslatedText(u)))
	}
	for _, c := range m.ChangeWhys {
		line(w, "  changes: "+esc(ChangeText(c)))
	}
}

// describeV1beta2OnTarget writes the v1beta2 AuthPolicies bearing on a Gateway or
// HTTPRoute.
func describeV1beta2OnTarget(w io.Writer, vs []*describe.V1beta2AuthPolicyView, st Styler) {
	esc := EscapeTerminal
	fmt.Fprintln(w, st.Bold("Kuadrant AuthPolicies kuadrant.io/v1beta2 (as "+describe.V1beta2Semantics+" enforced them):"))
	for _, v := range vs {
		role := "targets it"
		if v.Role == "gateway" {
			role = "the Gateway's policy, covering this route (it has no AuthPolicy of its own)"
		}
		line(w, "  "+st.Cyan(esc(v.Policy))+" on "+esc(v.Target)+": "+role)
		writeV1beta2Status(w, v, st, "    ")
		if len(v.Hosts) > 0 {
			line(w, "    hosts: "+esc(strings.Join(v.Hosts, ", ")))
		}
		verb := "covers "
		if v.Enforcement != authpolicy.Enforced && v.Enforcement != authpolicy.PartiallyEnforced {
			verb = "would cover (not enforced) "
		}
		for _, r := range v.Covers {
			line(w, "    "+verb+v1beta2RuleText(r, st))
		}
		for _, l := range v.RouteSelectors {
			line(w, "    "+esc(l.Field)+": "+fmt.Sprint(len(l.Selectors))+" selector(s) "+st.Dim("("+l.Source+")"))
		}
		line(w, "    rules:")
		writeV1beta2Rules(w, v.Rules, st, "      ")
	}
	line(w, "  "+st.Dim("describe authpolicy NAME shows a policy's selectors and its kuadrant.io/v1 form"))
}

// v1beta2RuleText is e.g. "route app/r rule-1 (routes.yaml:12)".
func v1beta2RuleText(r describe.V1beta2Rule, st Styler) string {
	s := "route " + EscapeTerminal(r.Route) + " " + EscapeTerminal(r.Name)
	if r.Source != "" {
		s += " " + st.Dim("("+r.Source+")")
	}
	return s
}

// selectorText writes a route selector compactly, e.g.
// "hostnames a.example.com; match PathPrefix /toy, GET, header x-a=1".
func selectorText(s describe.V1beta2Selector) string {
	var parts []string
	if len(s.Selector.Hostnames) > 0 {
		hs := make([]string, 0, len(s.Selector.Hostnames))
		for _, h := range s.Selector.Hostnames {
			hs = append(hs, string(h))
		}
		parts = append(parts, "hostnames "+strings.Join(hs, ", "))
	}
	for _, m := range s.Selector.Matches {
		parts = append(parts, "match "+matchText(m))
	}
	if len(parts) == 0 {
		return "(every rule)"
	}
	return strings.Join(parts, "; ")
}

func matchText(m gwapiv1.HTTPRouteMatch) string {
	var parts []string
	if m.Path != nil {
		t, v := "PathPrefix", "/"
		if m.Path.Type != nil {
			t = string(*m.Path.Type)
		}
		if m.Path.Value != nil {
			v = *m.Path.Value
		}
		parts = append(parts, t+" "+v)
	}
	if m.Method != nil {
		parts = append(parts, string(*m.Method))
	}
	for _, h := range m.Headers {
		op := "="
		if h.Type != nil && *h.Type == gwapiv1.HeaderMatchRegularExpression {
			op = "~"
		}
		parts = append(parts, "header "+string(h.Name)+op+h.Value)
	}
	for _, q := range m.QueryParams {
		op := "="
		if q.Type != nil && *q.Type == gwapiv1.QueryParamMatchRegularExpression {
			op = "~"
		}
		parts = append(parts, "query "+string(q.Name)+op+q.Value)
	}
	if len(parts) == 0 {
		return "(any request)"
	}
	return strings.Join(parts, ", ")
}

// v1beta2WhyText is the sentence of one reason a v1beta2 AuthPolicy is not enforced
// (somewhere): describe.V1beta2Why's code and data.
func v1beta2WhyText(y describe.V1beta2Why) string {
	switch y.Reason {
	case describe.V1beta2SecondOnTarget:
		return "not enforced: " + y.Condition + " (one AuthPolicy per target: the operator reconciled that one first)"
	case describe.V1beta2SelectsNothing:
		return "not enforced: " + y.Field + ": " + y.Condition
	case describe.V1beta2GatewayOverridden:
		return "not enforced on HTTPRoute " + y.Route + ": its own AuthPolicy " + y.By + " replaces the Gateway's there"
	case describe.V1beta2NoRoutes:
		return "not enforced: no HTTPRoute names the Gateway, so the policy covers no route and no AuthConfig is built"
	case describe.V1beta2HostnameClaimed:
		return "not enforced for host " + y.Host + ": the older AuthPolicy " + y.By + " claimed it first; Authorino does not link it to this policy's AuthConfig, and requests for it get " + y.By + "'s rules"
	}
	// V1beta2NotProgrammed, the enforcement (Unsupported, TargetNotFound) or the
	// condition's reason: the policy's own reasons.
	return "not enforced: " + strings.Join(AuthPolicyReasonsText(y.Why), "; ")
}

// authPolicyJSONView writes, in c (a copy of a describe view), the text of its
// AuthPolicy parts for -o json: the paths Kuadrant never programs and the rules lost in
// their fold, the reasons of an AuthPolicy's status and of the v1beta2 views. The
// slices it changes are copied.
func authPolicyJSONView(c *describe.View) {
	if c.AuthPolicyPaths != nil {
		paths := make([]describe.AuthPath, len(c.AuthPolicyPaths))
		for i, p := range c.AuthPolicyPaths {
			p.NotProgrammed = unprogrammedText(p.Unprogrammed)
			p.Lost = lostView(p.Lost)
			paths[i] = p
		}
		c.AuthPolicyPaths = paths
	}
	if a := c.AuthPolicyStatus; a != nil {
		v := *a
		v.Reasons = AuthPolicyReasonsText(a.Why)
		c.AuthPolicyStatus = &v
	}
	c.AuthPolicyV1beta2 = v1beta2JSONView(c.AuthPolicyV1beta2)
	if c.V1beta2AuthPolicies != nil {
		vs := make([]*describe.V1beta2AuthPolicyView, len(c.V1beta2AuthPolicies))
		for i, v := range c.V1beta2AuthPolicies {
			vs[i] = v1beta2JSONView(v)
		}
		c.V1beta2AuthPolicies = vs
	}
}

// v1beta2JSONView is a copy of v with its sentences written (NotEnforced's messages,
// the route selectors' SelectsNothing and NotComputed, the v1 form's, NoV1Form); nil
// stays nil.
func v1beta2JSONView(v *describe.V1beta2AuthPolicyView) *describe.V1beta2AuthPolicyView {
	if v == nil {
		return nil
	}
	c := *v
	if v.NotEnforced != nil {
		c.NotEnforced = make([]describe.V1beta2Why, len(v.NotEnforced))
		for i, y := range v.NotEnforced {
			y.Message = v1beta2WhyText(y)
			c.NotEnforced[i] = y
		}
	}
	if v.RouteSelectors != nil {
		c.RouteSelectors = make([]describe.V1beta2Selectors, len(v.RouteSelectors))
		for i, l := range v.RouteSelectors {
			l.SelectsNothing, l.NotComputed = SelectorMissText(l.Miss), NoSelectionText(l.NoSelection)
			c.RouteSelectors[i] = l
		}
	}
	c.V1Form = migrationView(v.V1Form)
	if len(v.NoV1FormWhy) > 0 {
		c.NoV1Form = strings.Join(AuthPolicyReasonsText(v.NoV1FormWhy), "; ")
	}
	return &c
}
