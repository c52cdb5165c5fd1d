package main

import (
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/lint"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/whatif"
)

// Shell completion of values that come from the objects: the command's own -f files (or
// the cluster without -f) are read as the command would read them, so completion offers
// what the command will find.

// completionKind is what a completion offers.
type completionKind int

const (
	completeGateways completionKind = iota
	completeRoutes
	completeXBackends
	completeIdentities
	completeTools
	completeHosts
)

// completeFrom returns a completion function for flag values of kind, read through l.
func (a *app) completeFrom(l *loadFlags, kind completionKind) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		lf := *l
		lf.wholeCluster = true
		m, err := a.load(cmd.Context(), &lf)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveError
		}
		return matching(completionValues(m, kind), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// completionValues lists the values of kind in m's snapshot, sorted.
func completionValues(m *model.Model, kind completionKind) []string {
	s := m.Snapshot
	var out []string
	switch kind {
	case completeGateways:
		for _, g := range s.Gateways {
			out = append(out, g.Namespace+"/"+g.Name)
		}
	case completeRoutes:
		for _, r := range s.HTTPRoutes {
			out = append(out, r.Namespace+"/"+r.Name)
		}
	case completeXBackends:
		for _, b := range s.XBackends {
			out = append(out, b.Namespace+"/"+b.Name)
		}
	case completeHosts:
		// The hostnames the input names: listeners' and routes' (wildcards as written).
		seen := map[string]bool{}
		add := func(h string) {
			if h != "" && !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
		for _, g := range s.Gateways {
			for _, l := range g.Spec.Listeners {
				if l.Hostname != nil {
					add(string(*l.Hostname))
				}
			}
		}
		for _, r := range s.HTTPRoutes {
			for _, h := range r.Spec.Hostnames {
				add(string(h))
			}
		}
	case completeIdentities, completeTools:
		e := whatif.New(m, []effective.Semantics{effective.Reference()}, whatif.Options{})
		seen := map[string]bool{}
		if kind == completeIdentities {
			for _, id := range e.Identities {
				if !id.Other && !seen[id.ID] {
					seen[id.ID] = true
					out = append(out, id.ID)
				}
			}
			break
		}
		for _, t := range e.Targets {
			for _, op := range t.Ops {
				if op.Tool != "" && !op.Other && !seen[op.Tool] {
					seen[op.Tool] = true
					out = append(out, op.Tool)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// checkCompletions completes lint's --only, --skip and --explain: check codes, and
// for --only and --skip the categories too.
func checkCompletions(categories bool) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, c := range lint.Checks() {
			out = append(out, c.Code+"\t"+c.Title)
		}
		if categories {
			for _, c := range lint.Categories {
				out = append(out, string(c))
			}
		}
		return matching(out, toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// matching keeps the values that start with prefix (the part before a tab).
func matching(values []string, prefix string) []string {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}
