package main

import (
	"fmt"

	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// runGraph draws the gateways of s named name (all without), in namespace ns ("": any).
func (a *app) runGraph(m *model.Model, kinds []string, name string, sel render.Selector, ns, format string) error {
	if len(kinds) != 1 || kinds[0] != "gateways" {
		return usagef("-o %s draws gateways: use agpol get gateway [NAME] -o %s", format, format)
	}
	s, g := m.Snapshot, m.Graph()
	var gws []*snapshot.Gateway
	for _, gw := range g.Gateways() {
		if (name == "" || gw.Name == name) && (ns == "" || gw.Namespace == ns || name == "") && sel.Match(gw.ObjectMeta) {
			gws = append(gws, gw)
		}
	}
	if name != "" && len(gws) > 1 && ns == "" {
		return usagef("several gateways are named %q: give the namespace with -n", name)
	}
	if len(gws) == 0 {
		if name != "" {
			return fmt.Errorf("gateways %q not found", name)
		}
		if sel.Labels != nil || sel.Fields != nil {
			return fmt.Errorf("no gateway matches the selectors")
		}
		return fmt.Errorf("no gateway in the input")
	}
	computed := render.ComputedFrom(m.Statuses())
	return render.GatewayGraph(a.streams.Out, format, render.GraphInput{Gateways: gws, Graph: g, Targets: topology.IndexTargets(s), Computed: computed})
}
