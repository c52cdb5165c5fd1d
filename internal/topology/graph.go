package topology

import (
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/snapshot"
)

// Graph is the resolved attachment graph of one snapshot: which HTTPRoutes hang under
// which Gateway listener, which backends every route rule reaches, and the per-port
// routing tables a request is matched against. Build it once with BuildGraph and
// query it many times: every index, hostname table, precedence order and regular
// expression is prepared in BuildGraph, so Route does no allocation-heavy work.
//
// A Graph is read-only after BuildGraph and safe for concurrent queries. Slices it
// returns are shared with the Graph: callers must not modify them.
type Graph struct {
	snap *snapshot.Snapshot

	gateways  map[nsName]*gatewayIndex
	gwOrder   []*gatewayIndex // ns/name order
	planes    map[*snapshot.Gateway]GatewayDataPlane
	routes    map[nsName]*snapshot.HTTPRoute
	xbackends map[nsName]*snapshot.XBackend
	services  map[nsName]*snapshot.Service
	// serviceNamespaces are the namespaces the input carries Services of.
	serviceNamespaces map[string]bool
	// servicesRefused are the refusals of a live read of Services (snapshot warnings).
	servicesRefused []snapshot.Warning
	nsLabels        map[string]map[string]string
	grants          map[string][]*snapshot.ReferenceGrant // by namespace

	routeInfos map[*snapshot.HTTPRoute]*routeInfo

	byRoute         map[nsName][]Attachment
	backendGateways map[nsName][]Ref
	problems        []Problem
}

// Attachment says whether a route attaches to a listener and why not.
type Attachment struct {
	Gateway  *snapshot.Gateway
	Listener string // listener name
	Route    *snapshot.HTTPRoute
	Accepted bool
	// Reason is ReasonAccepted, or the Gateway API route condition reason
	// (ReasonNoMatchingParent, ReasonNotAllowedByListeners,
	// ReasonNoMatchingListenerHostname), or agpol's ReasonListenerNotProgrammed when the
	// listener itself carries no routes; Miss says why not, as data (nil when Accepted).
	Reason string
	Miss   *AttachMiss
	// ParentRef is the index in spec.parentRefs of the reference that decided (the
	// accepting one, or the closest to accepting); -1 when none selects the listener.
	ParentRef int
	// Hostnames are the intersected hostnames (virtual host domains) the route serves
	// on this listener; "*" means any host. Empty unless Accepted.
	Hostnames []string
}

// RouteRequest is what routing needs of a request.
type RouteRequest struct {
	Gateway  Ref               // required (Group gateway.networking.k8s.io, Kind Gateway)
	Listener string            // optional: only this listener
	Port     int               // optional: 0 = infer (from listener if given, else any listener matching the host)
	Host     string            // :authority; may include ":port" (stripped for matching)
	Path     string            // may include "?query"
	Method   string            // the caller always sets it
	Headers  map[string]string // lower-case names
	// Terse leaves RouteResult.Miss nil, so that routing allocates nothing, for a caller
	// that does not report why nothing serves a request.
	Terse bool
}

// RouteResult is where routing sends a request.
type RouteResult struct {
	Gateway *snapshot.Gateway
	// GatewayKey and RouteKey are the gateway's and the matched route's
	// "namespace/name" (RouteKey "" when no route matched), made once per graph.
	GatewayKey, RouteKey string

	Listener string // the listener that took the request ("" if none)
	// Protocol and ListenerPort are those of the first listener of the gateway named
	// Listener ("" and 0 without a listener): the listener that took the request
	// unless the gateway repeats a listener name (which Gateway API forbids).
	Protocol     gwapiv1.ProtocolType
	ListenerPort int
	Route        *snapshot.HTTPRoute // nil when no route matched
	RuleIndex    int
	RuleName     string          // the rule's name, or "" when unnamed
	Backends     []BackendTarget // every backendRef of the matched rule (weight 0 skipped), in order
	// Miss is why no rule takes the request (no listener for the host or port, no route,
	// no rule match), as data; nil when one does or the request is terse.
	Miss *RouteMiss

	// Port is the gateway port that took the request: the listener's port, or, when no
	// listener hostname matches on a port whose first listener is plain HTTP, that port
	// (the reference builds one filter chain for such a port from its first listener,
	// translator.go:350-356, so the connection is accepted, gateway-level policies run,
	// and the request then finds no virtual host). 0 when no port takes the request.
	Port int

	// MatchIndex is the index of the match (in spec.rules[RuleIndex].matches) that
	// selected the rule; 0 for a rule without matches.
	MatchIndex int
	// IgnoredMethod is the method that match names when the request's method is another:
	// the data plane does not check HTTPRoute method matches (the kube-agentic-networking
	// translator drops them), so the request was routed there all the same. "" otherwise.
	IgnoredMethod string
	// Hostname is the virtual host domain that served the request ("*" for any host).
	Hostname string
	// RouteListener is the listener the matched route is attached to. The reference
	// data plane builds one route table per port shared by all listeners on that port
	// (kube-agentic-networking translator.go:148-160, RouteConfiguration "route-<port>"),
	// so it can differ from Listener when listeners share a port.
	RouteListener string
	// Redirect is true when the rule answers with a RequestRedirect (no backend).
	Redirect bool
	// RuleProblem is set when the data plane answers 500 for the whole rule: any
	// backendRef failing to resolve (also one with weight 0) or no backendRef with a
	// weight above 0 (httproute.go:105-113, 342-347). It points into the graph.
	RuleProblem *RuleProblem
	// Uncertain says why Envoy may route the request otherwise: a match that could take
	// it (one at or above the rule that did, or any when none did) has a regular
	// expression Envoy and Go read differently (docs/limits.md, "Regular expressions");
	// nil when none does. It points into the graph.
	Uncertain *RegexDiffers
}

// BackendTarget is one resolved backendRef.
type BackendTarget struct {
	// Kind, Problem and Ref come first: they are what deciding a routed request reads.
	Kind string // "XBackend", "Service", or "Unsupported"
	// Problem is nil, or why the data plane answers 500: missing object, cross-namespace
	// Service without ReferenceGrant, unsupported kind. It points into the graph.
	Problem *BackendProblem
	Ref     Ref // resolved namespace/name (group folded via NormalizeGroup)
	// Name is "Kind namespace/name", e.g. "XBackend pay/ledger", made once.
	Name     string
	Group    string // group as written in the backendRef (the reference ignores it for routing, docs/semantics.md#routing-xbackend; lint needs it)
	Weight   int32
	XBackend *snapshot.XBackend // nil if missing
	Service  *snapshot.Service  // nil if missing or not a Service

	// Field is the field path of the backendRef in its route, e.g. "spec.rules[0].backendRefs[1]".
	Field string
	// Assumed is set when an object the backendRef needs is not in an incomplete snapshot
	// (manifests given as files are usually a part of the cluster): it is assumed to exist,
	// and Assumed says which and why (render writes the sentence).
	Assumed Assumption
}

// Path is one (gateway, listener, route rule, backend) path.
type Path struct {
	Gateway   *snapshot.Gateway
	Listener  string
	Route     *snapshot.HTTPRoute
	RuleIndex int
	RuleName  string
	Backend   BackendTarget

	// RuleProblem is set when the whole rule answers 500 (see RouteResult.RuleProblem).
	RuleProblem *RuleProblem
}

type nsName struct{ ns, name string }

// packStrings replaces the strings of ss by copies laid out one after the other in a
// single string: a table that a request scans or compares against then reads a few
// neighbouring cache lines, not one string per object it was built from.
func packStrings(ss []string) {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range ss {
		b.WriteString(s)
	}
	arena := b.String()
	for i, s := range ss {
		ss[i], arena = arena[:len(s)], arena[len(s):]
	}
}

// GatewayRef is the Ref of a Gateway.
func GatewayRef(namespace, name string) Ref {
	return Ref{Group: gwapiv1.GroupName, Kind: "Gateway", Namespace: namespace, Name: name}
}

// HTTPRouteRef is the Ref of an HTTPRoute.
func HTTPRouteRef(namespace, name string) Ref {
	return Ref{Group: gwapiv1.GroupName, Kind: "HTTPRoute", Namespace: namespace, Name: name}
}

// XBackendRef is the Ref of an XBackend.
func XBackendRef(namespace, name string) Ref {
	return Ref{Group: agentic.GroupName, Kind: agentic.KindXBackend, Namespace: namespace, Name: name}
}

// ServiceRef is the Ref of a core Service.
func ServiceRef(namespace, name string) Ref {
	return Ref{Group: "", Kind: "Service", Namespace: namespace, Name: name}
}

// refIs reports whether ref may name an object of the given group and kind: an empty
// Kind (or Group) in the ref is a wildcard; groups are compared after folding aliases.
func refIs(ref Ref, group, kind string) bool {
	if ref.Kind != "" && ref.Kind != kind {
		return false
	}
	if ref.Group != "" && NormalizeGroup(ref.Group) != group && !(group == "" && ref.Group == "core") {
		return false
	}
	return true
}

// Snapshot is the snapshot the graph was built from.
func (g *Graph) Snapshot() *snapshot.Snapshot { return g.snap }

// Gateway returns the Gateway named by ref, or nil.
func (g *Graph) Gateway(ref Ref) *snapshot.Gateway {
	if !refIs(ref, gwapiv1.GroupName, "Gateway") {
		return nil
	}
	if gi := g.gateways[nsName{ref.Namespace, ref.Name}]; gi != nil {
		return gi.gw
	}
	return nil
}

// XBackend returns the XBackend named by ref, or nil.
func (g *Graph) XBackend(ref Ref) *snapshot.XBackend {
	if !refIs(ref, agentic.GroupName, agentic.KindXBackend) {
		return nil
	}
	return g.xbackends[nsName{ref.Namespace, ref.Name}]
}

// HTTPRoute returns the HTTPRoute named by ref, or nil.
func (g *Graph) HTTPRoute(ref Ref) *snapshot.HTTPRoute {
	if !refIs(ref, gwapiv1.GroupName, "HTTPRoute") {
		return nil
	}
	return g.routes[nsName{ref.Namespace, ref.Name}]
}

// Service returns the Service named by ref, or nil.
func (g *Graph) Service(ref Ref) *snapshot.Service {
	if !refIs(ref, "", "Service") {
		return nil
	}
	return g.services[nsName{ref.Namespace, ref.Name}]
}

// Gateways lists every Gateway, ordered by namespace/name.
func (g *Graph) Gateways() []*snapshot.Gateway {
	out := make([]*snapshot.Gateway, len(g.gwOrder))
	for i, gi := range g.gwOrder {
		out[i] = gi.gw
	}
	return out
}

// Attachments returns every (listener, route) pair considered for a gateway: each
// listener (in spec order) paired with each route (namespace/name order) that has a
// parentRef naming the gateway.
func (g *Graph) Attachments(gw Ref) []Attachment {
	if gi := g.gatewayIndex(gw); gi != nil {
		return gi.attachments
	}
	return nil
}

// AttachmentsOfRoute returns the attachments of a route to every gateway its
// parentRefs name (gateway namespace/name order, then listener order).
func (g *Graph) AttachmentsOfRoute(route Ref) []Attachment {
	if !refIs(route, gwapiv1.GroupName, "HTTPRoute") {
		return nil
	}
	return g.byRoute[nsName{route.Namespace, route.Name}]
}

// Paths returns all paths through a gateway, in stable order: listener (spec order),
// route namespace/name, rule, backend. Only accepted attachments of programmed
// listeners contribute; redirect rules have no path; a rule with no backendRef of
// weight above 0 contributes one path whose Backend has Kind "None" (its RuleProblem says why).
func (g *Graph) Paths(gw Ref) []Path {
	if gi := g.gatewayIndex(gw); gi != nil {
		return gi.paths
	}
	return nil
}

// ListenerNotProgrammed returns why the data plane carries no routes on the listener
// called name of gateway gw (protocol, unsupported route kinds, a port or hostname
// conflict), nil when it carries them or there is no such listener.
func (g *Graph) ListenerNotProgrammed(gw Ref, name string) *NotProgrammed {
	if gi := g.gatewayIndex(gw); gi != nil {
		for _, li := range gi.listeners {
			if li.name == name {
				return li.notProgrammed
			}
		}
	}
	return nil
}

// GatewaysOfBackend returns the gateways (namespace/name order) whose accepted routes
// reach this XBackend with a weight above 0 (also when that rule answers 500: see
// Path.RuleProblem). XBackends no route reaches get nothing (translator.go:223-225).
func (g *Graph) GatewaysOfBackend(xb Ref) []Ref {
	if !refIs(xb, agentic.GroupName, agentic.KindXBackend) {
		return nil
	}
	return g.backendGateways[nsName{xb.Namespace, xb.Name}]
}

// Problems returns what the graph found wrong, ordered by object and field.
func (g *Graph) Problems() []Problem { return g.problems }

func (g *Graph) gatewayIndex(ref Ref) *gatewayIndex {
	if !refIs(ref, gwapiv1.GroupName, "Gateway") {
		return nil
	}
	return g.gateways[nsName{ref.Namespace, ref.Name}]
}

// BuildGraph resolves the snapshot into a Graph. It never fails: what cannot be
// resolved is reported in attachments, backend problems and Problems.
func BuildGraph(s *snapshot.Snapshot) *Graph {
	g := &Graph{
		snap:              s,
		gateways:          map[nsName]*gatewayIndex{},
		routes:            map[nsName]*snapshot.HTTPRoute{},
		xbackends:         map[nsName]*snapshot.XBackend{},
		services:          map[nsName]*snapshot.Service{},
		serviceNamespaces: map[string]bool{},
		nsLabels:          map[string]map[string]string{},
		grants:            map[string][]*snapshot.ReferenceGrant{},
		routeInfos:        map[*snapshot.HTTPRoute]*routeInfo{},
		byRoute:           map[nsName][]Attachment{},
		backendGateways:   map[nsName][]Ref{},
	}
	if s == nil {
		return g
	}
	g.planes = ClassifyGateways(s)
	for _, o := range s.HTTPRoutes {
		g.routes[nsName{o.Namespace, o.Name}] = o
	}
	for _, o := range s.XBackends {
		g.xbackends[nsName{o.Namespace, o.Name}] = o
	}
	for _, o := range s.Services {
		g.services[nsName{o.Namespace, o.Name}] = o
		g.serviceNamespaces[o.Namespace] = true
	}
	for _, w := range s.Warnings {
		if w.Kind == ServicesResource {
			g.servicesRefused = append(g.servicesRefused, w)
		}
	}
	for _, o := range s.Namespaces {
		g.nsLabels[o.Name] = o.Labels
	}
	for _, o := range s.ReferenceGrants {
		g.grants[o.Namespace] = append(g.grants[o.Namespace], o)
	}

	routes := make([]*routeInfo, 0, len(s.HTTPRoutes))
	for _, r := range sortedRoutes(s.HTTPRoutes) {
		ri := g.compileRoute(r)
		g.routeInfos[r] = ri
		routes = append(routes, ri)
	}

	// The gateways' "namespace/name" keys lie in one string, and the map's keys are
	// slices of it: looking a gateway up compares the request's names with bytes that
	// stay in cache, not with two strings of each gateway object.
	keys := make([]string, len(s.Gateways))
	for i, gw := range s.Gateways {
		keys[i] = gw.Namespace + "/" + gw.Name
	}
	packStrings(keys)
	for i, gw := range s.Gateways {
		n, key := len(gw.Namespace), keys[i]
		gi := g.buildGateway(gw, key, routes)
		g.gateways[nsName{key[:n], key[n+1:]}] = gi
		g.gwOrder = append(g.gwOrder, gi)
	}
	sort.Slice(g.gwOrder, func(i, j int) bool {
		a, b := g.gwOrder[i].gw, g.gwOrder[j].gw
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	for _, gi := range g.gwOrder {
		for _, a := range gi.attachments {
			k := nsName{a.Route.Namespace, a.Route.Name}
			g.byRoute[k] = append(g.byRoute[k], a)
		}
		seen := map[nsName]bool{}
		for _, p := range gi.paths {
			if p.Backend.XBackend == nil {
				continue
			}
			k := nsName{p.Backend.XBackend.Namespace, p.Backend.XBackend.Name}
			if !seen[k] {
				seen[k] = true
				g.backendGateways[k] = append(g.backendGateways[k], gi.ref)
			}
		}
	}
	sort.SliceStable(g.problems, func(i, j int) bool {
		a, b := g.problems[i], g.problems[j]
		if a.Object != b.Object {
			return a.Object.String() < b.Object.String()
		}
		return a.Field < b.Field
	})
	return g
}

// problem records p, found at field of object obj (written at src).
func (g *Graph) problem(obj Ref, src snapshot.Source, field string, p Problem) {
	p.Object, p.Source, p.Field = obj, g.snap.FieldPosition(src, field), field
	g.problems = append(g.problems, p)
}

// sortedRoutes orders routes by namespace/name (the order attachments and paths use).
func sortedRoutes(in []*snapshot.HTTPRoute) []*snapshot.HTTPRoute {
	out := append([]*snapshot.HTTPRoute(nil), in...)
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func lower(s string) string { return strings.ToLower(s) }
