package topology

import "slices"

// UncertainRoute says why Envoy may route a request for backend otherwise than agpol
// does on listener of gateway gw ("" for any listener): a route match that reaches
// backend comes at or after a match whose regular expression Envoy and Go read
// differently (compileRouteRegex) on one of the listener's virtual hosts, so a request
// that match takes is one Route answers only uncertainly (RouteResult.Uncertain; see
// docs/limits.md, "Regular expressions"). "" when no such match exists; the first reason
// in byte order when several do. backend is compared by kind, namespace and name.
func (g *Graph) UncertainRoute(gw Ref, listener string, backend Ref) string {
	gi := g.gatewayIndex(gw)
	if gi == nil {
		return ""
	}
	var whys []string
	for _, li := range gi.listeners {
		if (listener != "" && li.name != listener) || li.table == nil || !li.table.uncertain {
			continue
		}
		for _, vh := range li.table.all() {
			whys = vh.uncertainTo(backend, whys)
		}
	}
	if len(whys) == 0 {
		return ""
	}
	return slices.Min(whys)
}

// uncertainTo appends to whys why vh routes a request for backend uncertainly, if it does.
func (vh *vhost) uncertainTo(backend Ref, whys []string) []string {
	if vh.uncertain == "" {
		return whys
	}
	for i := vh.uncertainAt; i < len(vh.entries); i++ {
		for _, b := range vh.entries[i].hit.backends {
			if b.Kind == backend.Kind && b.Ref.Namespace == backend.Namespace && b.Ref.Name == backend.Name {
				return append(whys, vh.uncertain)
			}
		}
	}
	return whys
}
