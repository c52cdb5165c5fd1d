package whatif

import (
	"reflect"
	"sort"
	"sync"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
)

// Options tune the space.
type Options struct {
	// TrustDomain of ServiceAccount identities (default cluster.local).
	TrustDomain string
	// Inventory lists the tools of some backends; others get the tool names their
	// policies mention plus <other tool>.
	Inventory *Inventory
	// ExtAuth holds known authorizer answers; unknown ones make cells indeterminate.
	ExtAuth explain.ExtAuth
	// Before is the engine of an earlier snapshot (diff's before side) built with the
	// same semantics and options: a target whose every input object is the same in both
	// snapshots takes its compiled chains, operations and decisions from there instead
	// of compiling them again (docs/performance.md, "diff: what is decided again").
	Before *Engine
}

// Cell is the decision for one (identity, target, operation) under one semantics.
type Cell struct {
	Decision  string `json:"decision"`
	Level     string `json:"level"`
	DecidedBy string `json:"decidedBy"`
	// Explicit is true for a deny by an external authorizer or a default deny.
	Explicit bool `json:"explicit,omitempty"`
	// Branches are the outcomes per authorizer answer when the decision is
	// indeterminate (or when an unknown answer does not change it).
	Branches []explain.Branch `json:"branches,omitempty"`
}

// cellOf is the part of an explain decision a cell keeps.
func cellOf(d explain.Decision) Cell {
	return Cell{Decision: d.Verdict, Level: d.Level, DecidedBy: d.DecidedBy, Explicit: d.Explicit, Branches: d.Branches}
}

// Same reports whether two cells have the same verdict, level and deciding rule.
func (c Cell) Same(o Cell) bool {
	return c.Decision == o.Decision && c.Level == o.Level && c.DecidedBy == o.DecidedBy
}

// Outcome is the decision of one point of the space under every semantics, primary first.
type Outcome struct {
	Cells []Cell `json:"semantics"`
	// Differs is true when the semantics disagree on the verdict (the access differs).
	Differs bool `json:"differs,omitempty"`
}

// Primary is the cell under the first semantics.
func (o Outcome) Primary() Cell { return o.Cells[0] }

// Engine holds the decision space of one snapshot and decides its points with
// explain.Query.Decide, explain's own decision procedure without a trace. Chains are
// compiled once per target and semantics; identities that no rule of a target's chain
// names share one decision (that of the synthetic other caller), so a target costs
// (named principals + 2) × operations decisions however many identities exist.
type Engine struct {
	Semantics   []effective.Semantics
	TrustDomain string
	Identities  []*Caller
	Targets     []*Target
	ExtAuth     explain.ExtAuth

	sim   *explain.Simulator
	inv   *Inventory
	state []*targetState
	byKey map[string]int
	byID  map[string]*Caller
}

// targetState is one target's compiled chains and decision classes.
type targetState struct {
	chains []*effective.Chain
	// classes: 0 anonymous (no principal), 1 the other caller, 2 a certificate without
	// a SPIFFE ID (cert:), then every named principal.
	classes []string
	classOf map[string]int

	// opIndex maps an op key to its index in the target's Ops; cells[class][op] holds
	// the decided outcomes of those ops, memo the others (who-can for any tool, diff).
	// queries[op] is the op prepared for explain.Query.Decide, made on first use: every class
	// shares its CEL results. mu guards them all, deciding included.
	opIndex map[string]int
	mu      sync.Mutex
	cells   [][]Outcome
	queries []*explain.Query
	memo    map[memoKey]Outcome
	// end finishes every decision on the target's paths (explain.TargetEnd): objects
	// a live read missed, the Kuadrant AuthPolicies that decide on a Gateway of another
	// data plane.
	end explain.PathEnd
}

type memoKey struct {
	class        int
	method, tool string
}

// New builds the decision space of model m's snapshot. sems must not be empty; the
// first is the primary semantics.
func New(m *model.Model, sems []effective.Semantics, o Options) *Engine {
	if len(sems) == 0 {
		sems = []effective.Semantics{effective.Reference()}
	}
	s := m.Snapshot
	sim := explain.New(m, sems, o.TrustDomain)
	e := &Engine{Semantics: sems, TrustDomain: sim.TrustDomain, ExtAuth: o.ExtAuth, sim: sim, inv: o.Inventory, byKey: map[string]int{}, byID: map[string]*Caller{}}
	e.Identities = identities(s, e.TrustDomain)
	for _, id := range e.Identities {
		e.byID[id.ID] = id
	}
	e.Targets = targets(sim.Graph)
	e.state = make([]*targetState, len(e.Targets))
	var same *unchangedInputs
	if o.Before != nil && o.Before.sameSetup(e) {
		same = compareInputs(o.Before.sim.Snapshot, s)
	}
	for i, t := range e.Targets {
		e.byKey[t.Key()] = i
		if same.unchanged(t) {
			if bi, ok := o.Before.byKey[t.Key()]; ok {
				bt := o.Before.Targets[bi]
				t.Ops, t.offers, t.ToolsFrom = bt.Ops, bt.offers, bt.ToolsFrom
				e.state[i] = o.Before.state[bi]
				continue
			}
		}
		st := &targetState{classes: []string{"", otherPrincipal, explain.CertificatePrincipal}, classOf: map[string]int{}, memo: map[memoKey]Outcome{},
			end: sim.TargetEnd(sim.Graph.Gateway(t.gw), t.Listener, t.Routes, t.be.Namespace)}
		st.end.MarkUncertain(t.UncertainRoute)
		f := chainFacts{principals: map[string]bool{}, tools: map[string]bool{}}
		for _, en := range sim.Engines {
			c := chainOf(en, t)
			st.chains = append(st.chains, c)
			factsOf(c, &f)
		}
		named := make([]string, 0, len(f.principals))
		for p := range f.principals {
			if p != otherPrincipal {
				named = append(named, p)
			}
		}
		sort.Strings(named)
		for _, p := range named {
			st.classOf[p] = len(st.classes)
			st.classes = append(st.classes, p)
		}
		t.Ops = append([]Op(nil), baseOps...)
		t.offers = map[string]bool{}
		if tools, ok := o.Inventory.ToolsOf(t.BackendKind, t.Backend); ok {
			t.ToolsFrom = "inventory"
			for _, name := range tools {
				t.Ops = append(t.Ops, Op{Method: "tools/call", Tool: name})
				t.offers[name] = true
			}
		} else {
			offersOf(st.chains[0], t.offers)
			t.ToolsFrom = "policies"
			names := make([]string, 0, len(f.tools))
			for n := range f.tools {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				t.Ops = append(t.Ops, Op{Method: "tools/call", Tool: n, FromPolicies: true})
			}
			t.Ops = append(t.Ops, Op{Method: "tools/call", Tool: OtherTool, Other: true})
		}
		st.opIndex = make(map[string]int, len(t.Ops))
		for k, op := range t.Ops {
			st.opIndex[op.Key()] = k
		}
		st.cells = make([][]Outcome, len(st.classes))
		e.state[i] = st
	}
	return e
}

// sameSetup reports whether e decides with the semantics, trust domain, inventory and
// authorizer answers of engine x.
func (e *Engine) sameSetup(x *Engine) bool {
	return reflect.DeepEqual(e.Semantics, x.Semantics) && e.TrustDomain == x.TrustDomain && e.inv == x.inv &&
		reflect.DeepEqual(e.ExtAuth, x.ExtAuth)
}

// Simulator is the explain simulator the engine decides with (for explaining a cell).
func (e *Engine) Simulator() *explain.Simulator { return e.sim }

// Identity returns the identity with this ID (sa:NS/NAME, SPIFFE ID, anonymous), or nil.
func (e *Engine) Identity(id string) *Caller { return e.byID[id] }

// IdentityFor returns the space's identity for a caller, or a new one (not in
// Identities) for a caller the snapshot does not know.
func (e *Engine) IdentityFor(c explain.Caller) *Caller {
	if x := e.byID[c.String()]; x != nil {
		return x
	}
	if c.Kind == explain.CallerSPIFFE {
		if ns, name, ok := saOfSPIFFE(c.SPIFFE, e.TrustDomain); ok {
			return e.IdentityFor(explain.Caller{Kind: explain.CallerServiceAccount, Namespace: ns, Name: name})
		}
	}
	p := c.Principal(e.TrustDomain)
	if c.Kind == explain.CallerCertificate {
		p = explain.CertificatePrincipal // passes the handshake of a listener its CA validates
	}
	return &Caller{ID: c.String(), Caller: c, From: []string{}, principal: p}
}

// Target returns the target with this key, or nil.
func (e *Engine) Target(key string) *Target {
	if i, ok := e.byKey[key]; ok {
		return e.Targets[i]
	}
	return nil
}

// class returns the decision class of an identity on a target.
func (st *targetState) class(t *Target, principal string) int {
	switch {
	case principal == "" || t.PlainHTTP():
		return 0
	case principal == otherPrincipal:
		return 1
	case principal == explain.CertificatePrincipal:
		return 2
	}
	if c, ok := st.classOf[principal]; ok {
		return c
	}
	return 1
}

// Decide returns the outcome for an identity calling op on a target.
func (e *Engine) Decide(t *Target, id *Caller, op Op) Outcome {
	i, ok := e.byKey[t.Key()]
	if !ok {
		return Outcome{}
	}
	st := e.state[i]
	return e.decideClass(e.Targets[i], st, st.class(e.Targets[i], id.principal), op)
}

func (e *Engine) decideClass(t *Target, st *targetState, class int, op Op) Outcome {
	st.mu.Lock()
	defer st.mu.Unlock()
	if o, ok := st.opIndex[op.Key()]; ok {
		return e.cell(t, st, class, o)
	}
	k := memoKey{class, op.Method, op.Tool}
	out, ok := st.memo[k]
	if !ok {
		out = e.outcome(t, st, class, e.query(t, op))
		st.memo[k] = out
	}
	return out
}

// rows decides every op of a target for the given classes and keeps them. The rows
// and cells of the classes not decided yet are allocated together.
func (e *Engine) rows(t *Target, st *targetState, classes []int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	fresh := 0
	for _, c := range classes {
		if st.cells[c] == nil {
			fresh++
		}
	}
	ops, sems := len(t.Ops), len(st.chains)
	outs := make([]Outcome, fresh*ops)
	cells := make([]Cell, fresh*ops*sems)
	for _, c := range classes {
		if st.cells[c] == nil {
			st.cells[c], outs = outs[:ops:ops], outs[ops:]
			for o := range ops {
				st.cells[c][o].Cells, cells = cells[:0:sems], cells[sems:]
			}
		}
	}
	for o := range t.Ops {
		for _, c := range classes {
			e.cell(t, st, c, o)
		}
	}
}

// cell returns the outcome of a class calling t.Ops[o], deciding it on first use.
// st.mu is held.
func (e *Engine) cell(t *Target, st *targetState, class, o int) Outcome {
	row := st.cells[class]
	if row == nil {
		row = make([]Outcome, len(t.Ops))
		st.cells[class] = row
	}
	if len(row[o].Cells) == 0 {
		if st.queries == nil {
			st.queries = make([]*explain.Query, len(t.Ops))
		}
		q := st.queries[o]
		if q == nil {
			q = e.query(t, t.Ops[o])
			st.queries[o] = q
		}
		row[o] = e.outcomeInto(row[o].Cells, t, st, class, q)
	}
	return row[o]
}

// query prepares op on t for untraced decisions by every caller.
func (e *Engine) query(t *Target, op Op) *explain.Query {
	return e.sim.Query(e.Request(t, explain.Caller{Kind: explain.CallerAnonymous}, op))
}

// outcome decides a class's call of q's operation on t under every semantics, each
// decision finished as explain finishes it (explain.PathEnd).
func (e *Engine) outcome(t *Target, st *targetState, class int, q *explain.Query) Outcome {
	return e.outcomeInto(nil, t, st, class, q)
}

// outcomeInto is outcome with its cells appended to cells (empty, allocated by the
// caller with room for every semantics, or nil).
func (e *Engine) outcomeInto(cells []Cell, t *Target, st *targetState, class int, q *explain.Query) Outcome {
	if cap(cells) < len(st.chains) {
		cells = make([]Cell, 0, len(st.chains))
	}
	out := Outcome{Cells: cells[:len(st.chains)]}
	for k, chain := range st.chains {
		out.Cells[k] = cellOf(q.Decide(chain, st.classes[class], &st.end))
		if out.Cells[k].Decision != out.Cells[0].Decision {
			out.Differs = true
		}
	}
	return out
}

// Request is the explain request for an identity's call of op on a target.
func (e *Engine) Request(t *Target, id explain.Caller, op Op) *explain.Request {
	gw, _ := explain.ParseNamespacedName(t.Gateway, "")
	be, _ := explain.ParseNamespacedName(t.Backend, "")
	r := &explain.Request{From: id, Gateway: &gw, Listener: t.Listener, MCP: &explain.MCP{Method: op.Method, Tool: op.Tool}, ExtAuth: e.ExtAuth}
	if t.BackendKind == "Service" {
		r.Service = &be
	} else {
		r.Backend = &be
	}
	return r
}
