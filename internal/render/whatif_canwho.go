package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/whatif"
)

// CanIListText prints every (target, operation) for one identity.
func CanIListText(w io.Writer, l *whatif.CanIList) error {
	w = NewTerminalWriter(w, false)
	from := "not in the snapshot"
	if len(l.Identity.From) > 0 {
		from = strings.Join(l.Identity.From, ", ")
	}
	fmt.Fprintf(w, "%s (%s)\n", l.Identity.ID, from)
	t := &Table{Header: []string{"GATEWAY", "LISTENER", "BACKEND", "OPERATION", "DECISION", "DECIDED BY"}}
	multi := len(l.Semantics) > 1
	// What the other semantics decide is listed under the table, for the cells where
	// they disagree (a column of its own makes the table too wide for 100 columns).
	var others []string
	for _, e := range l.Entries {
		c := e.Outcome.Primary()
		by := decidedText(c) + branchesSuffix(c)
		backend := e.Target.BackendKind + " " + e.Target.Backend
		if e.Target.BackendAssumed.Why != "" {
			backend += " [assumed to exist]" // the target's JSON says which object and why
		}
		t.Rows = append(t.Rows, []string{e.Target.Gateway, e.Target.Listener, backend, opText(e.Op), CellText(e.Outcome), by})
		if o := othersText(l.Semantics, e.Outcome); multi && o != "-" {
			others = append(others, fmt.Sprintf("  %s  %s: %s", e.Target.Label(), opText(e.Op), o))
		}
	}
	if len(t.Rows) == 0 {
		_, err := fmt.Fprintln(w, "No gateway → backend path matches.")
		return err
	}
	if err := t.Text(w, TextWidth); err != nil {
		return err
	}
	if len(others) > 0 {
		fmt.Fprintln(w, "\n* what the other semantics decide where they disagree:")
		for _, o := range others {
			fmt.Fprintln(w, wrapLine(o, TextWidth))
		}
	}
	var targets []*whatif.Target
	for _, e := range l.Entries {
		targets = append(targets, e.Target)
	}
	writeNotes(w, uncertainNotes(targets))
	counts := fmt.Sprintf("%d allowed, %d denied, %d indeterminate", l.Counts.Allow, l.Counts.Deny, l.Counts.Indeterminate)
	if multi {
		counts += fmt.Sprintf(", %d where %s disagree", l.Counts.Differs, strings.Join(l.Semantics, ", "))
	}
	_, err := fmt.Fprintf(w, "\n%s\n%s\n", wrapLine(counts, TextWidth), Reflow(whatifLegend, TextWidth))
	return err
}

// EntryDoc is a can-i entry in JSON.
type EntryDoc struct {
	Target TargetDoc `json:"target"`
	Op     whatif.Op `json:"op"`
	CellDoc
}

// CanIListReport is the JSON form of can-i --list.
type CanIListReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Semantics []string       `json:"semantics"`
	Identity  *whatif.Caller `json:"identity"`
	Entries   []EntryDoc     `json:"entries"`
	Counts    whatif.Counts  `json:"counts"`
}

// NewCanIListReport builds the JSON document of can-i --list.
func NewCanIListReport(l *whatif.CanIList) *CanIListReport {
	r := &CanIListReport{APIVersion: ReportAPIVersion, Kind: "AccessList", Semantics: l.Semantics, Identity: l.Identity, Entries: []EntryDoc{}, Counts: l.Counts}
	for _, e := range l.Entries {
		r.Entries = append(r.Entries, EntryDoc{Target: targetDoc(e.Target, false), Op: e.Op, CellDoc: cellDoc(l.Semantics, e.Outcome)})
	}
	return r
}

// CanIText prints the answer of can-i for one question: yes, no or indeterminate, then,
// when several targets were asked and they differ, one line per target.
func CanIText(w io.Writer, sems []string, op whatif.Op, answers []whatif.Answer, skipped []*whatif.Target) error {
	w = NewTerminalWriter(w, false)
	fmt.Fprintln(w, wrapLine(CanIHeadline(answers), TextWidth))
	seen := map[string]bool{}
	for _, a := range answers {
		if n := AssumedText(a.Target.BackendAssumed); n != "" && !seen[n] {
			seen[n] = true
			fmt.Fprintln(w, wrapLine("  assumed: "+n, TextWidth))
		}
	}
	if len(skipped) > 0 {
		var names []string
		for _, t := range skipped {
			names = append(names, t.Label())
		}
		fmt.Fprintln(w, wrapLine(fmt.Sprintf("  (not asked: %d path(s) to backends that do not offer %s: %s)", len(skipped), op.Tool, strings.Join(names, ", ")), TextWidth))
	}
	differ := false
	for _, a := range answers[1:] {
		if a.Outcome.Primary().Decision != answers[0].Outcome.Primary().Decision {
			differ = true
		}
	}
	for _, a := range answers {
		if !differ && !a.Outcome.Differs && a.Outcome.Primary().Decision != explain.Indeterminate && len(answers) > 1 {
			continue
		}
		c := a.Outcome.Primary()
		line := fmt.Sprintf("  %s: %s by %s", a.Target.Label(), c.Decision, decidedText(c))
		if c.Decision == explain.Indeterminate && len(c.Branches) > 0 {
			line += " (" + branchesText(c) + ")"
		}
		if o := othersText(sems, a.Outcome); o != "-" {
			line += " [" + o + "]"
		}
		fmt.Fprintln(w, wrapLine(line, TextWidth))
	}
	targets := make([]*whatif.Target, len(answers))
	for i, a := range answers {
		targets[i] = a.Target
	}
	writeNotes(w, uncertainNotes(targets))
	return nil
}

// canIWords are can-i's words for the verdicts.
var canIWords = map[string]string{explain.Allow: "yes", explain.Deny: "no", explain.Indeterminate: "indeterminate"}

// CanIHeadline is "yes", "no" or "indeterminate" when every path answers the same, else
// the verdict (yes only when every path says yes) and how many paths say what: "no (yes
// on 1 of 5 paths, no on 4)".
func CanIHeadline(answers []whatif.Answer) string {
	word := canIWords[whatif.Verdict(answers)]
	n := whatif.Count(answers)
	if len(n) < 2 {
		return word
	}
	var parts []string
	for _, d := range []string{explain.Allow, explain.Deny, explain.Indeterminate} {
		if n[d] == 0 {
			continue
		}
		if len(parts) == 0 {
			parts = append(parts, fmt.Sprintf("%s on %d of %d paths", canIWords[d], n[d], len(answers)))
		} else {
			parts = append(parts, fmt.Sprintf("%s on %d", canIWords[d], n[d]))
		}
	}
	return word + " (" + strings.Join(parts, ", ") + ")"
}

// CanIReport is the JSON form of can-i.
type CanIReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Semantics []string  `json:"semantics"`
	Identity  string    `json:"identity"`
	Op        whatif.Op `json:"op"`
	Answer    string    `json:"answer"`
	// Headline is the text's first line: the answer, and how many paths say what when
	// they disagree.
	Headline string     `json:"headline"`
	Targets  []EntryDoc `json:"targets"`
	// Skipped are the paths not asked: their backend does not offer the tool.
	Skipped []TargetDoc `json:"skipped,omitempty"`
}

// NewCanIReport builds the JSON document of can-i.
func NewCanIReport(sems []string, id *whatif.Caller, op whatif.Op, answers []whatif.Answer, skipped []*whatif.Target) *CanIReport {
	r := &CanIReport{APIVersion: ReportAPIVersion, Kind: "AccessReview", Semantics: sems, Identity: id.ID, Op: op, Answer: whatif.Verdict(answers),
		Headline: CanIHeadline(answers)}
	for _, t := range skipped {
		r.Skipped = append(r.Skipped, targetDoc(t, false))
	}
	for _, a := range answers {
		r.Targets = append(r.Targets, EntryDoc{Target: targetDoc(a.Target, false), Op: op, CellDoc: cellDoc(sems, a.Outcome)})
	}
	return r
}

// WhoCanText prints, per target, who may perform op.
func WhoCanText(w io.Writer, sems []string, op whatif.Op, res []*whatif.WhoCanTarget) error {
	w = NewTerminalWriter(w, false)
	for k, r := range res {
		if k > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, wrapLine(opText(op)+" on "+TargetHeading(r.Target), TextWidth))
		t := &Table{Header: []string{"IDENTITY", "DECISION", "DECIDED BY"}}
		multi := len(sems) > 1
		if multi {
			t.Header = append(t.Header, "OTHER SEMANTICS")
		}
		add := func(id string, o whatif.Outcome) {
			c := o.Primary()
			row := []string{id, CellText(o), decidedText(c) + branchesSuffix(c)}
			if multi {
				row = append(row, othersText(sems, o))
			}
			t.Rows = append(t.Rows, row)
		}
		if r.Anyone != nil {
			who := "anyone (any authenticated caller)"
			if r.AnyoneAnonymous {
				who = "anyone (any caller, even without a client certificate)"
			}
			add(who, *r.Anyone)
		}
		for _, e := range r.Allowed {
			if e.Identity.Other {
				continue
			}
			add(e.Identity.ID, e.Outcome)
		}
		for _, e := range r.Indeterminate {
			add(e.Identity.ID, e.Outcome)
		}
		if len(t.Rows) == 0 {
			fmt.Fprintln(w, "nobody")
			continue
		}
		if err := t.Text(w, TextWidth); err != nil {
			return err
		}
		if len(r.Differs) > 0 {
			fmt.Fprintln(w, wrapLine(fmt.Sprintf("access differs between %s for: %s", strings.Join(sems, ", "), strings.Join(r.Differs, ", ")), TextWidth))
		}
	}
	return nil
}

// WhoCanReport is the JSON form of who-can.
type WhoCanReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Semantics []string          `json:"semantics"`
	Op        whatif.Op         `json:"op"`
	Targets   []WhoCanTargetDoc `json:"targets"`
}

// WhoCanTargetDoc is one target of who-can.
type WhoCanTargetDoc struct {
	Target          TargetDoc        `json:"target"`
	Anyone          *CellDoc         `json:"anyone,omitempty"`
	AnyoneAnonymous bool             `json:"anyoneAnonymous,omitempty"`
	Allowed         []WhoCanEntryDoc `json:"allowed"`
	Indeterminate   []WhoCanEntryDoc `json:"indeterminate"`
	Differs         []string         `json:"differs,omitempty"`
}

// WhoCanEntryDoc is one identity's outcome.
type WhoCanEntryDoc struct {
	Identity string `json:"identity"`
	CellDoc
}

// NewWhoCanReport builds the JSON document of who-can.
func NewWhoCanReport(sems []string, op whatif.Op, res []*whatif.WhoCanTarget) *WhoCanReport {
	r := &WhoCanReport{APIVersion: ReportAPIVersion, Kind: "WhoCan", Semantics: sems, Op: op}
	for _, x := range res {
		d := WhoCanTargetDoc{Target: targetDoc(x.Target, false), AnyoneAnonymous: x.AnyoneAnonymous, Allowed: []WhoCanEntryDoc{},
			Indeterminate: []WhoCanEntryDoc{}, Differs: x.Differs}
		if x.Anyone != nil {
			c := cellDoc(sems, *x.Anyone)
			d.Anyone = &c
		}
		for _, e := range x.Allowed {
			d.Allowed = append(d.Allowed, WhoCanEntryDoc{Identity: e.Identity.ID, CellDoc: cellDoc(sems, e.Outcome)})
		}
		for _, e := range x.Indeterminate {
			d.Indeterminate = append(d.Indeterminate, WhoCanEntryDoc{Identity: e.Identity.ID, CellDoc: cellDoc(sems, e.Outcome)})
		}
		r.Targets = append(r.Targets, d)
	}
	return r
}
