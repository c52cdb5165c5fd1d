package lint

import (
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// AgenticControllerName is the GatewayClass controllerName of the kube-agentic-networking
// reference controller (pkg/constants/controller.go).
const AgenticControllerName = "sigs.k8s.io/kube-agentic-networking-controller"

// agenticScope is the text the checks specific to the reference data plane add to their
// explanation.
const agenticScope = `

Applies to Gateways the kube-agentic-networking reference data plane serves: those whose
GatewayClass names the controller sigs.k8s.io/kube-agentic-networking-controller, or,
when the GatewayClass is not in the input, those an XAccessPolicy targets or whose routes
send traffic to an XBackend. Other data planes (Istio, Envoy Gateway under Kuadrant)
route as Gateway API says, so lint does not report it for routes only they serve.`

// agenticGateways says, per Gateway, whether the reference data plane serves it (see
// agenticScope), once per context.
func agenticGateways(ctx *Context) map[*snapshot.Gateway]bool {
	return Memo(ctx, "agenticGateways", func() map[*snapshot.Gateway]bool {
		classes := map[string]string{}
		for _, c := range ctx.Snapshot.GatewayClasses {
			classes[c.Name] = string(c.Spec.ControllerName)
		}
		g := graph(ctx)
		out := map[*snapshot.Gateway]bool{}
		for _, gw := range ctx.Snapshot.Gateways {
			if ctrl, ok := classes[string(gw.Spec.GatewayClassName)]; ok {
				out[gw] = ctrl == AgenticControllerName
				continue
			}
			ref := topology.GatewayRef(gw.Namespace, gw.Name)
			agentic := len(ctx.Targets.AccessPolicies[ref]) > 0
			for _, p := range g.Paths(ref) {
				if agentic {
					break
				}
				agentic = p.Backend.Kind == topology.BackendXBackend
			}
			out[gw] = agentic
		}
		return out
	})
}

// servedByAgentic reports whether a route is attached to a Gateway the reference data
// plane serves.
func servedByAgentic(ctx *Context, r *snapshot.HTTPRoute) bool {
	agentic := agenticGateways(ctx)
	for _, a := range graph(ctx).AttachmentsOfRoute(topology.HTTPRouteRef(r.Namespace, r.Name)) {
		if a.Accepted && agentic[a.Gateway] {
			return true
		}
	}
	return false
}
