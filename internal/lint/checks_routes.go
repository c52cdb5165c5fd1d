package lint

import (
	"fmt"
	"sort"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

func init() {
	Register(&Check{
		Code: "AGP104", Severity: SeverityError, Category: CategorySchema,
		Title: "value the data plane rejects",
		Explanation: `The object passes its CRD schema, but a value cannot be used by the data plane: a
regular expression in a route match that RE2 (Envoy) does not accept, or a listener's
namespace selector that is not a valid label selector. The reference treats such a
match as never matching (the rule is unreachable through it) and such a selector as
selecting nothing.

Two regular expressions are reported because Envoy and agpol may not agree on them
(docs/limits.md, "Regular expressions"). One over Envoy's RE2 program size limit
(re2.max_program_size.error_level, 100 by default): Envoy refuses the route
configuration that holds it, so the listener keeps its previous routes or has none;
agpol estimates the size with Go's regexp/syntax compiler and still matches the
expression. And \C (any byte), which RE2 accepts and Go's regexp does not: agpol cannot
match it and treats the match as never matching, where Envoy may route the request.
On both, agpol's routing answer for the listener may not be what Envoy does: explain
and simulate answer indeterminate for the requests such a match could take.`,
		Fix: `Correct the value named in the message: RE2 syntax for RegularExpression matches
(no look-around, no back-references, no \C), a shorter expression (fewer repetitions:
x{50} is 50 instructions), a valid label selector for allowedRoutes.`,
		DataPlanes: AppliesToAll,
		Run:        runGraphProblems,
	})
	Register(&Check{
		Code: "AGP205", Severity: SeverityWarning, Category: CategoryReferences,
		Title: "route references an object that is not in the input",
		Explanation: `An HTTPRoute's parentRef names a Gateway, or its backendRef an XBackend or Service,
that is not in the input. A route without its Gateway carries no traffic; a rule with a
backendRef that does not resolve answers every request with HTTP 500 (the reference
fails the whole rule, whatever the weights). Against files, the object may simply be
defined outside the files given with -f; the message says so.`,
		Fix:        `Correct the name or namespace of the reference, or create the object.`,
		DataPlanes: AppliesToAll,
		Run:        runRouteMissing,
	})
	Register(&Check{
		Code: "AGP206", Severity: SeverityError, Category: CategoryReferences,
		Title: "route backendRef the data plane cannot use",
		Explanation: `An HTTPRoute rule refers to a Service in another namespace without a ReferenceGrant in
that namespace allowing it (RefNotPermitted), or to a backend kind the reference does
not support (InvalidKind). The reference then answers
every request of the whole rule with HTTP 500, including requests that would have been
sent to the rule's other backends. Which kinds exist depends on the Gateway's data plane:
the reference serves Service and XBackend, Istio Service and its Hostname, Envoy Gateway
Service and its Backend (only the reference serves XBackends); for a data plane agpol does
not model, another kind is assumed supported.`,
		Fix: `Add a ReferenceGrant in the Service's namespace (from: HTTPRoute in the route's
namespace, to: Service), move the route next to the Service, or use an XBackend.`,
		DataPlanes: AppliesToAll,
		Run:        runRouteBackendInvalid,
	})
	Register(&Check{
		Code: "AGP208", Severity: SeverityWarning, Category: CategoryReferences,
		Title: "cross-namespace XBackend reference without a ReferenceGrant",
		Explanation: `An HTTPRoute rule sends traffic to an XBackend in another namespace, and no
ReferenceGrant in that namespace allows HTTPRoutes of the route's namespace to refer
to XBackends. Gateway API requires such a grant for every cross-namespace reference,
but the reference controller checks ReferenceGrants only for Services: it routes to
the XBackend anyway (docs/semantics.md#referencegrant). Anyone who can write routes in the
route's
namespace can expose another team's MCP server through the Gateway.`,
		Fix: `Add a ReferenceGrant in the XBackend's namespace (from: HTTPRoute in the route's
namespace, to: group agentic.networking.x-k8s.io, kind XBackend), or move the route
next to the XBackend.`,
		DataPlanes: AppliesToAgentic,
		Run:        runXBackendGrant,
	})
	Register(&Check{
		Code: "AGP207", Severity: SeverityWarning, Category: CategoryReferences,
		Title: "route is not attached to its Gateway",
		Explanation: `The HTTPRoute names a Gateway that exists, but no listener of it accepts the route: the
listener's allowedRoutes does not admit the route's namespace or kind, no hostname
intersects, or the parentRef's sectionName or port selects no listener. The route
carries no traffic, and any policy written for the backends behind it protects an
unreachable path.`,
		Fix: `Label the route's namespace for the listener's selector (or widen allowedRoutes), align
the route's hostnames with the listener's, or correct the parentRef's sectionName/port.`,
		DataPlanes: AppliesToAll,
		Run:        runRouteNotAttached,
	})
}

// graph is the model's topology graph, built once.
func graph(ctx *Context) *topology.Graph {
	return ctx.Model.Graph()
}

func runGraphProblems(ctx *Context) []Finding {
	var out []Finding
	origins := originsByRef(ctx)
	problems := graph(ctx).Problems()
	for i := range problems {
		p := &problems[i]
		o, ok := origins[p.Object]
		if !ok {
			continue
		}
		f := ctx.Blame(o, p.Field)
		f.Quoted = &Quoted{Problem: p} // the message is render's sentence of p
		out = append(out, f)
	}
	return out
}

func originsByRef(ctx *Context) map[topology.Ref]snapshot.Origin {
	return Memo(ctx, "originsByRef", func() map[topology.Ref]snapshot.Origin {
		m := map[topology.Ref]snapshot.Origin{}
		for _, g := range ctx.Snapshot.Gateways {
			m[topology.GatewayRef(g.Namespace, g.Name)] = g.Origin
		}
		for _, r := range ctx.Snapshot.HTTPRoutes {
			m[topology.HTTPRouteRef(r.Namespace, r.Name)] = r.Origin
		}
		// A ListenerSet listener's allowedRoutes selector problem names the ListenerSet.
		for _, ls := range ctx.Snapshot.ListenerSets {
			m[topology.Ref{Group: gwapiv1.GroupName, Kind: "ListenerSet", Namespace: ls.Namespace, Name: ls.Name}] = ls.Origin
		}
		return m
	})
}

// routeBackend is a backendRef of a route rule, with what resolving it found.
type routeBackend struct {
	route  *snapshot.HTTPRoute
	target topology.BackendTarget
	// problem is why the backendRef fails (nil when it does not); for a rule without a
	// backendRef of weight above 0 (target.Kind None), the first failing one's, at index
	// ruleRef of the rule's backendRefs (-1 otherwise).
	problem *topology.BackendProblem
	ruleRef int
}

// routeBackends lists the backendRefs of attached routes that do not resolve, once per
// (route, backendRef), in route and field order.
func routeBackends(ctx *Context) []routeBackend {
	return Memo(ctx, "routeBackends", func() []routeBackend {
		g := graph(ctx)
		type key struct {
			route, field string
			problem      topology.BackendProblem
		}
		seen := map[key]bool{}
		var out []routeBackend
		for _, gw := range g.Gateways() {
			for _, p := range g.Paths(topology.GatewayRef(gw.Namespace, gw.Name)) {
				rb := routeBackend{route: p.Route, target: p.Backend, problem: p.Backend.Problem, ruleRef: -1}
				if p.Backend.Kind == topology.BackendNone && p.RuleProblem != nil && p.RuleProblem.Backend != nil {
					rb.problem, rb.ruleRef = p.RuleProblem.Backend, p.RuleProblem.BackendRef
				}
				if (rb.problem == nil && p.Backend.Assumed.Why == "") || p.Backend.Field == "" {
					continue
				}
				// A route on Gateways of two data planes can have a problem on each.
				k := key{route: p.Route.Namespace + "/" + p.Route.Name, field: p.Backend.Field}
				if rb.problem != nil {
					k.problem = *rb.problem
				}
				if seen[k] {
					continue
				}
				seen[k] = true
				out = append(out, rb)
			}
		}
		sort.SliceStable(out, func(i, j int) bool {
			a, b := out[i], out[j]
			if a.route != b.route {
				return a.route.Namespace+"/"+a.route.Name < b.route.Namespace+"/"+b.route.Name
			}
			return a.target.Field < b.target.Field
		})
		return out
	})
}

func runRouteMissing(ctx *Context) []Finding {
	ix := objects(ctx)
	var out []Finding
	for _, r := range ctx.Snapshot.HTTPRoutes {
		for i, pr := range r.Spec.ParentRefs {
			if !isGatewayParent(pr) {
				continue
			}
			ns := r.Namespace
			if pr.Namespace != nil && *pr.Namespace != "" {
				ns = string(*pr.Namespace)
			}
			if ix.has("Gateway", ns, string(pr.Name)) {
				continue
			}
			f := ctx.Blame(r.Origin, fmt.Sprintf("spec.parentRefs[%d].name", i))
			f.Message = missingMessage(ctx, "Gateway", ns, string(pr.Name), "the route carries no traffic through it")
			out = append(out, f)
		}
	}
	// Backend existence is checked here from the snapshot, for every route (attached or
	// not), rather than from the graph's resolution, so that files (a part of a cluster)
	// and a whole cluster are told apart by the input's origin alone.
	where, consequence := "in the cluster", "the data plane answers every request of this rule with HTTP 500"
	if ctx.FromFilesOnly() {
		where = "in the input files (it may be defined outside them)"
		consequence = "if it does not exist, " + consequence
	}
	services := map[string]bool{}
	for _, svc := range ctx.Snapshot.Services {
		services[svc.Namespace+"/"+svc.Name] = true
	}
	for _, r := range ctx.Snapshot.HTTPRoutes {
		for i, rule := range r.Spec.Rules {
			for j, br := range rule.BackendRefs {
				ns := r.Namespace
				if br.Namespace != nil && *br.Namespace != "" {
					ns = string(*br.Namespace)
				}
				name := string(br.Name)
				kind := "Service"
				if br.Kind != nil && *br.Kind != "" {
					kind = string(*br.Kind)
				}
				var missing string
				switch {
				case kind == "Service" && (br.Group == nil || *br.Group == "" || *br.Group == "core"):
					if !services[ns+"/"+name] {
						missing = fmt.Sprintf("Service %s/%s", ns, name)
					}
				case kind == agentic.KindXBackend:
					xb := ix.backends[ns+"/"+name]
					switch {
					case xb == nil:
						missing = fmt.Sprintf("XBackend %s/%s", ns, name)
					case xb.Spec.MCP.ServiceName != nil && !services[ns+"/"+*xb.Spec.MCP.ServiceName]:
						missing = fmt.Sprintf("Service %s/%s of XBackend %s/%s", ns, *xb.Spec.MCP.ServiceName, ns, name)
					}
				}
				if missing == "" {
					continue
				}
				f := ctx.Blame(r.Origin, fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j))
				f.Message = fmt.Sprintf("%s is not %s: %s", missing, where, consequence)
				out = append(out, f)
			}
		}
	}
	return out
}

// backendRefUnusable reports whether AGP206 reports p: a backendRef the data plane
// cannot use (RefNotPermitted, InvalidKind); the missing objects are AGP205's.
func backendRefUnusable(p *topology.BackendProblem) bool {
	if p == nil {
		return false
	}
	switch p.Why {
	case topology.BrokenRefNotPermitted, topology.BrokenXBackendKind, topology.BrokenKindUnsupported:
		return true
	}
	return false
}

func isGatewayParent(pr gwapiv1.ParentReference) bool {
	g, k := snapshot.GatewayGroup, "Gateway"
	if pr.Group != nil {
		g = string(*pr.Group)
	}
	if pr.Kind != nil {
		k = string(*pr.Kind)
	}
	return g == snapshot.GatewayGroup && k == "Gateway"
}

func runRouteBackendInvalid(ctx *Context) []Finding {
	var out []Finding
	for _, rb := range routeBackends(ctx) {
		if !backendRefUnusable(rb.problem) {
			continue
		}
		f := ctx.Blame(rb.route.Origin, rb.target.Field)
		if rb.ruleRef >= 0 {
			f.Message = fmt.Sprintf("route rule answers 500: backendRefs[%d]: ", rb.ruleRef)
		}
		// render/lintout writes the problem's sentence (render.BackendProblemText).
		f.Quoted = &Quoted{Backend: rb.problem, After: ": the data plane answers every request of this rule with HTTP 500"}
		if rb.problem.Why == topology.BrokenRefNotPermitted && ctx.FromFilesOnly() {
			f.Quoted.After += " (if the ReferenceGrant is defined outside the input files, lint them together)"
		}
		out = append(out, f)
	}
	return out
}

func runRouteNotAttached(ctx *Context) []Finding {
	g := graph(ctx)
	ix := objects(ctx)
	var out []Finding
	for _, r := range ctx.Snapshot.HTTPRoutes {
		atts := g.AttachmentsOfRoute(topology.HTTPRouteRef(r.Namespace, r.Name))
		for i, pr := range r.Spec.ParentRefs {
			if !isGatewayParent(pr) {
				continue
			}
			ns := r.Namespace
			if pr.Namespace != nil && *pr.Namespace != "" {
				ns = string(*pr.Namespace)
			}
			gw := ix.gateways[ns+"/"+string(pr.Name)]
			if gw == nil {
				continue // AGP205
			}
			accepted := false
			var reason *topology.Attachment
			for _, a := range atts {
				if a.Gateway != gw {
					continue
				}
				if a.Accepted {
					accepted = true
					break
				}
				if reason == nil && (a.ParentRef == i || a.ParentRef < 0) {
					reason = &a
				}
			}
			if accepted {
				continue
			}
			f := ctx.Blame(r.Origin, fmt.Sprintf("spec.parentRefs[%d]", i))
			f.Message = fmt.Sprintf("the route does not attach to Gateway %s/%s (", ns, pr.Name)
			after := "): it carries no traffic through it"
			if reason == nil {
				f.Message += "no listener of the Gateway accepts it" + after
			} else {
				f.Quoted = &Quoted{Attachment: reason, After: after}
			}
			out = append(out, f)
		}
	}
	return out
}

func runXBackendGrant(ctx *Context) []Finding {
	var out []Finding
	for _, r := range ctx.Snapshot.HTTPRoutes {
		for i, rule := range r.Spec.Rules {
			for j, br := range rule.BackendRefs {
				if br.Kind == nil || string(*br.Kind) != agentic.KindXBackend || br.Namespace == nil ||
					*br.Namespace == "" || string(*br.Namespace) == r.Namespace {
					continue
				}
				ns := string(*br.Namespace)
				if xbackendGranted(ctx, r.Namespace, ns, string(br.Name)) {
					continue
				}
				f := ctx.Blame(r.Origin, fmt.Sprintf("spec.rules[%d].backendRefs[%d]", i, j))
				f.Message = fmt.Sprintf("HTTPRoute %s/%s refers to XBackend %s/%s without a ReferenceGrant in namespace %s: Gateway API forbids it, but the reference controller routes to it anyway",
					r.Namespace, r.Name, ns, br.Name, ns)
				if ctx.FromFilesOnly() {
					f.Message += " (if the ReferenceGrant is defined outside the input files, lint them together)"
				}
				out = append(out, f)
			}
		}
	}
	return out
}

func xbackendGranted(ctx *Context, fromNS, toNS, name string) bool {
	for _, rg := range ctx.Snapshot.ReferenceGrants {
		if rg.Namespace != toNS {
			continue
		}
		from := false
		for _, f := range rg.Spec.From {
			if string(f.Namespace) == fromNS && string(f.Group) == snapshot.GatewayGroup && string(f.Kind) == "HTTPRoute" {
				from = true
			}
		}
		if !from {
			continue
		}
		for _, t := range rg.Spec.To {
			if agentic.IsGroup(string(t.Group)) && string(t.Kind) == agentic.KindXBackend && (t.Name == nil || string(*t.Name) == name) {
				return true
			}
		}
	}
	return false
}
