package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/whatif"
)

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

// didYouMean is "; did you mean X?" when a candidate is close to name, else "".
func didYouMean(name string, candidates []string) string {
	if n := nearest(name, candidates); n != "" && n != name {
		return fmt.Sprintf("; did you mean %s?", n)
	}
	return ""
}

// checkTargetFlags is the usage error (exit 2) for a --gateway, --listener or --backend
// of the what-if commands that names nothing in the input: "not found", and the nearest
// name when one is close.
func checkTargetFlags(s *snapshot.Snapshot, e *whatif.Engine, f whatif.Filter) error {
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
		return usagef("--gateway: gateway %s not found in %s%s", f.Gateway, inputName(s), didYouMean(f.Gateway, gateways))
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
			return usagef("--listener: listener %s not found on %s%s", f.Listener, where, didYouMean(f.Listener, all))
		}
	}
	if f.Backend != "" && !slices.Contains(backends, f.Backend) {
		return usagef("--backend: backend %s not found in %s%s", f.Backend, inputName(s), didYouMean(f.Backend, backends))
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

// warnUnknownIdentity warns (stderr) when the caller appears in no policy and no
// ServiceAccount of the input: the answer is the one for any caller no rule names.
func (a *app) warnUnknownIdentity(e *whatif.Engine, flag string, id *whatif.Caller) {
	if e.Identity(id.ID) != nil || id.Other {
		return
	}
	var known []string
	for _, x := range e.Identities {
		if !x.Other {
			known = append(known, x.ID)
		}
	}
	fmt.Fprintf(a.streams.ErrOut, "warning: %s %s appears in no policy and no ServiceAccount of the input: answered as for any caller no rule names%s\n",
		flag, id.ID, didYouMean(id.ID, known))
}

// warnUnknownTool warns (stderr) when a tool appears in no policy and no tools
// inventory of the input: the answer is the one for any tool no policy names.
func (a *app) warnUnknownTool(e *whatif.Engine, tool string) {
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
		return
	}
	fmt.Fprintf(a.streams.ErrOut, "warning: --tool %s appears in no policy and no tools inventory: answered as for any tool no policy names%s\n",
		tool, didYouMean(tool, known))
}
