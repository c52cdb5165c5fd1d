package render

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/whatif"
)

// diffGroup is changes that differ only by identity.
type diffGroup struct {
	ids    []string
	first  *whatif.Change
	others string
}

func groupChanges(cs *whatif.Changes) []*diffGroup {
	var out []*diffGroup
	by := map[string]*diffGroup{}
	// Identities of one decision class share a change: its group is found once.
	of := map[*whatif.Change]*diffGroup{}
	for id, c := range cs.All() {
		if g, ok := of[c]; ok {
			g.ids = append(g.ids, id.ID)
			continue
		}
		others := ""
		for _, s := range c.Semantics {
			k := s.Kind
			if k == "" {
				k = "no change"
			}
			others += fmt.Sprintf("%s: %s (%s → %s); ", s.Semantics, k, s.Before.Decision, s.After.Decision)
		}
		k := c.Target.Key() + "\x00" + c.Op.Key() + "\x00" + cellsKey(c.Before, c.After) + others
		g, ok := by[k]
		if !ok {
			g = &diffGroup{first: c, others: strings.TrimSuffix(others, "; ")}
			by[k] = g
			out = append(out, g)
		}
		of[c] = g
		g.ids = append(g.ids, id.ID)
	}
	return out
}

// cellsKey is fmt.Sprint(before, after), written without reflection: grouping by it
// took 15% of diff's CPU on the large topology (bench/run.sh). TestCellsKey checks
// it against fmt.Sprint.
func cellsKey(before, after whatif.Cell) string {
	var b strings.Builder
	writeCell(&b, before)
	b.WriteByte(' ')
	writeCell(&b, after)
	return b.String()
}

func writeCell(b *strings.Builder, c whatif.Cell) {
	b.WriteByte('{')
	writeFields(b, c.Decision, c.Level, c.DecidedBy, strconv.FormatBool(c.Explicit))
	b.WriteString(" [")
	for i, br := range c.Branches {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('{')
		writeFields(b, br.Assume.String(), br.Decision, br.Level, br.DecidedBy)
		b.WriteByte('}')
	}
	b.WriteString("]}")
}

// writeFields writes fields separated by spaces, as fmt.Sprint writes a struct's.
func writeFields(b *strings.Builder, fields ...string) {
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(f)
	}
}

func sideText(c whatif.Cell) string {
	s := c.Decision
	if by := decidedText(c); by != "" {
		s += " by " + by
	}
	if c.Decision == explain.Indeterminate && len(c.Branches) > 0 {
		s += " (" + branchesDetail(c) + ")"
	}
	return s
}

var diffSections = []struct{ title, kind string }{
	{"Access granted", whatif.Granted},
	{"Access revoked", whatif.Revoked},
	{"Decided by a different rule", whatif.DecidedBy},
	{"Changes only other semantics see", ""},
}

func diffList(d *whatif.DiffResult, kind string) *whatif.Changes {
	switch kind {
	case whatif.Granted:
		return &d.Granted
	case whatif.Revoked:
		return &d.Revoked
	case whatif.DecidedBy:
		return &d.DecidedBy
	}
	return &d.OtherSemantics
}

// DiffText prints the changes grouped by kind; identities with the same change share a line.
// Lines are escaped one by one, as written, and reach w through a 64 KiB buffer (a
// large diff has hundreds of thousands).
func DiffText(w io.Writer, d *whatif.DiffResult) error {
	return buffered(w, func(w io.Writer) error { return diffText(w, d) })
}

// buffered runs write on w escaped (a TerminalWriter) over a 64 KiB buffer of w, and
// flushes it. A TerminalWriter already is w's escaper: write gets it as it is.
func buffered(w io.Writer, write func(io.Writer) error) error {
	if _, ok := w.(*TerminalWriter); ok {
		return write(w)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	err := write(NewTerminalWriter(bw, false))
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

func diffText(w io.Writer, d *whatif.DiffResult) error {
	if d.Compare != "" {
		fmt.Fprintf(w, "Comparing %s on the same objects (before → after).\n\n", d.Compare)
	}
	if d.Count()+d.OtherSemantics.Len() == 0 {
		_, err := fmt.Fprintf(w, "No decision changes (%d decisions compared, semantics %s).\n", d.Compared, strings.Join(d.Semantics, ", "))
		return err
	}
	for _, s := range diffSections {
		cs := diffList(d, s.kind)
		if cs.Len() == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d)\n", s.title, cs.Len())
		for _, g := range groupChanges(cs) {
			c := g.first
			fmt.Fprintln(w, wrapLine("  "+c.Target.Label()+"  "+opText(c.Op), TextWidth))
			fmt.Fprintln(w, wrapLine("    who:    "+strings.Join(g.ids, ", "), TextWidth))
			fmt.Fprintln(w, wrapLine("    before: "+sideText(c.Before), TextWidth))
			fmt.Fprintln(w, wrapLine("    after:  "+sideText(c.After), TextWidth))
			if g.others != "" {
				fmt.Fprintln(w, wrapLine("    other semantics: "+g.others, TextWidth))
			}
		}
		fmt.Fprintln(w)
	}
	if notes := uncertainNotes(changedTargets(d)); len(notes) > 0 {
		for _, n := range notes {
			fmt.Fprintln(w, wrapLine(n, TextWidth))
		}
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintln(w, wrapLine(fmt.Sprintf("%d granted, %d revoked, %d decided by a different rule (%d decisions compared, semantics %s)",
		d.Granted.Len(), d.Revoked.Len(), d.DecidedBy.Len(), d.Compared, strings.Join(d.Semantics, ", ")), TextWidth))
	return err
}

// DiffMarkdown prints the changes for a pull-request comment.
func DiffMarkdown(w io.Writer, d *whatif.DiffResult) error {
	return buffered(w, func(w io.Writer) error { return diffMarkdown(w, d) })
}

func diffMarkdown(w io.Writer, d *whatif.DiffResult) error {
	if d.Compare != "" {
		fmt.Fprintf(w, "Comparing %s on the same objects (before → after).\n\n", d.Compare)
	}
	fmt.Fprintf(w, "## agpol: access changes\n\n**%d granted, %d revoked, %d decided by a different rule** (%d decisions compared, semantics %s)\n",
		d.Granted.Len(), d.Revoked.Len(), d.DecidedBy.Len(), d.Compared, strings.Join(d.Semantics, ", "))
	for _, s := range diffSections {
		cs := diffList(d, s.kind)
		if cs.Len() == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### %s (%d)\n\n", s.title, cs.Len())
		h := []string{"Identities", "Gateway", "Backend", "Operation", "Before", "After"}
		groups := groupChanges(cs)
		withOthers := false
		for _, g := range groups {
			if g.others != "" {
				withOthers = true
			}
		}
		if withOthers {
			h = append(h, "Other semantics")
		}
		t := &Table{Header: h}
		for _, g := range groups {
			c := g.first
			row := []string{strings.Join(g.ids, ", "), c.Target.Gateway + ":" + c.Target.Listener, c.Target.BackendKind + " " + c.Target.Backend,
				opText(c.Op), sideText(c.Before), sideText(c.After)}
			if withOthers {
				row = append(row, g.others)
			}
			t.Rows = append(t.Rows, row)
		}
		if err := t.Markdown(w); err != nil {
			return err
		}
	}
	if d.Count()+d.OtherSemantics.Len() == 0 {
		fmt.Fprintln(w, "\nNo decision changes.")
	}
	if notes := uncertainNotes(changedTargets(d)); len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintf(w, "%s  \n", mdEscape(n))
		}
	}
	return nil
}

// DiffReport is the JSON form of a diff.
type DiffReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Semantics []string    `json:"semantics"`
	Compared  int         `json:"compared"`
	Granted   []ChangeDoc `json:"granted"`
	Revoked   []ChangeDoc `json:"revoked"`
	DecidedBy []ChangeDoc `json:"decidedBy"`
	// OtherSemantics is nil when no change is seen only by other semantics.
	OtherSemantics *[]ChangeDoc `json:"otherSemantics,omitempty"`
	Differs        []string     `json:"differs,omitempty"`
}

// ChangeDoc is one change in JSON.
type ChangeDoc struct {
	Identity  string                   `json:"identity"`
	Target    TargetDoc                `json:"target"`
	Op        whatif.Op                `json:"op"`
	Before    whatif.Cell              `json:"before"`
	After     whatif.Cell              `json:"after"`
	Semantics []whatif.SemanticsChange `json:"otherSemantics,omitempty"`
}

// DiffDocument writes the JSON or YAML document of a diff with the completeness c, each
// change written as it is converted (a large diff has hundreds of thousands).
func DiffDocument(w io.Writer, format Format, d *whatif.DiffResult, c Completeness) error {
	r := &DiffReport{APIVersion: ReportAPIVersion, Kind: "AccessDiff", Semantics: d.Semantics, Compared: d.Compared,
		Granted: []ChangeDoc{}, Revoked: []ChangeDoc{}, DecidedBy: []ChangeDoc{}, Differs: d.Differs}
	r.SetCompleteness(c)
	list := func(key string, cs *whatif.Changes) StreamedList {
		return StreamedList{Key: key, Items: func(add func(any) error) error {
			for id, c := range cs.All() {
				if err := add(changeDoc(id, c)); err != nil {
					return err
				}
			}
			return nil
		}}
	}
	lists := []StreamedList{list("granted", &d.Granted), list("revoked", &d.Revoked), list("decidedBy", &d.DecidedBy)}
	if d.OtherSemantics.Len() > 0 {
		r.OtherSemantics = &[]ChangeDoc{}
		lists = append(lists, list("otherSemantics", &d.OtherSemantics))
	}
	return WriteDocument(w, format, r, lists...)
}

// changeDoc is the document of the change of identity id.
func changeDoc(id *whatif.Caller, c *whatif.Change) ChangeDoc {
	return ChangeDoc{Identity: id.ID, Target: targetDoc(c.Target, false), Op: c.Op, Before: c.Before, After: c.After, Semantics: c.Semantics}
}
