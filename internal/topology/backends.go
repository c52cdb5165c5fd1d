package topology

import (
	"fmt"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/snapshot"
)

// Backend kinds of a BackendTarget.
const (
	BackendXBackend    = "XBackend"
	BackendService     = "Service"
	BackendUnsupported = "Unsupported"
	// BackendOther is a kind of the Gateway's data plane other than Service and XBackend
	// (Istio's Hostname, Envoy Gateway's Backend): it reaches a backend without
	// backend-level policies.
	BackendOther = "Other"
	// BackendNone marks the Path of a rule that has no backendRef with a weight above 0.
	BackendNone = "None"
)

// Assumption is what agpol assumes of a backend object the input cannot show, as data
// (docs/routing.md); render writes its sentence. The zero Assumption assumes nothing.
type Assumption struct {
	// Why is an Assumed* constant, "" when nothing is assumed.
	Why string
	// Ref is the object assumed to exist (an XBackend, a Service), or, for
	// AssumedKindSupported, the backendRef's group (as written) and kind.
	Ref Ref
	// Of is the XBackend whose spec.mcp.serviceName names the Service Ref (Kind set), the
	// zero Ref otherwise.
	Of Ref
	// DataPlane is the data plane of the Gateway (AssumedKindSupported).
	DataPlane DataPlane
}

// What agpol assumes of a backend object (Assumption.Why).
const (
	AssumedXBackend       = "xbackend"        // an XBackend absent from manifests given as files exists
	AssumedService        = "service"         // a Service of a namespace the input carries no Service of exists
	AssumedServiceRefused = "service-refused" // a Service exists: a live read was refused the Services of its namespace
	AssumedKindSupported  = "kind-supported"  // a backend kind agpol does not know of the data plane is supported
)

// resolveBackends resolves a rule's backendRefs as data plane p does. The reference
// translator (backend.go isServiceRef, fetchBackend, fetchServiceBackend; httproute.go
// buildHTTPRouteAction; docs/semantics.md#routing-rules):
//   - kind nil/""/"Service" with group nil/""/"core" → Service in backendRef.namespace or
//     the route's namespace; across namespaces it needs a ReferenceGrant in the Service's
//     namespace from HTTPRoute in the route's namespace to Service (optionally by name);
//   - otherwise kind nil or "XBackend" → XBackend in backendRef.namespace or the route's
//     namespace, group not checked, no ReferenceGrant check; the XBackend's
//     spec.mcp.serviceName Service must exist;
//   - any other kind → unsupported.
//
// Other data planes take Services the same way, never XBackends, and the kinds of their
// own that backendKindOf lists (BackendOther); a kind of a data plane agpol does not
// model is assumed supported, and says so.
//
// A missing XBackend is a failure only in a complete snapshot (a whole live cluster); in
// manifests given as files it is assumed to exist (BackendTarget.Assumed). A missing
// Service is a failure where agpol knows the Services of its namespace (missingService).
//
// The first backendRef that fails (weight 0 included) makes the whole rule answer 500,
// as does a rule with no backendRef of weight above 0. Weight defaults to 1.
func (g *Graph) resolveBackends(ri *routeInfo, rl *ruleInfo, p DataPlane) ruleBackends {
	var out ruleBackends
	routeNS := ri.route.Namespace
	for i, br := range rl.refs {
		b := br.BackendRef
		t := BackendTarget{Weight: 1, Field: fmt.Sprintf("spec.rules[%d].backendRefs[%d]", rl.index, i)}
		if b.Weight != nil {
			t.Weight = *b.Weight
		}
		kind, group := "", ""
		if b.Kind != nil {
			kind = string(*b.Kind)
		}
		if b.Group != nil {
			group = string(*b.Group)
		}
		t.Group = group
		ns := routeNS
		if b.Namespace != nil {
			ns = string(*b.Namespace)
		}
		name := string(b.Name)
		xbackend := kind == "" || kind == agentic.KindXBackend
		switch {
		case (kind == "" || kind == "Service") && (group == "" || group == "core"):
			t.Kind, t.Ref = BackendService, ServiceRef(ns, name)
			t.Service = g.services[nsName{ns, name}]
			switch {
			case ns != routeNS && !g.referenceGranted(routeNS, ns, name):
				t.Problem = &BackendProblem{Why: BrokenRefNotPermitted, Ref: t.Ref, Route: ri.ref}
			case t.Service == nil:
				t.Problem, t.Assumed = g.missingService(ns, name, Ref{})
			}
		case xbackend && p == DataPlaneAgentic:
			t.Kind, t.Ref = BackendXBackend, XBackendRef(ns, name)
			t.XBackend = g.xbackends[nsName{ns, name}]
			switch {
			case t.XBackend == nil && !g.snap.Complete:
				t.Assumed = Assumption{Why: AssumedXBackend, Ref: t.Ref}
			case t.XBackend == nil:
				t.Problem = &BackendProblem{Why: BrokenXBackendNotFound, Ref: t.Ref}
			case t.XBackend.Spec.MCP.ServiceName != nil && g.services[nsName{ns, *t.XBackend.Spec.MCP.ServiceName}] == nil:
				t.Problem, t.Assumed = g.missingService(ns, *t.XBackend.Spec.MCP.ServiceName, t.Ref)
			}
		default:
			t.Kind = BackendUnsupported
			if kind == "" {
				kind = agentic.KindXBackend
			}
			t.Ref = Ref{Group: NormalizeGroup(group), Kind: kind, Namespace: ns, Name: name}
			supported, known := backendKindOf(p, group, kind)
			switch {
			case supported:
				t.Kind = BackendOther
			case !known && !xbackend:
				t.Kind = BackendOther
				t.Assumed = Assumption{Why: AssumedKindSupported, Ref: Ref{Group: group, Kind: kind}, DataPlane: p}
			case xbackend:
				t.Problem = &BackendProblem{Why: BrokenXBackendKind, Ref: t.Ref, DataPlane: p}
			default:
				t.Problem = &BackendProblem{Why: BrokenKindUnsupported, Ref: t.Ref}
			}
		}
		if t.Kind == BackendOther {
			t.Name = t.Ref.Kind + " " + t.Ref.Namespace + "/" + t.Ref.Name
		} else {
			t.Name = t.Kind + " " + t.Ref.Namespace + "/" + t.Ref.Name
		}
		if t.Problem != nil && out.problem == nil {
			out.problem = &RuleProblem{Why: RuleBackendFails, BackendRef: i, Backend: t.Problem}
		}
		if t.Weight != 0 {
			out.backends = append(out.backends, t)
		}
	}
	if out.problem == nil && len(out.backends) == 0 {
		out.problem = &RuleProblem{Why: RuleNoWeight}
	}
	return out
}

// ServicesResource is the resource name of Services in a live read's warnings.
const ServicesResource = "services"

// missingService says what a backendRef to a Service absent from the input meets (of is
// the XBackend whose Service it is, zero for a Service backendRef): a 500
// (BackendNotFound, Gateway API HTTPBackendRef: "the route rule... must return a 500")
// where agpol knows the Services of the namespace (a complete snapshot, or an input that
// carries Services of that namespace); otherwise the Service is assumed to exist, as when
// a live read was refused the Services of the namespace, and assumed says so
// (docs/routing.md).
func (g *Graph) missingService(ns, name string, of Ref) (problem *BackendProblem, assumed Assumption) {
	svc := ServiceRef(ns, name)
	switch {
	case g.snap.Complete:
		return &BackendProblem{Why: BrokenServiceNotFound, Ref: svc, Of: of}, Assumption{}
	case g.servicesRefusedIn(ns):
		return nil, Assumption{Why: AssumedServiceRefused, Ref: svc, Of: of}
	case g.serviceNamespaces[ns]:
		return &BackendProblem{Why: BrokenServiceNotInInput, Ref: svc, Of: of}, Assumption{}
	}
	return nil, Assumption{Why: AssumedService, Ref: svc, Of: of}
}

// servicesRefusedIn reports whether a live read was refused the Services of namespace ns.
func (g *Graph) servicesRefusedIn(ns string) bool {
	for _, w := range g.servicesRefused {
		if w.Covers(ns) {
			return true
		}
	}
	return false
}

// AssumedBackend says what agpol assumes of a backend a request names (not one routing
// chose): of XBackend ref, that its Service (spec.mcp.serviceName) exists; of Service ref,
// that it exists; nothing when the input holds it or shows it missing. The same
// assumption as a routed backendRef's (BackendTarget.Assumed, missingService).
func (g *Graph) AssumedBackend(ref Ref) Assumption {
	switch {
	case refIs(ref, "", "Service"):
		if g.services[nsName{ref.Namespace, ref.Name}] != nil {
			return Assumption{}
		}
		_, assumed := g.missingService(ref.Namespace, ref.Name, Ref{})
		return assumed
	case refIs(ref, agentic.GroupName, agentic.KindXBackend):
		xb := g.xbackends[nsName{ref.Namespace, ref.Name}]
		if xb == nil || xb.Spec.MCP.ServiceName == nil || g.services[nsName{ref.Namespace, *xb.Spec.MCP.ServiceName}] != nil {
			return Assumption{}
		}
		_, assumed := g.missingService(ref.Namespace, *xb.Spec.MCP.ServiceName, XBackendRef(ref.Namespace, ref.Name))
		return assumed
	}
	return Assumption{}
}

// backendsOn returns a rule's backends as data plane p resolves them.
func (g *Graph) backendsOn(ri *routeInfo, rl *ruleInfo, p DataPlane) *ruleBackends {
	if p == DataPlaneAgentic || rl.redirect {
		return &rl.agentic
	}
	if b, ok := rl.other[p]; ok {
		return b
	}
	if rl.other == nil {
		rl.other = map[DataPlane]*ruleBackends{}
	}
	b := g.resolveBackends(ri, rl, p)
	rl.other[p] = &b
	return &b
}

// referenceGranted reports whether a ReferenceGrant in toNS lets HTTPRoutes in fromNS
// reference the Service toNS/name (referencegrant.go AllowedByReferenceGrant: from
// group/kind/namespace exact, to group "" and kind Service, to.name optional).
func (g *Graph) referenceGranted(fromNS, toNS, name string) bool {
	if fromNS == toNS {
		return true
	}
	for _, rg := range g.grants[toNS] {
		fromOK := false
		for _, f := range rg.Spec.From {
			if string(f.Namespace) == fromNS && string(f.Group) == gwapiv1.GroupName && string(f.Kind) == "HTTPRoute" {
				fromOK = true
				break
			}
		}
		if !fromOK {
			continue
		}
		for _, t := range rg.Spec.To {
			if string(t.Group) == "" && string(t.Kind) == "Service" && (t.Name == nil || string(*t.Name) == name) {
				return true
			}
		}
	}
	return false
}

// rulePaths returns the paths of one rule under one listener.
func rulePaths(gw *snapshot.Gateway, listener string, ri *routeInfo, rl *ruleInfo, rb *ruleBackends) []Path {
	if rl.redirect {
		return nil
	}
	base := Path{Gateway: gw, Listener: listener, Route: ri.route, RuleIndex: rl.index, RuleName: rl.name, RuleProblem: rb.problem}
	if len(rb.backends) == 0 {
		p := base
		p.Backend = BackendTarget{Kind: BackendNone, Field: fmt.Sprintf("spec.rules[%d].backendRefs", rl.index)}
		return []Path{p}
	}
	out := make([]Path, len(rb.backends))
	for i, b := range rb.backends {
		out[i] = base
		out[i].Backend = b
	}
	return out
}
