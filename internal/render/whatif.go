package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/whatif"
)

// maxListed is how many identities a grouped table row names before "(+N more)".
const maxListed = 6

// whatifLegend explains the cell marks of the what-if tables.
const whatifLegend = `? = indeterminate: depends on an external authorizer agpol cannot call (-o json shows both branches)
* = the semantics presets disagree on this cell`

// CellText is a cell as a table shows it: allow, deny or ?, with * when the semantics disagree.
func CellText(o whatif.Outcome) string {
	if len(o.Cells) == 0 {
		return ""
	}
	s := o.Primary().Decision
	if s == explain.Indeterminate {
		s = "?"
	}
	if o.Differs {
		s += "*"
	}
	return s
}

// decidedText is "POLICY#RULE (level)".
func decidedText(c whatif.Cell) string {
	switch c.DecidedBy {
	case "":
		return ""
	case explain.DecidedNoPolicy, whatif.NoPath, explain.UncertainRouteBy:
		return c.DecidedBy
	}
	return c.DecidedBy + " (" + c.Level + ")"
}

// branchesSuffix is ": " and branchesText for an indeterminate cell with branches.
func branchesSuffix(c whatif.Cell) string {
	if c.Decision != explain.Indeterminate || len(c.Branches) == 0 {
		return ""
	}
	return ": " + branchesText(c)
}

// branchesText summarises the branches of an indeterminate cell.
func branchesText(c whatif.Cell) string {
	var p []string
	for _, b := range c.Branches {
		p = append(p, fmt.Sprintf("%s → %s", b.Assume.String(), b.Decision))
	}
	return strings.Join(p, "; ")
}

// branchesDetail is branchesText with the deciding rule of each branch.
func branchesDetail(c whatif.Cell) string {
	var p []string
	for _, b := range c.Branches {
		p = append(p, fmt.Sprintf("%s → %s by %s", b.Assume.String(), b.Decision, decidedText(whatif.Cell{DecidedBy: b.DecidedBy, Level: b.Level})))
	}
	return strings.Join(p, "; ")
}

// othersText lists the other semantics' verdicts when they differ from the primary's.
func othersText(sems []string, o whatif.Outcome) string {
	if !o.Differs {
		return "-"
	}
	var p []string
	for i := 1; i < len(o.Cells) && i < len(sems); i++ {
		if o.Cells[i].Decision != o.Primary().Decision {
			p = append(p, sems[i]+"="+o.Cells[i].Decision)
		}
	}
	if len(p) == 0 {
		return "-"
	}
	return strings.Join(p, ", ")
}

func listIDs(ids []string) string {
	if len(ids) > maxListed {
		return strings.Join(ids[:maxListed], ", ") + fmt.Sprintf(", … (+%d more)", len(ids)-maxListed)
	}
	return strings.Join(ids, ", ")
}

func toolsNote(t *whatif.Target) string {
	if t.ToolsFrom == "inventory" {
		return "tools from the inventory"
	}
	return "tools named by the policies, <other tool> = any other"
}

// TargetHeading is the one-line description of a target.
func TargetHeading(t *whatif.Target) string {
	s := t.Label() + "  (routes " + strings.Join(t.Routes, ", ") + "; " + toolsNote(t)
	if t.PlainHTTP() {
		s += "; plain HTTP: every caller is anonymous"
	}
	if t.UncertainRoute != nil {
		s += "; ? by uncertain-route: Envoy may route its calls otherwise: " + RegexDiffersText(t.UncertainRoute)
	}
	if a := AssumedText(t.BackendAssumed); a != "" {
		s += "; assumed: " + a
	}
	return s + ")"
}

// uncertainNotes are the notes under can-i's and diff's answers for their targets whose
// calls Envoy may route otherwise (whatif.Target.UncertainRoute), one per target.
func uncertainNotes(targets []*whatif.Target) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range targets {
		if t == nil || t.UncertainRoute == nil || seen[t.Key()] {
			continue
		}
		seen[t.Key()] = true
		out = append(out, fmt.Sprintf("uncertain-route: Envoy may route the calls of %s otherwise: %s", t.Label(), RegexDiffersText(t.UncertainRoute)))
	}
	return out
}

// targetGroups groups a matrix target's identities by identical rows.
func targetGroups(m *whatif.Matrix, mt *whatif.MatrixTarget, ungroup bool) [][]int {
	gs := m.Groups(mt, ungroup)
	out := make([][]int, len(gs))
	for i, g := range gs {
		out[i] = g.Identities
	}
	return out
}

func groupIDs(m *whatif.Matrix, g []int) []string {
	ids := make([]string, len(g))
	for k, i := range g {
		ids[k] = m.Identities[i].ID
	}
	return ids
}

// writeNotes writes notes, each wrapped, after a blank line; nothing when there are none.
func writeNotes(w io.Writer, notes []string) {
	if len(notes) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, n := range notes {
		fmt.Fprintln(w, wrapLine(n, TextWidth))
	}
}

// changedTargets are the targets of d's changes, in the order they are listed.
func changedTargets(d *whatif.DiffResult) []*whatif.Target {
	var out []*whatif.Target
	for _, s := range diffSections {
		for _, c := range diffList(d, s.kind).All() {
			out = append(out, c.Target)
		}
	}
	return out
}
