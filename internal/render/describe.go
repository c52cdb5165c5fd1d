package render

import (
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/printers"

	"github.com/agpol/agpol/internal/describe"
	"github.com/agpol/agpol/internal/effective"
)

// DescribeText writes the effective view.
func DescribeText(w io.Writer, d *describe.View, st Styler) error {
	w = st.Writer(w)
	fmt.Fprintf(w, "%s %s\n", st.Bold(d.Kind), st.Bold(d.Name))
	if d.Source != "" {
		fmt.Fprintf(w, "Source:     %s\n", d.Source)
	}
	fmt.Fprintf(w, "Semantics:  %s\n", d.Semantics)
	fmt.Fprintln(w, st.Bold("Attached XAccessPolicies:"))
	if len(d.Policies) == 0 {
		fmt.Fprintln(w, "  <none>")
	}
	for _, p := range d.Policies {
		adm := st.Green("admitted")
		if !p.Admission.Effective.Accepted {
			adm = st.Red("rejected (" + p.Admission.Effective.Reason + ": " + p.Admission.Effective.Message + ")")
		}
		fmt.Fprintf(w, "  %s  %s %s  %s [%s]\n", st.Cyan(p.ID), p.Action, p.Version, adm, p.Admission.From)
		if p.Admission.DiffersFromRecorded {
			fmt.Fprintf(w, "      %s\n", st.Yellow(fmt.Sprintf("recorded status differs from agpol's computation (computed: %s)", p.Admission.Cell())))
		}
		if p.NotEnforced != "" {
			fmt.Fprintf(w, "      not enforced: %s\n", p.NotEnforced)
		}
		if p.Source != "" {
			fmt.Fprintf(w, "      %s\n", st.Dim(p.Source))
		}
	}
	for _, n := range d.Notes {
		fmt.Fprintln(w, "Note: "+n)
	}
	fmt.Fprintln(w, st.Bold("Evaluation chains:"))
	if len(d.Paths) == 0 {
		fmt.Fprintln(w, "  <no path>")
	}
	for _, p := range d.Paths {
		fmt.Fprintf(w, "  %s\n", st.Bold(describeTitle(p)))
		if p.NoBackend != "" {
			fmt.Fprintf(w, "    %s\n", st.Yellow("the data plane answers 500: "+p.NoBackend+": only the gateway level runs"))
		}
		if p.PlainHTTP {
			fmt.Fprintf(w, "    %s\n", st.Dim("plain HTTP listener: callers present no client certificate, so only rules that match any caller can match"))
		}
		writeChain(w, p.Chain, st)
	}
	if len(d.AuthPolicy) > 0 {
		fmt.Fprintln(w, st.Bold("Effective Kuadrant AuthPolicy:"))
		for _, p := range d.AuthPolicy {
			fmt.Fprintf(w, "  %s\n", st.Bold(printers.EscapeTerminal(p.Path.String())))
			if err := writeAuthPolicyPath(w, p, "  "); err != nil {
				return err
			}
		}
	}
	return nil
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

func writeChain(w io.Writer, c *effective.Chain, st Styler) {
	n := 0
	step := func(format string, args ...any) {
		n++
		fmt.Fprintf(w, "    %d. %s\n", n, fmt.Sprintf(format, args...))
	}
	ext := func(l *effective.Level) {
		if l.ExtAuth == nil {
			return
		}
		p := l.ExtAuth
		state := ""
		if !l.ExtAuthFilter {
			state = " " + st.Yellow("(inert: "+l.ExtAuthNote+")")
		}
		if p.RuleLess {
			step("%s ExternalAuth %s: every request goes to the authorizer%s", l.Name, st.Cyan(p.ID()), state)
			return
		}
		step("%s ExternalAuth %s: requests matching a rule go to the authorizer%s", l.Name, st.Cyan(p.ID()), state)
		for _, r := range p.Rules {
			fmt.Fprintf(w, "         %s\n", ruleLine(r, st))
		}
	}
	legacyExt := func(l *effective.Level) {
		for _, r := range l.LegacyExt {
			step("%s legacy ExternalAuth rule %s", l.Name, ruleLine(r, st))
		}
	}
	allow := func(kind effective.StepKind, l *effective.Level) {
		switch {
		case kind == effective.StepAllowEach:
			if len(l.Allow) == 0 {
				step("%s Allow: %s", l.Name, st.Dim("no Allow policy, not enforced"))
				return
			}
			for _, p := range l.Allow {
				if p.RuleLess && len(p.Rules) == 0 {
					step("%s Allow %s (must allow): no rules, allows everything", l.Name, st.Cyan(p.ID()))
					continue
				}
				step("%s Allow %s (must allow; otherwise deny):", l.Name, st.Cyan(p.ID()))
				for _, r := range p.Rules {
					fmt.Fprintf(w, "         %s\n", ruleLine(r, st))
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
			step("%s Allow (%s): any rule admits, otherwise deny", l.Name, strings.Join(ids, ", "))
			for _, r := range l.Merged {
				fmt.Fprintf(w, "         %s\n", ruleLine(r, st))
			}
			for _, col := range l.Collisions {
				if col.Replaced != "" {
					fmt.Fprintf(w, "         %s\n", st.Yellow(fmt.Sprintf("rule name %q: %s replaces %s", col.Name, col.Kept, col.Replaced)))
				} else {
					fmt.Fprintf(w, "         %s\n", st.Yellow(fmt.Sprintf("rule name %q kept in %s", col.Name, col.Kept)))
				}
			}
		}
	}
	levels := c.Levels()
	for _, s := range c.Steps() {
		l := levels[s.Level]
		if s.Kind == effective.StepExtAuth {
			ext(l)
			legacyExt(l)
		} else {
			allow(s.Kind, l)
		}
	}
	if c.Backend == nil {
		fmt.Fprintf(w, "    %s\n", st.Dim("backend level: none (core Service or no backend)"))
	}
	for _, l := range levels {
		for _, ig := range l.Ignored {
			fmt.Fprintf(w, "    %s\n", st.Dim(fmt.Sprintf("ignored at %s level: %s: %s", l.Name, ig.ID, ig.Reason)))
		}
	}
}

func ruleLine(r *effective.Rule, st Styler) string {
	s := fmt.Sprintf("- %s: %s may %s", st.Cyan(r.ID()), principalText(r.Principal), permissionText(&r.Permission))
	if r.Principal.Note != "" && !r.Principal.Omitted {
		s += " [" + r.Principal.Note + "]"
	}
	if len(r.Permission.IgnoredL7) > 0 {
		s += " " + st.Yellow("[ignored: authorization."+strings.Join(r.Permission.IgnoredL7, ", authorization.")+"]")
	}
	if !r.Builtin {
		s += " " + st.Dim("("+r.Source.String()+")")
	}
	return s
}
