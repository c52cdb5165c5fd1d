package whatif

import (
	"encoding/json"
	"iter"
	"sort"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/parallel"
)

// Change kinds.
const (
	Granted   = "granted"   // the verdict rose: deny (or no path) → indeterminate → allow
	Revoked   = "revoked"   // the verdict fell
	DecidedBy = "decidedBy" // same verdict, another deciding rule or level
)

// NoPath is the decidedBy of a side where no route connects the gateway and backend.
const NoPath = "no-path"

// Change is one point of the space whose decision differs between two snapshots.
type Change struct {
	// Kind is granted, revoked or decidedBy under the primary semantics ("" when only
	// another semantics sees a change).
	Kind     string  `json:"kind"`
	Identity *Caller `json:"identity"`
	Target   *Target `json:"target"`
	Op       Op      `json:"op"`
	Before   Cell    `json:"before"`
	After    Cell    `json:"after"`
	// Semantics lists, for every semantics but the primary, the before/after cells when
	// they differ from the primary's (the presets disagree on this change).
	Semantics []SemanticsChange `json:"otherSemantics,omitempty"`
}

// SemanticsChange is a change under a non-primary semantics.
type SemanticsChange struct {
	Semantics string `json:"semantics"`
	Kind      string `json:"kind,omitempty"`
	Before    Cell   `json:"before"`
	After     Cell   `json:"after"`
}

// DiffResult is every changed decision, grouped.
type DiffResult struct {
	Semantics []string `json:"semantics"`
	// Compare says what the two sides are when they are not two inputs: the same
	// objects under two semantics ("semantics reference → pr-293").
	Compare   string  `json:"compare,omitempty"`
	Granted   Changes `json:"granted"`
	Revoked   Changes `json:"revoked"`
	DecidedBy Changes `json:"decidedBy"`
	// OtherSemantics are points where the primary semantics sees no change of access but
	// another semantics does (Kind is empty; the per-semantics kinds are in Semantics).
	OtherSemantics Changes `json:"otherSemantics,omitzero"`
	// Compared is the number of (identity, target, operation) points compared.
	Compared int `json:"compared"`
	// Differs lists identities whose change differs between semantics.
	Differs []string `json:"differs,omitempty"`
}

// Count is the number of changes.
func (d *DiffResult) Count() int { return d.Granted.Len() + d.Revoked.Len() + d.DecidedBy.Len() }

// Changes is one kind's changes in order (by target, then identity, then operation),
// held compactly: the identities of a target whose decision classes are the same on
// both sides share that class pair's changes, so a change seen by many identities is
// one Change and a pointer per identity, not a copy per identity.
type Changes struct {
	runs []changeRun
	n    int
}

// changeRun is an identity's changes of one kind on one target (shared, Identity unset).
type changeRun struct {
	id      *Caller
	changes []*Change
}

func (c *Changes) add(id *Caller, changes []*Change) {
	if len(changes) > 0 {
		c.runs = append(c.runs, changeRun{id, changes})
		c.n += len(changes)
	}
}

// Len is the number of changes.
func (c *Changes) Len() int { return c.n }

// All yields each change in order with its identity. The change is shared by the
// identities of its decision class: its Identity is unset, and it must not be modified.
func (c *Changes) All() iter.Seq2[*Caller, *Change] {
	return func(yield func(*Caller, *Change) bool) {
		for _, r := range c.runs {
			for _, ch := range r.changes {
				if !yield(r.id, ch) {
					return
				}
			}
		}
	}
}

// List returns every change in order, each a copy with its Identity set.
func (c *Changes) List() []*Change {
	out := make([]*Change, 0, c.n)
	for id, ch := range c.All() {
		cp := *ch
		cp.Identity = id
		out = append(out, &cp)
	}
	return out
}

// MarshalJSON writes the changes as a list, each with its identity.
func (c Changes) MarshalJSON() ([]byte, error) { return json.Marshal(c.List()) }

func rank(c Cell) int {
	switch c.Decision {
	case explain.Allow:
		return 2
	case explain.Indeterminate:
		return 1
	}
	return 0
}

// kind classifies a change ("" for none). A side without a path counts as a deny, and
// deny ↔ no path is no change of access.
func kind(b, a Cell) string {
	rb, ra := rank(b), rank(a)
	switch {
	case ra > rb:
		return Granted
	case ra < rb:
		return Revoked
	case b.DecidedBy == NoPath || a.DecidedBy == NoPath:
		return ""
	case !b.Same(a) || !sameBranches(b, a):
		return DecidedBy
	}
	return ""
}

// sameBranches compares the outcomes per authorizer answer (an indeterminate cell's
// attribution under each answer).
func sameBranches(b, a Cell) bool {
	if len(b.Branches) != len(a.Branches) {
		return false
	}
	for i := range b.Branches {
		if b.Branches[i] != a.Branches[i] {
			return false
		}
	}
	return true
}

var noPath = Cell{Decision: explain.Deny, Level: "none", DecidedBy: NoPath}

// kinds indexes a change's kind: granted, revoked, decidedBy, then other semantics.
func kindIndex(k string) int {
	switch k {
	case Granted:
		return 0
	case Revoked:
		return 1
	case DecidedBy:
		return 2
	}
	return 3
}

// Diff compares two engines built with the same semantics (before first). Identities
// are the union of both sides, targets the union of both sides' paths, and operations
// per target the union of both sides' operations. Every point is compared exactly:
// identities that no rule names on either side share one comparison.
func Diff(before, after *Engine, f Filter) *DiffResult {
	res := &DiffResult{}
	for _, s := range after.Semantics {
		res.Semantics = append(res.Semantics, s.Name)
	}
	// Union of identities (by ID), in the after side's order, then the before side's leftovers.
	var ids []*Caller
	seen := map[string]bool{}
	for _, l := range [][]*Caller{after.Identities, before.Identities} {
		for _, id := range l {
			if !seen[id.ID] && f.identity(id) {
				seen[id.ID] = true
				ids = append(ids, id)
			}
		}
	}
	sort.SliceStable(ids, func(i, j int) bool { return identityLess(ids[i], ids[j]) })
	// Union of targets by key.
	type pair struct {
		key  string
		b, a *Target
		bi   int
		ai   int
	}
	var pairs []*pair
	byKey := map[string]*pair{}
	for i, t := range after.Targets {
		if f.target(t) {
			p := &pair{key: t.Key(), a: t, ai: i, bi: -1}
			byKey[p.key] = p
			pairs = append(pairs, p)
		}
	}
	for i, t := range before.Targets {
		if !f.target(t) {
			continue
		}
		if p, ok := byKey[t.Key()]; ok {
			p.b, p.bi = t, i
			continue
		}
		p := &pair{key: t.Key(), b: t, bi: i, ai: -1}
		byKey[p.key] = p
		pairs = append(pairs, p)
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		x, y := pairs[i].a, pairs[j].a
		if x == nil {
			x = pairs[i].b
		}
		if y == nil {
			y = pairs[j].b
		}
		return targetLess(x, y)
	})
	// Each pair's changes, by kind; each point is decided and compared once, and only
	// the changes are kept (the engines keep no decision of a diff).
	type pairChanges struct {
		kinds    [4]Changes
		compared int
		differs  []string
	}
	changes := make([]pairChanges, len(pairs))
	parallel.For(len(pairs), func(k int) {
		p := pairs[k]
		t := p.a
		if t == nil {
			t = p.b
		}
		pc := &changes[k]
		if p.b != nil && p.a != nil && before.state[p.bi] == after.state[p.ai] {
			// The after engine took the path from the before one (Options.Before): every
			// input is the same, so is every decision, on the same operations (one per
			// key of opIndex).
			pc.compared = len(ids) * len(after.state[p.ai].opIndex)
			return
		}
		ops := unionOps(p.b, p.a)
		bs, as := newSide(before, p.b, p.bi, ops), newSide(after, p.a, p.ai, ops)
		// Decision classes: identities with the same class on both sides compare once.
		type cls struct{ b, a int }
		type proto struct {
			kinds  [4][]*Change
			differ bool // a change differs between semantics
		}
		memo := map[cls]*proto{}
		for _, id := range ids {
			key := cls{bs.class(id), as.class(id)}
			pr, ok := memo[key]
			if !ok {
				pr = &proto{}
				for o, op := range ops {
					if ch := compare(bs.outcome(key.b, o), as.outcome(key.a, o), res.Semantics); ch != nil {
						ch.Target, ch.Op = t, op
						i := kindIndex(ch.Kind)
						pr.kinds[i] = append(pr.kinds[i], ch)
						pr.differ = pr.differ || len(ch.Semantics) > 0
					}
				}
				memo[key] = pr
			}
			pc.compared += len(ops)
			for i := range pr.kinds {
				pc.kinds[i].add(id, pr.kinds[i])
			}
			if pr.differ {
				pc.differs = append(pc.differs, id.ID)
			}
		}
	})
	differs := map[string]bool{}
	lists := [4]*Changes{&res.Granted, &res.Revoked, &res.DecidedBy, &res.OtherSemantics}
	for k := range changes {
		pc := &changes[k]
		res.Compared += pc.compared
		for i, l := range lists {
			l.runs = append(l.runs, pc.kinds[i].runs...)
			l.n += pc.kinds[i].n
		}
		for _, id := range pc.differs {
			if !differs[id] {
				differs[id] = true
				res.Differs = append(res.Differs, id)
			}
		}
		changes[k] = pairChanges{}
	}
	sort.Strings(res.Differs)
	return res
}

// diffSide decides one side of a target pair for a diff: the outcome of each class
// and operation is decided on first use and kept until the pair is compared, not in
// the engine.
type diffSide struct {
	e       *Engine
	t       *Target
	st      *targetState
	ops     []Op
	queries []*explain.Query
	out     map[int][]Outcome
	// none is the outcome of every point of a side without the path.
	none Outcome
}

// newSide is the side of the target t (the engine's target i), nil when the side
// has no path.
func newSide(e *Engine, t *Target, i int, ops []Op) *diffSide {
	s := &diffSide{e: e, t: t, ops: ops, out: map[int][]Outcome{}}
	if t == nil {
		s.none.Cells = make([]Cell, len(e.Semantics))
		for k := range s.none.Cells {
			s.none.Cells[k] = noPath
		}
		return s
	}
	s.st = e.state[i]
	s.queries = make([]*explain.Query, len(ops))
	return s
}

// class is the identity's decision class on the side (-1 without a path).
func (s *diffSide) class(id *Caller) int {
	if s.t == nil {
		return -1
	}
	return s.st.class(s.t, id.principal)
}

// outcome is the decision of class calling ops[o].
func (s *diffSide) outcome(class, o int) Outcome {
	if s.t == nil {
		return s.none
	}
	row := s.out[class]
	if row == nil {
		row = make([]Outcome, len(s.ops))
		s.out[class] = row
	}
	if row[o].Cells == nil {
		q := s.queries[o]
		if q == nil {
			q = s.e.query(s.t, s.ops[o])
			s.queries[o] = q
		}
		s.st.mu.Lock()
		row[o] = s.e.outcome(s.t, s.st, class, q)
		s.st.mu.Unlock()
	}
	return row[o]
}

// compare builds the change of one point, nil when the primary semantics sees none and
// no other semantics does either.
func compare(b, a Outcome, sems []string) *Change {
	k := kind(b.Cells[0], a.Cells[0])
	var others []SemanticsChange
	for i := 1; i < len(sems) && i < len(b.Cells) && i < len(a.Cells); i++ {
		ki := kind(b.Cells[i], a.Cells[i])
		if ki != k || !b.Cells[i].Same(b.Cells[0]) || !a.Cells[i].Same(a.Cells[0]) {
			others = append(others, SemanticsChange{Semantics: sems[i], Kind: ki, Before: b.Cells[i], After: a.Cells[i]})
		}
	}
	if k == "" {
		// Flag only verdict changes another semantics sees; attribution differences alone are not changes.
		var seen []SemanticsChange
		for _, o := range others {
			if o.Kind == Granted || o.Kind == Revoked {
				seen = append(seen, o)
			}
		}
		if len(seen) == 0 {
			return nil
		}
		return &Change{Kind: "", Before: b.Cells[0], After: a.Cells[0], Semantics: seen}
	}
	var flagged []SemanticsChange
	for _, o := range others {
		if o.Kind != k {
			flagged = append(flagged, o)
		}
	}
	return &Change{Kind: k, Before: b.Cells[0], After: a.Cells[0], Semantics: flagged}
}

// unionOps merges the operations of both sides: base methods first, then tools by
// name, <other tool> last.
func unionOps(b, a *Target) []Op {
	var out []Op
	seen := map[string]bool{}
	for _, t := range []*Target{a, b} {
		if t == nil {
			continue
		}
		for _, op := range t.Ops {
			if !seen[op.Key()] {
				seen[op.Key()] = true
				out = append(out, op)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return opLess(out[i], out[j]) })
	return out
}

func opLess(x, y Op) bool {
	rx, ry := opRank(x), opRank(y)
	if rx != ry {
		return rx < ry
	}
	return x.Tool < y.Tool
}

func opRank(o Op) int {
	switch {
	case o.Method == "initialize":
		return 0
	case o.Method == "tools/list":
		return 1
	case o.Other:
		return 3
	}
	return 2
}
