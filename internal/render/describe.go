package render

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/agpol/agpol/internal/describe"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// DescribeText writes the view of one object, kubectl describe style.
func DescribeText(w io.Writer, d *describe.View, st Styler) error {
	w = st.Writer(w)
	fmt.Fprintf(w, "%s %s\n", st.Bold(d.Kind), st.Bold(d.Name))
	if d.Source != "" {
		fmt.Fprintf(w, "Source:       %s\n", d.Source)
	}
	if d.AuthPolicyStatus == nil && d.AuthPolicyV1beta2 == nil {
		fmt.Fprintf(w, "Semantics:    %s\n", d.Semantics)
	}
	switch {
	case d.AuthPolicyV1beta2 != nil:
		describeAuthPolicyV1beta2(w, d.AuthPolicyV1beta2, st)
		return nil
	case d.AccessPolicy != nil:
		describeAccessPolicy(w, d, st)
		return nil
	case d.AuthPolicyStatus != nil:
		describeAuthPolicy(w, d.AuthPolicyStatus, st)
		return nil
	}
	if d.DataPlane != nil {
		assumed := ""
		if d.DataPlane.Assumed {
			assumed = ", assumed"
		}
		line(w, fmt.Sprintf("Data plane:   %s%s (%s)", d.DataPlane.DataPlane, assumed, DataPlaneWhy(*d.DataPlane)))
	}
	if d.Kind == describe.KindGateway {
		describeListeners(w, d.Listeners, st)
	}
	fmt.Fprintln(w, st.Bold("Attached XAccessPolicies:"))
	if len(d.Policies) == 0 {
		fmt.Fprintln(w, "  <none>")
	}
	for _, p := range d.Policies {
		fmt.Fprintf(w, "  %s  %s %s  %s\n", st.Cyan(p.ID), p.Action, p.Version, admissionText(p.Admission, st))
		if p.Admission.DiffersFromRecorded {
			line(w, "      "+st.Yellow(fmt.Sprintf("recorded status differs from agpol's computation (computed: %s)", p.Admission.Cell())))
		}
		if ne := NotRunText(p.Why); ne != "" {
			line(w, "      not enforced: "+ne)
		}
		if p.Source != "" {
			fmt.Fprintf(w, "      %s\n", st.Dim(p.Source))
		}
	}
	for _, n := range d.Notes {
		line(w, "Note: "+EscapeTerminal(ViewNoteText(n)))
	}
	for i, gl := range d.GatewayLevels {
		fmt.Fprintln(w, st.Bold(gatewayLevelName(d, i)+" (listeners "+strings.Join(gl.Listeners, ", ")+"):"))
		for _, p := range d.Paths {
			if p.GatewayLevel == i {
				level := &node{}
				chainTree(level, p.Chain, st, chainGatewayOnly, "")
				writeTree(w, "  ", level)
				break
			}
		}
	}
	fmt.Fprintln(w, st.Bold("Evaluation chains:"))
	if len(d.Paths) == 0 {
		fmt.Fprintln(w, "  <no path>")
	}
	for _, p := range d.Paths {
		path := &node{text: st.Bold(describeTitle(p))}
		if p.Refused != nil {
			path.add(st.Yellow(NoBackendSentence(p.Refused)))
		}
		if p.PlainHTTP {
			path.add(st.Dim("plain HTTP listener: callers present no client certificate, so only rules that match any caller can match"))
		}
		if p.GatewayLevel >= 0 {
			chainTree(path, p.Chain, st, chainPerPath, strings.ToLower(gatewayLevelName(d, p.GatewayLevel)))
		} else {
			chainTree(path, p.Chain, st, chainFull, "")
		}
		writeTree(w, "  ", path)
	}
	if len(d.AuthPolicy) > 0 {
		fmt.Fprintln(w, st.Bold("Effective Kuadrant AuthPolicy:"))
		for _, p := range d.AuthPolicy {
			path := &node{text: st.Bold(EscapeTerminal(p.Path.String()))}
			describeAuthPath(path, p, st)
			writeTree(w, "  ", path)
		}
	}
	if len(d.V1beta2AuthPolicies) > 0 {
		describeV1beta2OnTarget(w, d.V1beta2AuthPolicies, st)
	}
	return nil
}

// describeAuthPath adds the effective AuthPolicy of one path under it: the policies
// folded, then each effective rule and each rule that lost.
func describeAuthPath(path *node, p *authpolicy.PathResult, st Styler) {
	esc := EscapeTerminal
	e := p.Effective
	if len(e.Policies) == 0 {
		path.add("no AuthPolicy applies")
		return
	}
	if p.Unprogrammed != nil {
		path.add(st.Yellow("NotProgrammed: " + esc(unprogrammedText(p.Unprogrammed)) + "; no data plane runs this effective policy"))
	}
	var pols []string
	for _, pol := range e.Policies {
		pols = append(pols, pol.Ref+" ("+esc(pol.Target.String())+", "+pol.Describe()+")")
	}
	path.add("policies (least → most specific): " + strings.Join(pols, ", "))
	for _, g := range authpolicy.Groups {
		for _, r := range e.Group(g) {
			s := st.Cyan(esc(g)+" "+esc(r.Name)) + " from " + r.Source
			if r.Position.Known() {
				s += " " + st.Dim("("+r.Position.String()+")")
			}
			path.add(s)
		}
	}
	for _, l := range e.Lost {
		s := fmt.Sprintf("lost: %s %s of %s: %s (%s wins, by the %s of %s", esc(l.Group), esc(l.Name), l.Source, esc(LostText(l.Code)),
			strings.Join(l.BeatenBy, ", "), l.Strategy, l.DecidedBy)
		if l.SameTarget {
			s += "; same target, so the older policy counts as less specific"
		}
		path.add(st.Yellow(s + ")"))
	}
}

// markedWidth is the width of s in columns without its style marks (see styleMark).
func markedWidth(s string) int {
	if strings.IndexByte(s, styleMark) < 0 {
		return ansi.StringWidth(s)
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == styleMark {
			i++
			continue
		}
		b = append(b, s[i])
	}
	return ansi.StringWidth(string(b))
}

// line writes s wrapped to TextWidth columns (wrapLine).
func line(w io.Writer, s string) {
	fmt.Fprintln(w, wrapLine(s, TextWidth))
}

// gatewayLevelName is "Gateway level", numbered when the gateway has several.
func gatewayLevelName(d *describe.View, i int) string {
	if len(d.GatewayLevels) == 1 {
		return "Gateway level"
	}
	return fmt.Sprintf("Gateway level %d", i+1)
}

func admissionText(a effective.Admission, st Styler) string {
	if !a.Effective.Accepted {
		return st.Red("rejected ("+a.Effective.Reason+": "+a.Effective.Message+")") + " [" + a.From + "]"
	}
	return st.Green("admitted") + " [" + a.From + "]"
}

// describeListeners writes the Listeners table, then why each unprogrammed one is.
func describeListeners(w io.Writer, ls []describe.Listener, st Styler) {
	fmt.Fprintln(w, st.Bold("Listeners:"))
	if len(ls) == 0 {
		fmt.Fprintln(w, "  <none>")
		return
	}
	tab := &Table{Header: []string{"NAME", "PORT", "PROTOCOL", "HOSTNAME", "TLS", "MTLS", "ROUTES", "PROGRAMMED"}}
	for _, l := range ls {
		host, tls, prog := l.Hostname, l.TLS, "True"
		if host == "" {
			host = "*"
		}
		if tls == "" {
			tls = "-"
		}
		if !l.Programmed {
			prog = "False"
		}
		tab.Rows = append(tab.Rows, []string{l.Name, strconv.Itoa(int(l.Port)), l.Protocol, host, tls, l.MTLS, strconv.Itoa(int(l.AttachedRoutes)), prog})
	}
	_ = tab.indentedText(w, "  ")
	for _, l := range ls {
		if l.ListenerSet != "" {
			line(w, "  "+st.Dim("listener "+EscapeTerminal(l.Name)+" comes from ListenerSet "+EscapeTerminal(l.ListenerSet)))
		}
		if !l.Programmed {
			line(w, "  "+st.Yellow("listener "+EscapeTerminal(l.Name)+" not programmed: "+EscapeTerminal(NotProgrammedText(l.Unprogrammed))))
		}
		if l.MTLS != "none" {
			line(w, "  "+st.Dim("mTLS on "+EscapeTerminal(l.Name)+": "+MTLSText(l)))
		}
	}
}

// describeAccessPolicy writes the view of an XAccessPolicy.
func describeAccessPolicy(w io.Writer, d *describe.View, st Styler) {
	v := d.AccessPolicy
	fmt.Fprintf(w, "Action:       %s (%s)\n", v.Action, v.Version)
	line(w, "Admission:    "+admissionText(v.Admission, st))
	if v.Admission.Recorded != nil {
		line(w, "  recorded:   "+statusText(*v.Admission.Recorded))
		if v.Admission.DiffersFromRecorded {
			line(w, "  "+st.Yellow("recorded status differs from agpol's computation (computed: "+v.Admission.Cell()+")"))
		}
	}
	enf := v.Enforcement
	if ne := NotRunText(v.Why); ne != "" {
		enf += ": " + ne
	}
	if v.Enforcement == describe.Enforced {
		enf = st.Green(enf)
	} else {
		enf = st.Yellow(enf)
	}
	line(w, "Enforcement:  "+enf)
	fmt.Fprintln(w, st.Bold("Targets:"))
	for _, t := range v.Targets {
		head := "  " + t.Kind + " " + t.Name
		if t.SectionName != "" {
			head += " (sectionName " + t.SectionName + ")"
		}
		if t.Found {
			head += fmt.Sprintf("  [XAccessPolicies on the target: %d, limit %d]", t.PoliciesOnTarget, effective.MaxPoliciesPerTarget)
		}
		line(w, st.Cyan(head))
		if t.DataPlane != nil {
			line(w, fmt.Sprintf("    data plane: %s (%s)", t.DataPlane.DataPlane, DataPlaneWhy(*t.DataPlane)))
		}
		targetWhy := NotRunText(t.Why)
		if targetWhy != "" {
			line(w, "    "+st.Yellow("not enforced: "+targetWhy))
		}
		for _, p := range t.Paths {
			if p.Applies {
				line(w, "    runs on      "+describeTitle(p.Path))
			} else {
				line(w, "    not run on   "+describeTitle(p.Path))
				if why := NotRunText(p.Why); why != targetWhy {
					line(w, "      "+st.Dim(why))
				}
			}
		}
	}
	fmt.Fprintln(w, st.Bold("Rules:"))
	if len(v.Rules) == 0 {
		fmt.Fprintln(w, "  <none>: "+map[bool]string{true: "an ExternalAuth policy without rules sends every request to the authorizer", false: "a rule-less Allow policy allows nothing of its own"}[v.Action == "ExternalAuth"])
	}
	for _, r := range v.Rules {
		s := ruleLine(r, st)
		if r.CELError != "" {
			s += " " + st.Yellow("[dropped: "+DroppedText(r)+"]")
		}
		line(w, "  "+s)
	}
	if len(v.Shadowing) > 0 {
		fmt.Fprintln(w, st.Bold("Shadowing:"))
		for _, sh := range shadowTexts(v.Shadowing) {
			line(w, "  - "+sh)
		}
	}
}

func statusText(s effective.Status) string {
	t := "Accepted=True"
	if !s.Accepted {
		t = "Accepted=False"
	}
	t += " (" + s.Reason
	if s.Message != "" {
		t += ": " + s.Message
	}
	return t + ")"
}

// describeAuthPolicy writes the view of a Kuadrant AuthPolicy.
func describeAuthPolicy(w io.Writer, v *describe.AuthPolicyView, st Styler) {
	line(w, "Target:       "+EscapeTerminal(v.Target))
	fmt.Fprintf(w, "Mode:         %s\n", v.Mode)
	enf := v.Enforcement
	if v.Enforcement == authpolicy.Enforced {
		enf = st.Green(enf)
	} else {
		enf = st.Yellow(enf)
	}
	line(w, "Enforcement:  "+enf+" [computed]")
	c := v.Condition
	line(w, fmt.Sprintf("  condition:  %s=%s (%s: %s)", c.Type, c.Status, c.Reason, EscapeTerminal(c.Message)))
	for _, r := range AuthPolicyReasonsText(v.Why) {
		line(w, "  "+st.Yellow(EscapeTerminal(r)))
	}
	if len(v.OverriddenBy) > 0 {
		line(w, "Overridden by: "+strings.Join(v.OverriddenBy, ", "))
	}
	fmt.Fprintln(w, st.Bold("Rules:"))
	if len(v.Rules) == 0 {
		fmt.Fprintln(w, "  <none>")
	}
	for _, r := range v.Rules {
		s := "  " + st.Cyan(r.Key)
		if by := v.OverriddenRules[r.Key]; len(by) > 0 {
			s += " " + st.Yellow("(displaced by "+strings.Join(by, ", ")+")")
		}
		if r.Source != "" {
			s += " " + st.Dim("("+r.Source+")")
		}
		line(w, s)
	}
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintln(w, st.Bold(title))
		for _, it := range items {
			line(w, "  "+EscapeTerminal(it))
		}
	}
	list("Effective on:", v.AppliesOn)
	list("Displaced on:", v.DisplacedOn)
	list("Displaces rules of:", v.Displaces)
}

// describeTitle is e.g. "gw infra/edge (https) → route pay/ledger#mcp → xbackend pay/ledger".
func describeTitle(p describe.Path) string {
	title := fmt.Sprintf("gw %s (%s)", p.Gateway, p.Listener)
	if p.Route != "" {
		title += " → route " + p.Route
		if p.RuleName != "" {
			title += "#" + p.RuleName
		} else {
			title += fmt.Sprintf("[%d]", p.RuleIndex)
		}
	}
	if p.BackendKind != "" {
		title += fmt.Sprintf(" → %s %s", strings.ToLower(p.BackendKind), p.Backend)
	}
	return title
}

// chainMode says which steps of a chain chainTree adds in full.
type chainMode int

const (
	chainFull        chainMode = iota // every step with its rules
	chainGatewayOnly                  // only the gateway level's steps
	chainPerPath                      // every step, the gateway level's as a reference
)

// chainTree adds the chain's steps under parent in evaluation order, numbered, each
// with its rules under it; in chainPerPath mode a gateway-level step is one item
// naming gwName, the block that lists it.
func chainTree(parent *node, c *effective.Chain, st Styler, mode chainMode, gwName string) {
	if c.OtherDataPlane != nil {
		parent.add(st.Yellow(OtherDataPlaneText(c.OtherDataPlane)))
		return
	}
	n := 0
	step := func(format string, args ...any) *node {
		n++
		return parent.add(fmt.Sprintf("%d. %s", n, fmt.Sprintf(format, args...)))
	}
	ext := func(l *effective.Level) {
		if l.ExtAuth == nil {
			return
		}
		p := l.ExtAuth
		state := ""
		if !l.ExtAuthFilter {
			state = " " + st.Yellow("(inert: "+NoExtAuthFilterText(l.NoFilter)+")")
		}
		if p.RuleLess {
			step("%s ExternalAuth %s: every request goes to the authorizer%s", l.Name, st.Cyan(p.ID()), state)
			return
		}
		s := step("%s ExternalAuth %s: requests matching a rule go to the authorizer%s", l.Name, st.Cyan(p.ID()), state)
		for _, r := range p.Rules {
			s.add(ruleText(r, st))
		}
	}
	legacyExt := func(l *effective.Level) {
		for _, r := range l.LegacyExt {
			step("%s legacy ExternalAuth rule %s", l.Name, ruleText(r, st))
		}
	}
	meaning := effective.AllowMeaningOf(&c.Semantics)
	allow := func(kind effective.StepKind, l *effective.Level) {
		switch {
		case kind == effective.StepAllowEach:
			if len(l.Allow) == 0 {
				step("%s Allow: %s", l.Name, st.Dim("no Allow policy, not enforced"))
				return
			}
			for _, p := range l.Allow {
				if p.RuleLess {
					step("%s Allow %s (must allow): %s", l.Name, st.Cyan(p.ID()), ruleLessText(meaning.RuleLess))
					continue
				}
				s := step("%s Allow %s (must allow; otherwise deny):", l.Name, st.Cyan(p.ID()))
				for _, r := range p.Rules {
					s.add(ruleText(r, st))
				}
			}
		case len(l.Merged) == 0:
			if p := l.RuleLessAllow(); p != nil {
				step("%s Allow: %s", l.Name, st.Dim("only rule-less policies ("+p.ID()+"), not enforced"))
			} else {
				step("%s Allow: %s", l.Name, st.Dim("no Allow policy, not enforced"))
			}
		default:
			var ids []string
			for _, p := range l.Allow {
				ids = append(ids, p.ID())
			}
			s := step("%s Allow (%s): %s", l.Name, strings.Join(ids, ", "), unselectedText(meaning.Unselected))
			for _, r := range l.Merged {
				s.add(ruleText(r, st))
			}
			for _, col := range l.Collisions {
				if col.Replaced != "" {
					s.add(st.Yellow(fmt.Sprintf("rule name %q: %s replaces %s", col.Name, col.Kept, col.Replaced)))
				} else {
					s.add(st.Yellow(fmt.Sprintf("rule name %q kept in %s", col.Name, col.Kept)))
				}
			}
		}
	}
	levels := c.Levels()
	refDone := map[effective.StepKind]bool{}
	for _, s := range c.Steps() {
		l := levels[s.Level]
		if mode == chainGatewayOnly && l != c.Gateway {
			continue
		}
		if mode == chainPerPath && l == c.Gateway {
			if l.HasPolicies() && !refDone[s.Kind] {
				refDone[s.Kind] = true
				what := "Allow"
				if s.Kind == effective.StepExtAuth {
					if l.ExtAuth == nil && len(l.LegacyExt) == 0 {
						continue
					}
					what = "ExternalAuth"
				}
				step("gateway %s: as in the %s above", what, gwName)
			} else if !l.HasPolicies() && s.Kind != effective.StepExtAuth && !refDone[s.Kind] {
				refDone[s.Kind] = true
				step("gateway Allow: %s", st.Dim("no Allow policy, not enforced"))
			}
			continue
		}
		if s.Kind == effective.StepExtAuth {
			ext(l)
			legacyExt(l)
		} else {
			allow(s.Kind, l)
		}
	}
	if c.Backend == nil && mode != chainGatewayOnly {
		parent.add(st.Dim("backend level: none (core Service or no backend)"))
	}
	for _, l := range levels {
		if (mode == chainGatewayOnly && l != c.Gateway) || (mode == chainPerPath && l == c.Gateway) {
			continue
		}
		for i := range l.Ignored {
			parent.add(st.Dim(fmt.Sprintf("ignored at %s level: %s: %s", l.Name, l.Ignored[i].ID, IgnoredText(&l.Ignored[i]))))
		}
	}
}

// unselectedText is what an Allow step of merged rules does (effective.AllowMeaning).
func unselectedText(u effective.Unselected) string {
	if u == effective.UnselectedPass {
		return "any rule admits; a caller no rule selects passes the level (PR #220), otherwise deny"
	}
	return "any rule admits, otherwise deny"
}

// ruleLessText is what an Allow policy without rules does when every policy must allow.
func ruleLessText(r effective.RuleLess) string {
	if r == effective.RuleLessAllowsButTools {
		return "no rules, allows everything but tools/call"
	}
	return "no rules, allows everything"
}

// ruleLine is a rule as a bulleted line: "- " and its ruleText.
func ruleLine(r *effective.Rule, st Styler) string {
	return "- " + ruleText(r, st)
}

// ruleText is a rule: its ID, who may do what, and where it is written.
func ruleText(r *effective.Rule, st Styler) string {
	s := fmt.Sprintf("%s: %s may %s", st.Cyan(r.ID()), principalText(r.Principal), permissionText(&r.Permission))
	if note := PrincipalNote(&r.Principal); note != "" && !r.Principal.Omitted {
		s += " [" + note + "]"
	}
	if len(r.Permission.IgnoredL7) > 0 {
		s += " " + st.Yellow("[ignored: authorization."+strings.Join(r.Permission.IgnoredL7, ", authorization.")+"]")
	}
	if !r.Builtin {
		s += " " + st.Dim("("+r.Source.String()+")")
	}
	return s
}

// DescribeAPIVersion is the apiVersion of agpol describe -o json|yaml.
const DescribeAPIVersion = "agpol.dev/v1alpha1"

// describeDoc is one Description: the view with apiVersion and kind.
type describeDoc struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	*describe.View
}

// describeList holds the Descriptions of every object of a kind.
type describeList struct {
	APIVersion string        `json:"apiVersion"`
	Kind       string        `json:"kind"`
	Items      []describeDoc `json:"items"`
}

// DescribeDocument writes the views as the document format names (json or yaml): one
// Description when single, else a DescriptionList.
func DescribeDocument(w io.Writer, views []*describe.View, format Format, single bool) error {
	var doc any
	if single && len(views) == 1 {
		doc = describeDoc{DescribeAPIVersion, "Description", describeJSONView(views[0])}
	} else {
		l := describeList{APIVersion: DescribeAPIVersion, Kind: "DescriptionList", Items: []describeDoc{}}
		for _, v := range views {
			l.Items = append(l.Items, describeDoc{DescribeAPIVersion, "Description", describeJSONView(v)})
		}
		doc = l
	}
	return format.Encode(w, doc)
}

// describeJSONView is a copy of v with its sentences written: its data planes', the
// reasons its policies do not run, its notes, its listeners' client certificates, its
// chains' and rules' notes (v is not changed).
func describeJSONView(v *describe.View) *describe.View {
	c := *v
	nv := newNoteViews()
	c.DataPlane = dataPlaneView(v.DataPlane)
	c.NotesText = viewNoteTexts(v.Notes)
	if v.Listeners != nil {
		c.Listeners = make([]describe.Listener, len(v.Listeners))
		for i, l := range v.Listeners {
			l.MTLSWhy = MTLSText(l)
			l.NotProgrammed = NotProgrammedText(l.Unprogrammed)
			c.Listeners[i] = l
		}
	}
	if v.GatewayLevels != nil {
		c.GatewayLevels = make([]describe.GatewayLevel, len(v.GatewayLevels))
		for i, gl := range v.GatewayLevels {
			gl.Level = nv.level(gl.Level)
			c.GatewayLevels[i] = gl
		}
	}
	if v.Policies != nil {
		c.Policies = make([]describe.Policy, len(v.Policies))
		for i, p := range v.Policies {
			p.NotEnforced = NotRunText(p.Why)
			c.Policies[i] = p
		}
	}
	if v.Paths != nil {
		c.Paths = make([]describe.Path, len(v.Paths))
		for i, p := range v.Paths {
			p.Chain = nv.chain(p.Chain)
			p.Refused = noBackendView(p.Refused)
			p.NoBackend = NoBackendProblem(p.Refused)
			c.Paths[i] = p
		}
	}
	if a := v.AccessPolicy; a != nil {
		ac := *a
		ac.NotEnforced = NotRunText(a.Why)
		ac.Shadows = shadowTexts(a.Shadowing)
		ac.Rules, _ = nv.ruleList(a.Rules)
		ac.Targets = make([]describe.PolicyTarget, len(a.Targets))
		for i, t := range a.Targets {
			t.DataPlane = dataPlaneView(t.DataPlane)
			t.NotEnforced = NotRunText(t.Why)
			if t.Paths != nil {
				paths := make([]describe.PolicyPath, len(t.Paths))
				for j, p := range t.Paths {
					p.Reason = NotRunText(p.Why)
					p.Chain = nv.chain(p.Chain)
					paths[j] = p
				}
				t.Paths = paths
			}
			ac.Targets[i] = t
		}
		c.AccessPolicy = &ac
	}
	authPolicyJSONView(&c)
	return &c
}
