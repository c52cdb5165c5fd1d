package render

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agpol/agpol/internal/parallel"
	"github.com/agpol/agpol/internal/whatif"
)

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
	if err := cw.Error(); err != nil {
		return err
	}
	// Identities of one decision class share every cell of a target: each class's
	// cells are encoded once (",deny,allow*,..."), by encoding/csv like the rest, and
	// a row is its identity and one such run per target. csv quotes a field by its
	// content alone, so the runs are the bytes the whole record would have. The runs
	// are encoded, and the rows put together, on every core; rows are written in order.
	runs := make([][][]byte, len(m.Targets)) // [target][class]
	errs := make([]error, len(m.Targets))
	parallel.For(len(m.Targets), func(t int) {
		mt := m.Targets[t]
		runs[t] = make([][]byte, mt.Classes())
		var enc csvFields
		cells := []string{""}
		for c := range mt.Classes() {
			outs := mt.ClassOutcomes(c)
			if outs == nil {
				continue // no identity of the matrix is in the class
			}
			cells = cells[:1]
			for _, out := range outs {
				cell := out.Primary().Decision
				if out.Differs {
					cell += "*"
				}
				cells = append(cells, cell)
			}
			if runs[t][c], errs[t] = enc.encode(cells); errs[t] != nil {
				return
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	err := writeOrdered(bw, len(m.Identities), matrixRowsPerChunk, func(b []byte, lo, hi int) ([]byte, error) {
		var enc csvFields
		size := 0 // the chunk's bytes, so that b grows at most once
		for i := lo; i < hi; i++ {
			size += len(m.Identities[i].ID) + 3 // quoted or not, and the line end
			for t, mt := range m.Targets {
				size += len(runs[t][mt.Class(i)])
			}
		}
		b = slices.Grow(b, size)
		for i := lo; i < hi; i++ {
			f, err := enc.encode([]string{m.Identities[i].ID})
			if err != nil {
				return b, err
			}
			b = append(b, f...)
			for t, mt := range m.Targets {
				b = append(b, runs[t][mt.Class(i)]...)
			}
			b = append(b, '\n')
		}
		return b, nil
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// matrixRowsPerChunk is how many rows of the CSV matrix one core puts together at a
// time (a row of the large topology is 0.5 MB).
const matrixRowsPerChunk = 4

// csvFields encodes records as encoding/csv writes them, without the line end.
type csvFields struct {
	buf bytes.Buffer
	w   *csv.Writer
}

func (e *csvFields) encode(fields []string) ([]byte, error) {
	if e.w == nil {
		e.w = csv.NewWriter(&e.buf)
	}
	e.buf.Reset()
	if err := e.w.Write(fields); err != nil {
		return nil, err
	}
	e.w.Flush()
	return bytes.Clone(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n"))), e.w.Error()
}

// writeOrdered writes n items to w in order, each chunk of per items made by fill
// (appending to b) on every core by parallel.Ordered, a few chunks ahead of the writer;
// the buffers of written chunks are filled again.
func writeOrdered(w io.Writer, n, per int, fill func(b []byte, lo, hi int) ([]byte, error)) error {
	chunks := (n + per - 1) / per
	type made struct {
		b   []byte
		err error
	}
	free := make(chan []byte, 2*parallel.Workers(chunks)+1)
	return parallel.Ordered(chunks, func(_, i int) made {
		var b []byte
		select {
		case b = <-free:
		default:
		}
		lo := i * per
		b, err := fill(b[:0], lo, min(lo+per, n))
		return made{b, err}
	}, func(c made) error {
		if c.err != nil {
			return c.err
		}
		_, err := w.Write(c.b)
		select {
		case free <- c.b:
		default:
		}
		return err
	})
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
	Gateway     string `json:"gateway"`
	Listener    string `json:"listener"`
	Protocol    string `json:"protocol"`
	BackendKind string `json:"backendKind"`
	Backend     string `json:"backend"`
	// BackendAssumed: see whatif.Target.
	BackendAssumed string      `json:"backendAssumed,omitempty"`
	Routes         []string    `json:"routes,omitempty"`
	ToolsFrom      string      `json:"toolsFrom,omitempty"`
	Ops            []whatif.Op `json:"ops,omitempty"`
	// UncertainRoute says why Envoy may route the path's calls otherwise (its cells are
	// indeterminate, decided by uncertain-route).
	UncertainRoute string `json:"uncertainRoute,omitempty"`
}

func targetDoc(t *whatif.Target, withOps bool) TargetDoc {
	d := TargetDoc{Gateway: t.Gateway, Listener: t.Listener, Protocol: t.Protocol, BackendKind: t.BackendKind, Backend: t.Backend, BackendAssumed: AssumedText(t.BackendAssumed), UncertainRoute: RegexDiffersText(t.UncertainRoute)}
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
