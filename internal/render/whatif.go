package render

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
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
	case explain.DecidedNoPolicy, whatif.NoPath:
		return c.DecidedBy
	}
	return c.DecidedBy + " (" + c.Level + ")"
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
	return s + ")"
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

// MatrixTable prints one table per target: identities (grouped when their rows are
// identical, unless ungroup) × operations.
func MatrixTable(w io.Writer, m *whatif.Matrix, ungroup bool) error {
	w = NewTerminalWriter(w, false)
	if len(m.Targets) == 0 {
		_, err := fmt.Fprintln(w, "No gateway → backend path in the input.")
		return err
	}
	for k, mt := range m.Targets {
		if k > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, wrapLine(TargetHeading(mt.Target), TextWidth))
		t := &Table{Header: []string{"IDENTITY"}}
		for _, op := range mt.Ops {
			t.Header = append(t.Header, op.Label())
		}
		for _, g := range targetGroups(m, mt, ungroup) {
			row := []string{listIDs(groupIDs(m, g))}
			for o := range mt.Ops {
				row = append(row, CellText(mt.At(g[0], o)))
			}
			t.Rows = append(t.Rows, row)
		}
		if err := t.Text(w, TextWidth); err != nil {
			return err
		}
	}
	fmt.Fprintln(w)
	if d := m.Disagreements(); len(d) > 0 {
		ids := make([]string, len(d))
		for i, id := range d {
			ids[i] = id.ID
		}
		fmt.Fprintln(w, wrapLine(fmt.Sprintf("Access differs between %s for: %s", strings.Join(m.Semantics, ", "), strings.Join(ids, ", ")), TextWidth))
	}
	_, err := fmt.Fprintln(w, Reflow(whatifLegend, TextWidth))
	return err
}

func columnLabel(mt *whatif.MatrixTarget, op whatif.Op) string {
	return mt.Gateway + ":" + mt.Listener + " " + mt.BackendKind + " " + mt.Backend + " " + op.Label()
}

// MatrixCSV prints the matrix as one wide CSV table: a row per identity, a column per
// (gateway:listener, backend, operation); cells are allow, deny or indeterminate
// (primary semantics), with * when the semantics disagree.
func MatrixCSV(w io.Writer, m *whatif.Matrix) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	cw := csv.NewWriter(bw)
	header := []string{"identity"}
	for _, mt := range m.Targets {
		for _, op := range mt.Ops {
			header = append(header, columnLabel(mt, op))
		}
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	cw.Flush()
	// Identities of one decision class share every cell of a target: each class's
	// cells are encoded once (",deny,allow*,..."), by encoding/csv like the rest, and
	// a row is its identity and one such run per target. csv quotes a field by its
	// content alone, so the runs are the bytes the whole record would have.
	var enc bytes.Buffer
	ec := csv.NewWriter(&enc)
	encode := func(fields []string) ([]byte, error) {
		enc.Reset()
		if err := ec.Write(fields); err != nil {
			return nil, err
		}
		ec.Flush()
		return bytes.Clone(bytes.TrimSuffix(enc.Bytes(), []byte("\n"))), ec.Error()
	}
	runs := make([][][]byte, len(m.Targets)) // [target][class]
	var cells []string
	for i, id := range m.Identities {
		f, err := encode([]string{id.ID})
		if err != nil {
			return err
		}
		bw.Write(f)
		for t, mt := range m.Targets {
			if runs[t] == nil {
				runs[t] = make([][]byte, mt.Classes())
			}
			c := mt.Class(i)
			if runs[t][c] == nil {
				cells = append(cells[:0], "")
				for _, out := range mt.ClassOutcomes(c) {
					cell := out.Primary().Decision
					if out.Differs {
						cell += "*"
					}
					cells = append(cells, cell)
				}
				if runs[t][c], err = encode(cells); err != nil {
					return err
				}
			}
			bw.Write(runs[t][c])
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// MatrixMarkdown prints one markdown table per target.
func MatrixMarkdown(w io.Writer, m *whatif.Matrix, ungroup bool) error {
	w = NewTerminalWriter(w, false)
	fmt.Fprintf(w, "## Access matrix (%s)\n", strings.Join(m.Semantics, ", "))
	for _, mt := range m.Targets {
		fmt.Fprintf(w, "\n### %s\n\n", mdEscape(TargetHeading(mt.Target)))
		h := []string{"Identity"}
		for _, op := range mt.Ops {
			h = append(h, op.Label())
		}
		t := &Table{Header: h}
		for _, g := range targetGroups(m, mt, ungroup) {
			row := []string{listIDs(groupIDs(m, g))}
			for o := range mt.Ops {
				row = append(row, CellText(mt.At(g[0], o)))
			}
			t.Rows = append(t.Rows, row)
		}
		if err := t.Markdown(w); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", strings.ReplaceAll(whatifLegend, "\n", "  \n"))
	return err
}

// CellDoc is a cell in JSON: the primary semantics' decision, and every semantics' when
// several are evaluated.
type CellDoc struct {
	whatif.Cell
	Differs   bool            `json:"differs,omitempty"`
	Semantics []SemanticsCell `json:"semantics,omitempty"`
}

// SemanticsCell is a cell under one named semantics.
type SemanticsCell struct {
	Name string `json:"name"`
	whatif.Cell
}

func cellDoc(sems []string, o whatif.Outcome) CellDoc {
	d := CellDoc{Cell: o.Primary(), Differs: o.Differs}
	if len(sems) > 1 {
		for i, c := range o.Cells {
			d.Semantics = append(d.Semantics, SemanticsCell{Name: sems[i], Cell: c})
		}
	}
	return d
}

// TargetDoc is a target in JSON.
type TargetDoc struct {
	Gateway     string      `json:"gateway"`
	Listener    string      `json:"listener"`
	Protocol    string      `json:"protocol"`
	BackendKind string      `json:"backendKind"`
	Backend     string      `json:"backend"`
	Routes      []string    `json:"routes,omitempty"`
	ToolsFrom   string      `json:"toolsFrom,omitempty"`
	Ops         []whatif.Op `json:"ops,omitempty"`
}

func targetDoc(t *whatif.Target, withOps bool) TargetDoc {
	d := TargetDoc{Gateway: t.Gateway, Listener: t.Listener, Protocol: t.Protocol, BackendKind: t.BackendKind, Backend: t.Backend}
	if withOps {
		d.Routes, d.ToolsFrom, d.Ops = t.Routes, t.ToolsFrom, t.Ops
	}
	return d
}

// MatrixReport is the JSON form of a matrix: per target, rows of identities sharing
// every cell.
type MatrixReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Semantics     []string          `json:"semantics"`
	Identities    []*whatif.Caller  `json:"identities"`
	Targets       []MatrixTargetDoc `json:"targets"`
	Counts        whatif.Counts     `json:"counts"`
	Disagreements []string          `json:"disagreements,omitempty"`
}

// MatrixTargetDoc is one target of the matrix report.
type MatrixTargetDoc struct {
	TargetDoc
	Rows []MatrixRowDoc `json:"rows"`
}

// MatrixRowDoc is a set of identities and their cells, one per op. The largest set of a
// target is not listed: its row has rest set and stands for every identity of the
// report that no other row of the target lists.
type MatrixRowDoc struct {
	Identities []string  `json:"identities,omitempty"`
	Rest       bool      `json:"rest,omitempty"`
	Cells      []CellDoc `json:"cells"`
}

// NewMatrixReport builds the JSON document of a matrix.
func NewMatrixReport(m *whatif.Matrix, ungroup bool) *MatrixReport {
	r := &MatrixReport{APIVersion: ReportAPIVersion, Kind: "AccessMatrix", Semantics: m.Semantics, Identities: m.Identities,
		Targets: []MatrixTargetDoc{}, Counts: m.Counts()}
	for _, mt := range m.Targets {
		td := MatrixTargetDoc{TargetDoc: targetDoc(mt.Target, true)}
		groups := targetGroups(m, mt, ungroup)
		largest := -1
		if !ungroup {
			for k, g := range groups {
				if largest < 0 || len(g) > len(groups[largest]) {
					largest = k
				}
			}
		}
		for k, g := range groups {
			row := MatrixRowDoc{}
			if k == largest {
				row.Rest = true
			} else {
				row.Identities = groupIDs(m, g)
			}
			for o := range mt.Ops {
				row.Cells = append(row.Cells, cellDoc(m.Semantics, mt.At(g[0], o)))
			}
			td.Rows = append(td.Rows, row)
		}
		r.Targets = append(r.Targets, td)
	}
	for _, id := range m.Disagreements() {
		r.Disagreements = append(r.Disagreements, id.ID)
	}
	return r
}

func opText(op whatif.Op) string {
	if op.Method == "tools/call" {
		return "tools/call " + op.Tool
	}
	return op.Method
}

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
		by := decidedText(c)
		if c.Decision == explain.Indeterminate {
			by += ": " + branchesText(c)
		}
		t.Rows = append(t.Rows, []string{e.Target.Gateway, e.Target.Listener, e.Target.BackendKind + " " + e.Target.Backend, opText(e.Op), CellText(e.Outcome), by})
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
func CanIText(w io.Writer, sems []string, answers []whatif.Answer) error {
	w = NewTerminalWriter(w, false)
	v := whatif.Verdict(answers)
	word := map[string]string{explain.Allow: "yes", explain.Deny: "no", explain.Indeterminate: "indeterminate"}[v]
	fmt.Fprintln(w, word)
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
		if c.Decision == explain.Indeterminate {
			line += " (" + branchesText(c) + ")"
		}
		if o := othersText(sems, a.Outcome); o != "-" {
			line += " [" + o + "]"
		}
		fmt.Fprintln(w, wrapLine(line, TextWidth))
	}
	return nil
}

// CanIReport is the JSON form of can-i.
type CanIReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Semantics []string   `json:"semantics"`
	Identity  string     `json:"identity"`
	Op        whatif.Op  `json:"op"`
	Answer    string     `json:"answer"`
	Targets   []EntryDoc `json:"targets"`
}

// NewCanIReport builds the JSON document of can-i.
func NewCanIReport(sems []string, id *whatif.Caller, op whatif.Op, answers []whatif.Answer) *CanIReport {
	r := &CanIReport{APIVersion: ReportAPIVersion, Kind: "AccessReview", Semantics: sems, Identity: id.ID, Op: op, Answer: whatif.Verdict(answers)}
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
			by := decidedText(c)
			if c.Decision == explain.Indeterminate {
				by += ": " + branchesText(c)
			}
			row := []string{id, CellText(o), by}
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

// diffGroup is changes that differ only by identity.
type diffGroup struct {
	ids    []string
	first  *whatif.Change
	others string
}

func groupChanges(cs []*whatif.Change) []*diffGroup {
	var out []*diffGroup
	by := map[string]*diffGroup{}
	for _, c := range cs {
		others := ""
		for _, s := range c.Semantics {
			k := s.Kind
			if k == "" {
				k = "no change"
			}
			others += fmt.Sprintf("%s: %s (%s → %s); ", s.Semantics, k, s.Before.Decision, s.After.Decision)
		}
		k := c.Target.Key() + "\x00" + c.Op.Key() + "\x00" + cellsKey(c.Before, c.After) + others
		if g, ok := by[k]; ok {
			g.ids = append(g.ids, c.Identity.ID)
			continue
		}
		g := &diffGroup{ids: []string{c.Identity.ID}, first: c, others: strings.TrimSuffix(others, "; ")}
		by[k] = g
		out = append(out, g)
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
	if c.Decision == explain.Indeterminate {
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

func diffList(d *whatif.DiffResult, kind string) []*whatif.Change {
	switch kind {
	case whatif.Granted:
		return d.Granted
	case whatif.Revoked:
		return d.Revoked
	case whatif.DecidedBy:
		return d.DecidedBy
	}
	return d.OtherSemantics
}

// DiffText prints the changes grouped by kind; identities with the same change share a line.
func DiffText(w io.Writer, d *whatif.DiffResult) error {
	w = NewTerminalWriter(w, false)
	if d.Compare != "" {
		fmt.Fprintf(w, "Comparing %s on the same objects (before → after).\n\n", d.Compare)
	}
	if d.Count()+len(d.OtherSemantics) == 0 {
		_, err := fmt.Fprintf(w, "No decision changes (%d decisions compared, semantics %s).\n", d.Compared, strings.Join(d.Semantics, ", "))
		return err
	}
	for _, s := range diffSections {
		cs := diffList(d, s.kind)
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s (%d)\n", s.title, len(cs))
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
	_, err := fmt.Fprintln(w, wrapLine(fmt.Sprintf("%d granted, %d revoked, %d decided by a different rule (%d decisions compared, semantics %s)",
		len(d.Granted), len(d.Revoked), len(d.DecidedBy), d.Compared, strings.Join(d.Semantics, ", ")), TextWidth))
	return err
}

// DiffMarkdown prints the changes for a pull-request comment.
func DiffMarkdown(w io.Writer, d *whatif.DiffResult) error {
	w = NewTerminalWriter(w, false)
	if d.Compare != "" {
		fmt.Fprintf(w, "Comparing %s on the same objects (before → after).\n\n", d.Compare)
	}
	fmt.Fprintf(w, "## agpol: access changes\n\n**%d granted, %d revoked, %d decided by a different rule** (%d decisions compared, semantics %s)\n",
		len(d.Granted), len(d.Revoked), len(d.DecidedBy), d.Compared, strings.Join(d.Semantics, ", "))
	for _, s := range diffSections {
		cs := diffList(d, s.kind)
		if len(cs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n### %s (%d)\n\n", s.title, len(cs))
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
	if d.Count()+len(d.OtherSemantics) == 0 {
		fmt.Fprintln(w, "\nNo decision changes.")
	}
	return nil
}

// DiffReport is the JSON form of a diff.
type DiffReport struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Semantics      []string    `json:"semantics"`
	Compared       int         `json:"compared"`
	Granted        []ChangeDoc `json:"granted"`
	Revoked        []ChangeDoc `json:"revoked"`
	DecidedBy      []ChangeDoc `json:"decidedBy"`
	OtherSemantics []ChangeDoc `json:"otherSemantics,omitempty"`
	Differs        []string    `json:"differs,omitempty"`
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

// NewDiffReport builds the JSON document of a diff.
func NewDiffReport(d *whatif.DiffResult) *DiffReport {
	conv := func(cs []*whatif.Change) []ChangeDoc {
		out := []ChangeDoc{}
		for _, c := range cs {
			out = append(out, ChangeDoc{Identity: c.Identity.ID, Target: targetDoc(c.Target, false), Op: c.Op, Before: c.Before, After: c.After, Semantics: c.Semantics})
		}
		return out
	}
	r := &DiffReport{APIVersion: ReportAPIVersion, Kind: "AccessDiff", Semantics: d.Semantics, Compared: d.Compared,
		Granted: conv(d.Granted), Revoked: conv(d.Revoked), DecidedBy: conv(d.DecidedBy), Differs: d.Differs}
	if len(d.OtherSemantics) > 0 {
		r.OtherSemantics = conv(d.OtherSemantics)
	}
	return r
}
