package whatif

import (
	"encoding/binary"
	"strings"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/parallel"
)

// Filter narrows the space. Empty fields match everything.
type Filter struct {
	// Gateway and Backend are NS/NAME; Listener a listener name.
	Gateway, Listener, Backend string
	// Identities keeps only these identity IDs (sa:NS/NAME, SPIFFE ID, anonymous, <other authenticated>).
	Identities []string
}

func (f Filter) target(t *Target) bool {
	return (f.Gateway == "" || f.Gateway == t.Gateway) && (f.Listener == "" || f.Listener == t.Listener) &&
		(f.Backend == "" || f.Backend == t.Backend)
}

func (f Filter) identity(id *Caller) bool {
	return len(f.Identities) == 0 || contains(f.Identities, id.ID)
}

// Matrix is the decision of every identity for every (target, operation). It is stored
// by decision class: identities that no rule of a target names share one outcome.
type Matrix struct {
	Semantics  []string
	Identities []*Caller
	Targets    []*MatrixTarget
}

// MatrixTarget is one target's column group.
type MatrixTarget struct {
	*Target
	// classOf[i] is the class of Identities[i]; outcomes[class][op].
	classOf  []int32
	outcomes [][]Outcome
}

// At returns the outcome of identity i for operation o of the target.
func (mt *MatrixTarget) At(i, o int) Outcome { return mt.outcomes[mt.classOf[i]][o] }

// Class returns the decision class of identity i: identities of one class share every
// outcome of the target.
func (mt *MatrixTarget) Class(i int) int { return int(mt.classOf[i]) }

// ClassOutcomes returns the outcomes of a class, one per op (nil for a class no
// identity of the matrix is in).
func (mt *MatrixTarget) ClassOutcomes(c int) []Outcome { return mt.outcomes[c] }

// Classes is the number of decision classes of the target.
func (mt *MatrixTarget) Classes() int { return len(mt.outcomes) }

// Group is identities with identical rows (every cell under every semantics) in one
// target, in identity order.
type Group struct {
	Identities []int
}

// Groups groups the identities of a target by identical rows; groups are ordered by
// their first identity. With ungroup, every identity is its own group.
func (m *Matrix) Groups(mt *MatrixTarget, ungroup bool) []Group {
	if ungroup {
		out := make([]Group, len(m.Identities))
		for i := range out {
			out[i] = Group{Identities: []int{i}}
		}
		return out
	}
	merged := mt.mergeClasses()
	var out []Group
	index := map[int]int{}
	for i := range m.Identities {
		c := merged[mt.classOf[i]]
		g, ok := index[c]
		if !ok {
			g = len(out)
			index[c] = g
			out = append(out, Group{})
		}
		out[g].Identities = append(out[g].Identities, i)
	}
	return out
}

// mergeClasses maps each class of the target to the first class whose outcomes equal
// its own (itself when no earlier class has them); classes no identity is in map to 0.
func (mt *MatrixTarget) mergeClasses() []int {
	merged := make([]int, len(mt.outcomes))
	byKey := map[string]int{}
	var b strings.Builder
	for c, row := range mt.outcomes {
		if row == nil {
			continue
		}
		b.Reset()
		for _, o := range row {
			writeOutcome(&b, o)
		}
		k := b.String()
		if x, ok := byKey[k]; ok {
			merged[c] = x
			continue
		}
		byKey[k] = c
		merged[c] = c
	}
	return merged
}

func writeOutcome(b *strings.Builder, o Outcome) {
	for _, cell := range o.Cells {
		b.WriteString(cell.Decision)
		b.WriteByte(0)
		b.WriteString(cell.DecidedBy)
		b.WriteByte(0)
		b.WriteString(cell.Level)
		for _, br := range cell.Branches {
			b.WriteByte(2)
			b.WriteString(string(br.Assume.Gateway) + "/" + string(br.Assume.Backend) + "/" + br.Decision + "/" + br.Level + "/" + br.DecidedBy)
		}
		b.WriteByte(1)
	}
}

// Matrix decides every point of the (filtered) space.
func (e *Engine) Matrix(f Filter) *Matrix {
	m := &Matrix{}
	for _, s := range e.Semantics {
		m.Semantics = append(m.Semantics, s.Name)
	}
	for _, id := range e.Identities {
		if f.identity(id) {
			m.Identities = append(m.Identities, id)
		}
	}
	var idx []int
	for i, t := range e.Targets {
		if f.target(t) {
			idx = append(idx, i)
		}
	}
	m.Targets = make([]*MatrixTarget, len(idx))
	parallel.For(len(idx), func(k int) {
		i := idx[k]
		t, st := e.Targets[i], e.state[i]
		mt := &MatrixTarget{Target: t, classOf: make([]int32, len(m.Identities))}
		used := make([]bool, len(st.classes))
		for j, id := range m.Identities {
			c := st.class(t, id.principal)
			mt.classOf[j] = int32(c)
			used[c] = true
		}
		var classes []int
		for c := range st.classes {
			if used[c] {
				classes = append(classes, c)
			}
		}
		e.rows(t, st, classes)
		mt.outcomes = make([][]Outcome, len(st.classes))
		for _, c := range classes {
			mt.outcomes[c] = st.cells[c]
		}
		m.Targets[k] = mt
	})
	return m
}

// Row is a group of identities with the same decision everywhere in the matrix.
type Row struct {
	// Identities are indexes into Matrix.Identities, in order.
	Identities []int
}

// Rows groups identities whose rows are identical (verdict and deciding rule under every
// semantics, for every column). With ungroup, every identity is its own row.
func (m *Matrix) Rows(ungroup bool) []Row {
	if ungroup {
		rows := make([]Row, len(m.Identities))
		for i := range rows {
			rows[i] = Row{Identities: []int{i}}
		}
		return rows
	}
	// Per target, merge classes with equal outcomes; an identity's signature is the
	// sequence of its classes' merged classes.
	sigs := make([][]byte, len(m.Identities))
	for _, mt := range m.Targets {
		merged := mt.mergeClasses()
		for i := range m.Identities {
			sigs[i] = binary.AppendUvarint(sigs[i], uint64(merged[mt.classOf[i]]))
		}
	}
	var rows []Row
	bySig := map[string]int{}
	for i := range m.Identities {
		k := string(sigs[i])
		if r, ok := bySig[k]; ok {
			rows[r].Identities = append(rows[r].Identities, i)
			continue
		}
		bySig[k] = len(rows)
		rows = append(rows, Row{Identities: []int{i}})
	}
	return rows
}

// Counts are the number of cells per verdict (primary semantics) and of cells where
// the semantics disagree.
type Counts struct {
	Allow         int `json:"allow"`
	Deny          int `json:"deny"`
	Indeterminate int `json:"indeterminate"`
	Differs       int `json:"differs"`
}

func (c *Counts) add(o Outcome) {
	switch o.Primary().Decision {
	case explain.Allow:
		c.Allow++
	case explain.Deny:
		c.Deny++
	default:
		c.Indeterminate++
	}
	if o.Differs {
		c.Differs++
	}
}

// Counts counts the cells of the matrix.
func (m *Matrix) Counts() Counts {
	var c Counts
	for _, mt := range m.Targets {
		n := make([]int, len(mt.outcomes))
		for i := range m.Identities {
			n[mt.classOf[i]]++
		}
		for cl, row := range mt.outcomes {
			for _, o := range row {
				var one Counts
				one.add(o)
				c.Allow += one.Allow * n[cl]
				c.Deny += one.Deny * n[cl]
				c.Indeterminate += one.Indeterminate * n[cl]
				c.Differs += one.Differs * n[cl]
			}
		}
	}
	return c
}

// Disagreements lists the identities whose access differs between semantics somewhere.
func (m *Matrix) Disagreements() []*Caller {
	differs := make([]bool, len(m.Identities))
	for _, mt := range m.Targets {
		cls := make([]bool, len(mt.outcomes))
		for cl, row := range mt.outcomes {
			for _, o := range row {
				if o.Differs {
					cls[cl] = true
					break
				}
			}
		}
		for i := range m.Identities {
			if cls[mt.classOf[i]] {
				differs[i] = true
			}
		}
	}
	var out []*Caller
	for i, id := range m.Identities {
		if differs[i] {
			out = append(out, id)
		}
	}
	return out
}
