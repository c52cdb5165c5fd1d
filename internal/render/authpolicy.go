package render

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// AuthPolicyReport is the -o json|yaml document of agpol effective authpolicy. Its
// "paths" and "policies" are a public contract (issue 4).
type AuthPolicyReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Paths    []AuthPolicyPath      `json:"paths"`
	Policies []AuthPolicyStatusDoc `json:"policies"`
	// NotProgrammed are the routes a listener never carries (hostnames), left out.
	NotProgrammed []authpolicy.NotProgrammed `json:"notProgrammed,omitempty"`
	// V1beta2 are the kuadrant.io/v1beta2 AuthPolicies bearing on the target.
	V1beta2 []authpolicy.V1beta2TargetPolicy `json:"v1beta2,omitempty"`
}

// AuthPolicyPath is the effective AuthPolicy of one path prefix. Gateway, Listener,
// Route and Rule are present only as far as the prefix reaches.
type AuthPolicyPath struct {
	Gateway  string `json:"gateway,omitempty"`
	Listener string `json:"listener,omitempty"`
	Route    string `json:"route,omitempty"`
	Rule     string `json:"rule,omitempty"`
	// Effective maps each non-empty group to its rules by name.
	Effective map[string]map[string]EffectiveRuleDoc `json:"effective"`
	// PoliciesInPath are the policies folded, least specific first.
	PoliciesInPath []string `json:"policiesInPath"`
	// Lost are the rules that lost in the fold, with the reason.
	Lost []authpolicy.Lost `json:"lost,omitempty"`
	// NotProgrammed says why Kuadrant never programs the path's Gateway: the effective
	// policy is what Kuadrant computes, and no data plane runs it.
	NotProgrammed string `json:"notProgrammed,omitempty"`
}

// EffectiveRuleDoc is one effective rule.
type EffectiveRuleDoc struct {
	Source   string          `json:"source"`
	Spec     json.RawMessage `json:"spec,omitempty"`
	Position string          `json:"position,omitempty"`
}

// AuthPolicyStatusDoc is one policies[] entry: the computed enforcement of an AuthPolicy.
type AuthPolicyStatusDoc struct {
	Policy          string               `json:"policy"`
	Target          string               `json:"target"`
	Mode            string               `json:"mode"`
	Enforcement     string               `json:"enforcement"`
	OverriddenBy    []string             `json:"overriddenBy"`
	Condition       authpolicy.Condition `json:"condition"`
	Reasons         []string             `json:"reasons,omitempty"`
	OverriddenRules map[string][]string  `json:"overriddenRules,omitempty"`
}

// NewAuthPolicyStatus is the policies[] entry (and the agpol get detail) of a policy.
func NewAuthPolicyStatus(pr *authpolicy.PolicyResult) AuthPolicyStatusDoc {
	by := pr.OverriddenBy
	if by == nil {
		by = []string{}
	}
	return AuthPolicyStatusDoc{
		Policy: pr.Ref, Target: pr.Policy.Target.String(), Mode: pr.Policy.Describe(),
		Enforcement: pr.Enforcement, OverriddenBy: by, Condition: pr.Condition,
		Reasons: AuthPolicyReasonsText(pr.Reasons), OverriddenRules: pr.OverriddenRules,
	}
}

// AuthPolicyEnforcementCell is the ENFORCED cell of agpol get authpolicies, e.g.
// "Enforced", "PartiallyEnforced(by pay/x)", "Overridden(by pay/x,pay/y)", "TargetNotFound".
func AuthPolicyEnforcementCell(pr *authpolicy.PolicyResult) string {
	if pr == nil {
		return "<none>"
	}
	if by := pr.Displacers(); len(by) > 0 && (pr.Enforcement == authpolicy.Overridden || pr.Enforcement == authpolicy.PartiallyEnforced) {
		return pr.Enforcement + "(by " + strings.Join(by, ",") + ")"
	}
	return pr.Enforcement
}

// NewAuthPolicyReport builds the report of some path prefixes and every policy.
func NewAuthPolicyReport(paths []*authpolicy.PathResult, res *authpolicy.Result) *AuthPolicyReport {
	rep := &AuthPolicyReport{APIVersion: ReportAPIVersion, Kind: "EffectiveAuthPolicy",
		Paths: []AuthPolicyPath{}, Policies: []AuthPolicyStatusDoc{}}
	for _, p := range paths {
		doc := AuthPolicyPath{Gateway: p.Path.Gateway, Listener: p.Path.Listener, Route: p.Path.Route, Rule: p.Path.Rule,
			Effective: map[string]map[string]EffectiveRuleDoc{}, PoliciesInPath: []string{}, Lost: lostView(p.Effective.Lost),
			NotProgrammed: unprogrammedText(p.Unprogrammed)}
		for _, pol := range p.Effective.Policies {
			doc.PoliciesInPath = append(doc.PoliciesInPath, pol.Ref)
		}
		for _, k := range p.Effective.Keys() {
			r := p.Effective.Rules[k]
			if doc.Effective[r.Group] == nil {
				doc.Effective[r.Group] = map[string]EffectiveRuleDoc{}
			}
			pos := ""
			if r.Position.Known() {
				pos = r.Position.String()
			}
			doc.Effective[r.Group][r.Name] = EffectiveRuleDoc{Source: r.Source, Spec: r.Spec, Position: pos}
		}
		rep.Paths = append(rep.Paths, doc)
	}
	for _, pr := range res.Policies {
		rep.Policies = append(rep.Policies, NewAuthPolicyStatus(pr))
	}
	rep.NotProgrammed = notProgrammedView(res.Topology.NotProgrammed)
	return rep
}

// AuthPolicyText writes the effective AuthPolicy of each prefix (each rule with its
// source, then the rules that lost and why) and the enforcement of every policy.
func AuthPolicyText(w io.Writer, paths []*authpolicy.PathResult, res *authpolicy.Result) error {
	w = NewTerminalWriter(w, false)
	esc := EscapeTerminal
	if len(paths) == 0 {
		fmt.Fprintln(w, "No path reaches the target (the route is not attached to any listener in the input).")
	}
	for i, p := range paths {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, esc(p.Path.String()))
		if len(res.Policies) == 0 {
			fmt.Fprintln(w, "  no kuadrant.io/v1 AuthPolicy applies")
			continue
		}
		if err := writeAuthPolicyPath(w, p, ""); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if len(res.Policies) == 0 {
		fmt.Fprintln(w, "AuthPolicies kuadrant.io/v1: none in the input")
	} else {
		fmt.Fprintln(w, "AuthPolicies:")
		tab := &Table{Header: []string{"POLICY", "TARGET", "MODE", "ENFORCEMENT", "OVERRIDDEN-BY"}}
		for _, pr := range res.Policies {
			tab.Rows = append(tab.Rows, []string{pr.Ref, pr.Policy.Target.String(), pr.Policy.Describe(), pr.Enforcement, Join(pr.Displacers())})
		}
		if err := tab.indentedText(w, "  "); err != nil {
			return err
		}
	}
	for _, pr := range res.Policies {
		if len(pr.Reasons) > 0 {
			writeWrapped(w, "  ", fmt.Sprintf("%s is %s: %s", pr.Ref, pr.Enforcement, esc(strings.Join(AuthPolicyReasonsText(pr.Reasons), "; "))), unstyled)
		}
	}
	if np := res.Topology.NotProgrammed; len(np) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Not programmed (left out of every path):")
		for _, n := range np {
			fmt.Fprintf(w, "  route %s on gateway %s listener %s: %s\n", n.Route, n.Gateway, n.Listener, esc(AuthPolicyReasonText(n.Why)))
		}
	}
	return nil
}

// writeAuthPolicyPath writes one path's effective AuthPolicy: the policies folded, each
// effective rule with its source, and the rules that lost with the reason.
func writeAuthPolicyPath(w io.Writer, p *authpolicy.PathResult, indent string) error {
	esc := EscapeTerminal
	e := p.Effective
	if len(e.Policies) == 0 {
		fmt.Fprintln(w, indent+"  no AuthPolicy applies")
		return nil
	}
	if p.Unprogrammed != nil {
		writeWrapped(w, indent+"  ", "not programmed: "+esc(unprogrammedText(p.Unprogrammed))+"; no data plane runs this effective policy", unstyled)
	}
	fmt.Fprintln(w, indent+"  policies (least → most specific):")
	tab := &Table{}
	for _, pol := range e.Policies {
		tab.Rows = append(tab.Rows, []string{pol.Ref, pol.Target.String(), pol.Describe()})
	}
	if err := tab.indentedText(w, indent+"    "); err != nil {
		return err
	}
	fmt.Fprintln(w, indent+"  effective:")
	rows := &Table{}
	for _, g := range authpolicy.Groups {
		for _, r := range e.Group(g) {
			from := "from " + r.Source
			if r.Position.Known() {
				from += " (" + r.Position.String() + ")"
			}
			rows.Rows = append(rows.Rows, []string{g, r.Name, from})
		}
	}
	if err := rows.indentedText(w, indent+"    "); err != nil {
		return err
	}
	if len(e.Lost) > 0 {
		fmt.Fprintln(w, indent+"  lost:")
		for _, l := range e.Lost {
			s := fmt.Sprintf(indent+"    %s %s of %s: %s (%s wins, by the %s of %s", esc(l.Group), esc(l.Name), l.Source, LostText(l.Code),
				strings.Join(l.BeatenBy, ", "), l.Strategy, l.DecidedBy)
			if l.SameTarget {
				s += "; same target, so the older policy counts as less specific"
			}
			fmt.Fprintln(w, wrapLine(s+")", TextWidth))
		}
	}
	return nil
}

// V1beta2EnforcementCell is the ENFORCED cell of a kuadrant.io/v1beta2 AuthPolicy, with
// the reason when it is not plainly enforced, e.g. "Enforced (v1beta2)",
// "NotEnforced (v1beta2: the HTTPRoute target app/r is already referenced by policy app/p)".
func V1beta2EnforcementCell(p *authpolicy.V1beta2Policy) string {
	if p == nil {
		return "<none>"
	}
	if len(p.Why) == 0 {
		return p.Enforcement + " (v1beta2)"
	}
	return p.Enforcement + " (v1beta2: " + strings.Join(AuthPolicyReasonsText(p.Why), "; ") + ")"
}

// V1beta2Text lists the kuadrant.io/v1beta2 AuthPolicies bearing on a target.
func V1beta2Text(w io.Writer, ps []authpolicy.V1beta2TargetPolicy) error {
	w = NewTerminalWriter(w, false)
	esc := EscapeTerminal
	fmt.Fprintln(w)
	fmt.Fprintln(w, "AuthPolicies kuadrant.io/v1beta2 (the paths above fold kuadrant.io/v1 policies only; these apply")
	fmt.Fprintln(w, "as kuadrant-operator v0.6.1 enforced them: one policy per route, else the Gateway's):")
	for _, tp := range ps {
		p := tp.Policy
		role := "its own policy"
		if tp.Role == "gateway" {
			role = "the Gateway's policy (the route has none of its own)"
		}
		fmt.Fprintf(w, "  %s on %s, %s: %s\n", esc(p.Ref), esc(p.Target), role, esc(V1beta2EnforcementCell(p)))
		if len(p.Hosts) > 0 {
			fmt.Fprintf(w, "    hosts: %s\n", esc(strings.Join(p.Hosts, ", ")))
		}
		for _, r := range p.Routes {
			var rules []string
			for _, i := range r.Rules {
				rules = append(rules, fmt.Sprintf("rule-%d", i+1))
			}
			if len(rules) > 0 {
				fmt.Fprintf(w, "    route %s: %s\n", esc(r.Route), strings.Join(rules, ", "))
			} else {
				fmt.Fprintf(w, "    route %s\n", esc(r.Route))
			}
		}
		for _, nr := range p.Object.V1beta2.Spec.AuthScheme.Rules() {
			fmt.Fprintf(w, "    %s %s\n", nr.Section, esc(nr.Name))
		}
	}
	return nil
}

// unstyled is writeWrapped's style for text written without a Styler.
func unstyled(s string) string { return s }
