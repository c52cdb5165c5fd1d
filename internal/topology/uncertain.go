package topology

import (
	"slices"
	"strings"
)

// UncertainRoute says why Envoy may route a request for backend otherwise than agpol
// does on listener of gateway gw ("" for any listener): a route match that reaches
// backend comes at or after a match whose regular expression Envoy and Go read
// differently (compileRouteRegex) on one of the listener's virtual hosts, so a request
// that match takes is one Route answers only uncertainly (RouteResult.Uncertain; see
// docs/limits.md, "Regular expressions"). nil when no such match exists; the one of the
// least regular expression in byte order when several do. backend is compared by kind,
// namespace and name. The answer points into the graph.
func (g *Graph) UncertainRoute(gw Ref, listener string, backend Ref) *RegexDiffers {
	gi := g.gatewayIndex(gw)
	if gi == nil {
		return nil
	}
	var whys []*RegexDiffers
	for _, li := range gi.listeners {
		if (listener != "" && li.name != listener) || li.table == nil || !li.table.uncertain {
			continue
		}
		for _, vh := range li.table.all() {
			whys = vh.uncertainTo(backend, whys)
		}
	}
	if len(whys) == 0 {
		return nil
	}
	return slices.MinFunc(whys, func(a, b *RegexDiffers) int { return strings.Compare(a.Regex, b.Regex) })
}

// uncertainTo appends to whys why vh routes a request for backend uncertainly, if it does.
func (vh *vhost) uncertainTo(backend Ref, whys []*RegexDiffers) []*RegexDiffers {
	if vh.uncertain == nil {
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
