package whatif

import (
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
	Compare   string    `json:"compare,omitempty"`
	Granted   []*Change `json:"granted"`
	Revoked   []*Change `json:"revoked"`
	DecidedBy []*Change `json:"decidedBy"`
	// OtherSemantics are points where the primary semantics sees no change of access but
	// another semantics does (Kind is empty; the per-semantics kinds are in Semantics).
	OtherSemantics []*Change `json:"otherSemantics,omitempty"`
	// Compared is the number of (identity, target, operation) points compared.
	Compared int `json:"compared"`
	// Differs lists identities whose change differs between semantics.
	Differs []string `json:"differs,omitempty"`
}

// Count is the number of changes.
func (d *DiffResult) Count() int { return len(d.Granted) + len(d.Revoked) + len(d.DecidedBy) }

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
	changes := make([][]*Change, len(pairs))
	compared := make([]int, len(pairs))
	parallel.For(len(pairs), func(k int) {
		p := pairs[k]
		t := p.a
		if t == nil {
			t = p.b
		}
		ops := unionOps(p.b, p.a)
		// Decision classes: identities with the same class on both sides compare once.
		type cls struct{ b, a int }
		memo := map[cls][]*Change{}
		var out []*Change
		for _, id := range ids {
			cb, ca := -1, -1
			if p.b != nil {
				cb = before.state[p.bi].class(p.b, id.principal)
			}
			if p.a != nil {
				ca = after.state[p.ai].class(p.a, id.principal)
			}
			key := cls{cb, ca}
			proto, ok := memo[key]
			if !ok {
				for _, op := range ops {
					bo, ao := outcomeOr(before, p.b, p.bi, cb, op), outcomeOr(after, p.a, p.ai, ca, op)
					if ch := compare(bo, ao, res.Semantics); ch != nil {
						ch.Target, ch.Op = t, op
						proto = append(proto, ch)
					}
				}
				memo[key] = proto
			}
			compared[k] += len(ops)
			for _, ch := range proto {
				c := *ch
				c.Identity = id
				out = append(out, &c)
			}
		}
		changes[k] = out
	})
	differs := map[string]bool{}
	for k := range pairs {
		res.Compared += compared[k]
		for _, c := range changes[k] {
			switch c.Kind {
			case Granted:
				res.Granted = append(res.Granted, c)
			case Revoked:
				res.Revoked = append(res.Revoked, c)
			case DecidedBy:
				res.DecidedBy = append(res.DecidedBy, c)
			default:
				res.OtherSemantics = append(res.OtherSemantics, c)
			}
			if len(c.Semantics) > 0 && !differs[c.Identity.ID] {
				differs[c.Identity.ID] = true
				res.Differs = append(res.Differs, c.Identity.ID)
			}
		}
	}
	sort.Strings(res.Differs)
	return res
}

func outcomeOr(e *Engine, t *Target, i, class int, op Op) Outcome {
	if t == nil {
		cells := make([]Cell, len(e.Semantics))
		for k := range cells {
			cells[k] = noPath
		}
		return Outcome{Cells: cells}
	}
	return e.decideClass(t, e.state[i], class, op)
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
