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
	// BackendNone marks the Path of a rule that has no backendRef with a weight above 0.
	BackendNone = "None"
)

// resolveBackends resolves a rule's backendRefs as the reference translator does
// (backend.go isServiceRef, fetchBackend, fetchServiceBackend; httproute.go
// buildHTTPRouteAction, semantics-agentic.md §12):
//   - kind nil/""/"Service" with group nil/""/"core" → Service in backendRef.namespace or
//     the route's namespace; across namespaces it needs a ReferenceGrant in the Service's
//     namespace from HTTPRoute in the route's namespace to Service (optionally by name);
//   - otherwise kind nil or "XBackend" → XBackend in backendRef.namespace or the route's
//     namespace, group not checked, no ReferenceGrant check; the XBackend's
//     spec.mcp.serviceName Service must exist;
//   - any other kind → unsupported.
//
// A missing Service or XBackend is a failure only in a complete snapshot (a whole live
// cluster); in manifests given as files it is assumed to exist (BackendTarget.Assumed).
//
// The first backendRef that fails (weight 0 included) makes the whole rule answer 500,
// as does a rule with no backendRef of weight above 0. Weight defaults to 1.
func (g *Graph) resolveBackends(ri *routeInfo, rl *ruleInfo, refs []gwapiv1.HTTPBackendRef) {
	routeNS := ri.route.Namespace
	for i, br := range refs {
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
		switch {
		case (kind == "" || kind == "Service") && (group == "" || group == "core"):
			t.Kind, t.Ref = BackendService, ServiceRef(ns, name)
			t.Service = g.services[nsName{ns, name}]
			switch {
			case ns != routeNS && !g.referenceGranted(routeNS, ns, name):
				t.Problem = fmt.Sprintf("cross-namespace reference from HTTPRoute %s to Service %s/%s is not permitted by a ReferenceGrant in namespace %s (RefNotPermitted)", ri.key, ns, name, ns)
			case t.Service == nil && !g.snap.Complete:
				t.Assumed = fmt.Sprintf("Service %s/%s is not in the input; assumed to exist", ns, name)
			case t.Service == nil:
				t.Problem = fmt.Sprintf("Service %s/%s not found (BackendNotFound)", ns, name)
			}
		case kind == "" || kind == agentic.KindXBackend:
			t.Kind, t.Ref = BackendXBackend, XBackendRef(ns, name)
			t.XBackend = g.xbackends[nsName{ns, name}]
			switch {
			case t.XBackend == nil && !g.snap.Complete:
				t.Assumed = fmt.Sprintf("XBackend %s/%s is not in the input; assumed to exist", ns, name)
			case t.XBackend == nil:
				t.Problem = fmt.Sprintf("XBackend %s/%s not found (BackendNotFound)", ns, name)
			case t.XBackend.Spec.MCP.ServiceName != nil && g.services[nsName{ns, *t.XBackend.Spec.MCP.ServiceName}] == nil:
				svc := *t.XBackend.Spec.MCP.ServiceName
				if g.snap.Complete {
					t.Problem = fmt.Sprintf("Service %s/%s of XBackend %s/%s not found (BackendNotFound)", ns, svc, ns, name)
				} else {
					t.Assumed = fmt.Sprintf("Service %s/%s of XBackend %s/%s is not in the input; assumed to exist", ns, svc, ns, name)
				}
			}
		default:
			t.Kind = BackendUnsupported
			t.Ref = Ref{Group: NormalizeGroup(group), Kind: kind, Namespace: ns, Name: name}
			t.Problem = fmt.Sprintf("unsupported backend kind %s (InvalidKind)", kind)
		}
		t.Name = t.Kind + " " + t.Ref.Namespace + "/" + t.Ref.Name
		if t.Problem != "" && rl.problem == "" {
			rl.problem = fmt.Sprintf("route rule answers 500: backendRefs[%d]: %s", i, t.Problem)
		}
		rl.all = append(rl.all, t)
		if t.Weight != 0 {
			rl.backends = append(rl.backends, t)
		}
	}
	if rl.problem == "" && len(rl.backends) == 0 {
		rl.problem = "route rule answers 500: no backendRef with a weight above 0"
	}
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
func rulePaths(gw *snapshot.Gateway, listener string, ri *routeInfo, rl *ruleInfo) []Path {
	if rl.redirect {
		return nil
	}
	base := Path{Gateway: gw, Listener: listener, Route: ri.route, RuleIndex: rl.index, RuleName: rl.name, RuleProblem: rl.problem}
	if len(rl.backends) == 0 {
		p := base
		p.Backend = BackendTarget{Kind: BackendNone, Problem: rl.problem, Field: fmt.Sprintf("spec.rules[%d].backendRefs", rl.index)}
		return []Path{p}
	}
	out := make([]Path, len(rl.backends))
	for i, b := range rl.backends {
		out[i] = base
		out[i].Backend = b
	}
	return out
}
