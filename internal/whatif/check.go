package whatif

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/suggest"
)

// Question holds the names a what-if command gives, checked against the decision space
// by Prepare.
type Question struct {
	// Filter is the space filter; with CheckFilter its gateway, listener and backend
	// must be in the input.
	Filter      Filter
	CheckFilter bool
	// InventoryName is the --tools file, named by the warnings about its backends.
	InventoryName string
	// Caller is can-i's --from; Tool the --tool asked about; Rows matrix's --from.
	Caller *explain.Caller
	Tool   string
	Rows   []string
}

// WarningKind says what a Warning is about.
type WarningKind int

const (
	// InventoryBackendUnreached: a backend of the tools inventory no route reaches.
	InventoryBackendUnreached WarningKind = iota
	// UnknownCaller: a caller in no policy and no ServiceAccount, answered as any
	// caller no rule names.
	UnknownCaller
	// UnknownTool: a tool in no policy and no inventory, answered as any tool no policy
	// names.
	UnknownTool
	// UnknownRow: a matrix --from that is no identity of the space: it selects no row.
	UnknownRow
)

// Warning is a name of a question that the decision space does not hold: the question
// is still answered.
type Warning struct {
	Kind WarningKind
	// Source is what gave the name: the inventory file, or the flag.
	Source string
	Name   string
	// Nearest is the closest name the space holds, "" when none is close.
	Nearest string
}

// NotFoundError is a --gateway, --listener or --backend that names nothing in the input.
type NotFoundError struct {
	Flag, What, Name string
	// Where is where it was looked for ("the input", "the cluster", "any gateway",
	// "gateway NS/NAME").
	Where string
	// Hint is suggest's "did you mean …?", "" when nothing is close.
	Hint string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("%s: %s %s not found %s %s", e.Flag, e.What, e.Name, e.preposition(), e.Where)
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

func (e *NotFoundError) preposition() string {
	if e.What == "listener" {
		return "on"
	}
	return "in"
}

// Prepare builds the decision space of m's snapshot under sems and checks the names of q against
// it: the warnings are for names the space does not hold (the question is answered
// anyway); the error is a filter naming nothing in the input (then the warnings found
// before it are returned too).
func Prepare(m *model.Model, sems []effective.Semantics, o Options, q Question) (*Engine, []Warning, error) {
	s := m.Snapshot
	e := New(m, sems, o)
	var warns []Warning
	if o.Inventory != nil {
		known := map[string]bool{}
		for _, t := range e.Targets {
			known[InventoryKey(t.BackendKind, t.Backend)] = true
		}
		for _, k := range o.Inventory.Unknown(known) {
			warns = append(warns, Warning{Kind: InventoryBackendUnreached, Source: q.InventoryName, Name: k})
		}
	}
	if q.CheckFilter {
		if err := checkFilter(s, e, q.Filter); err != nil {
			return e, warns, err
		}
	}
	if q.Caller != nil {
		if w := e.unknownCaller(e.IdentityFor(*q.Caller)); w != nil {
			warns = append(warns, *w)
		}
	}
	if q.Tool != "" {
		if w := e.unknownTool(q.Tool); w != nil {
			warns = append(warns, *w)
		}
	}
	for _, id := range q.Rows {
		if e.Identity(id) == nil {
			var known []string
			for _, x := range e.Identities {
				known = append(known, x.ID)
			}
			warns = append(warns, Warning{Kind: UnknownRow, Source: "--from", Name: id, Nearest: nearestOther(id, known)})
		}
	}
	return e, warns, nil
}

// checkFilter is the NotFoundError of a filter's gateway, listener or backend that
// names nothing in the input, with suggest's hint: the same NAME in another namespace,
// a route or gateway given for a backend, or the nearest name.
func checkFilter(s *snapshot.Snapshot, e *Engine, f Filter) error {
	objs := suggest.Objects(s)
	var gateways, backends []string
	listeners := map[string][]string{}
	for _, g := range s.Gateways {
		id := g.Namespace + "/" + g.Name
		gateways = append(gateways, id)
		for _, l := range g.Spec.Listeners {
			listeners[id] = append(listeners[id], string(l.Name))
		}
	}
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			backends = append(backends, id)
		}
	}
	for _, b := range s.XBackends {
		add(b.Namespace + "/" + b.Name)
	}
	for _, b := range s.Services {
		add(b.Namespace + "/" + b.Name)
	}
	// A Service a route names but the input lacks is still a backend of the space.
	for _, t := range e.Targets {
		if !seen[t.Backend] {
			ns, name, _ := strings.Cut(t.Backend, "/")
			objs = append(objs, suggest.Object{Kind: "service", Namespace: ns, Name: name})
		}
		add(t.Backend)
	}
	ask := func(o suggest.Object) string {
		switch o.Kind {
		case "gateway":
			return "--gateway " + o.ID()
		case "xbackend", "service":
			return "--backend " + o.ID()
		case "httproute":
			// No --route here: name the backends the route reaches.
			var bs []string
			for _, t := range e.Targets {
				if slices.Contains(t.Routes, o.ID()) && !slices.Contains(bs, t.Backend) {
					bs = append(bs, t.Backend)
				}
			}
			sort.Strings(bs)
			switch {
			case len(bs) == 1:
				return "--backend " + bs[0] + " (the backend it reaches)"
			case len(bs) > 1:
				return "--backend " + strings.Join(bs[:len(bs)-1], ", ") + " or " + bs[len(bs)-1] + " (the backends it reaches)"
			}
		}
		return ""
	}
	hint := func(kinds []string, id string) string {
		ns, name, _ := strings.Cut(id, "/")
		return suggest.Hint(suggest.Query{Kinds: kinds, Namespace: ns, Name: name, Ask: ask}, objs)
	}
	if f.Gateway != "" && !slices.Contains(gateways, f.Gateway) {
		return &NotFoundError{Flag: "--gateway", What: "gateway", Name: f.Gateway, Where: inputName(s), Hint: hint([]string{"gateway"}, f.Gateway)}
	}
	if f.Listener != "" {
		var all []string
		found := false
		for gw, ls := range listeners {
			if f.Gateway != "" && gw != f.Gateway {
				continue
			}
			all = append(all, ls...)
			found = found || slices.Contains(ls, f.Listener)
		}
		if !found {
			where := "any gateway"
			if f.Gateway != "" {
				where = "gateway " + f.Gateway
			}
			h := ""
			if n := suggest.NearestOther(f.Listener, all); n != "" {
				h = "did you mean " + n + "?"
			}
			return &NotFoundError{Flag: "--listener", What: "listener", Name: f.Listener, Where: where, Hint: h}
		}
	}
	if f.Backend != "" && !slices.Contains(backends, f.Backend) {
		return &NotFoundError{Flag: "--backend", What: "backend", Name: f.Backend, Where: inputName(s), Hint: hint([]string{"xbackend", "service"}, f.Backend)}
	}
	return nil
}

// inputName is "the input" or "the cluster", for messages.
func inputName(s *snapshot.Snapshot) string {
	if len(s.Origins) == 1 && s.Origins[0] == "cluster" {
		return "the cluster"
	}
	return "the input"
}

// unknownCaller is the warning for a caller in no policy and no ServiceAccount of the
// input, nil for a known one.
func (e *Engine) unknownCaller(id *Caller) *Warning {
	if e.Identity(id.ID) != nil || id.Other {
		return nil
	}
	var known []string
	for _, x := range e.Identities {
		if !x.Other {
			known = append(known, x.ID)
		}
	}
	return &Warning{Kind: UnknownCaller, Source: "--from", Name: id.ID, Nearest: nearestOther(id.ID, known)}
}

// unknownTool is the warning for a tool in no policy and no tools inventory, nil for
// a known one.
func (e *Engine) unknownTool(tool string) *Warning {
	var known []string
	seen := map[string]bool{}
	for _, t := range e.Targets {
		for _, op := range t.Ops {
			if op.Method == "tools/call" && !op.Other && !seen[op.Tool] {
				seen[op.Tool] = true
				known = append(known, op.Tool)
			}
		}
	}
	if seen[tool] {
		return nil
	}
	return &Warning{Kind: UnknownTool, Source: "--tool", Name: tool, Nearest: nearestOther(tool, known)}
}

// nearestOther is suggest.NearestOther: the closest other name, "" when none is close.
func nearestOther(name string, candidates []string) string {
	return suggest.NearestOther(name, candidates)
}
