package whatif

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/snapshot"
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
	Where   string
	Nearest string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: %s %s not found %s %s%s", e.Flag, e.What, e.Name, e.preposition(), e.Where, didYouMean(e.Name, e.Nearest))
}

func (e *NotFoundError) preposition() string {
	if e.What == "listener" {
		return "on"
	}
	return "in"
}

// Prepare builds the decision space of s under sems and checks the names of q against
// it: the warnings are for names the space does not hold (the question is answered
// anyway); the error is a filter naming nothing in the input (then the warnings found
// before it are returned too).
func Prepare(s *snapshot.Snapshot, sems []effective.Semantics, o Options, q Question) (*Engine, []Warning, error) {
	e := New(s, sems, o)
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
// names nothing in the input, with the nearest name when one is close.
func checkFilter(s *snapshot.Snapshot, e *Engine, f Filter) error {
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
		add(t.Backend)
	}
	if f.Gateway != "" && !slices.Contains(gateways, f.Gateway) {
		return &NotFoundError{Flag: "--gateway", What: "gateway", Name: f.Gateway, Where: inputName(s), Nearest: nearest(f.Gateway, gateways)}
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
			return &NotFoundError{Flag: "--listener", What: "listener", Name: f.Listener, Where: where, Nearest: nearest(f.Listener, all)}
		}
	}
	if f.Backend != "" && !slices.Contains(backends, f.Backend) {
		return &NotFoundError{Flag: "--backend", What: "backend", Name: f.Backend, Where: inputName(s), Nearest: nearest(f.Backend, backends)}
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

// nearest is the candidate closest to name by edit distance, "" when none is close: at
// most a third of the name's length (at least 1, at most 3) edits away. Ties go to the
// first in sorted order.
func nearest(name string, candidates []string) string {
	limit := min(max(len(name)/3, 1), 3)
	best, bestD := "", limit+1
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if c == name {
			return c
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// nearestOther is nearest, "" when it is name itself.
func nearestOther(name string, candidates []string) string {
	if n := nearest(name, candidates); n != name {
		return n
	}
	return ""
}

// didYouMean is "; did you mean X?" when near is a name other than name, else "".
func didYouMean(name, near string) string {
	if near != "" && near != name {
		return fmt.Sprintf("; did you mean %s?", near)
	}
	return ""
}
