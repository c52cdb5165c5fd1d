package lint

import (
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Which data planes a check applies to (Check.DataPlanes).
const (
	// AppliesToAll: the check is about the objects themselves, whatever serves them.
	AppliesToAll = "all"
	// AppliesToAgentic: the check is about what the kube-agentic-networking reference
	// data plane does, and reports only objects on Gateways it serves.
	AppliesToAgentic = "agentic"
	// AppliesToKuadrant: the check is about Kuadrant's AuthPolicy, which Kuadrant
	// enforces on Istio and Envoy Gateway.
	AppliesToKuadrant = "kuadrant"
)

// dataPlaneText is how lint --explain and the docs say which data planes a check applies to.
var dataPlaneText = map[string]string{
	AppliesToAll: "every data plane: the check is about the objects themselves.",
	AppliesToAgentic: `Gateways the kube-agentic-networking reference data plane serves: those whose
GatewayClass names the controller sigs.k8s.io/kube-agentic-networking-controller (or that
dataPlanes in .agpol.yaml or --data-plane maps to agentic), or, when the GatewayClass is
not in the input, those an XAccessPolicy targets or whose routes send traffic to an
XBackend. Other data planes (Istio, Envoy Gateway under Kuadrant) route as Gateway API
says and do not enforce XAccessPolicies.`,
	AppliesToKuadrant: "Gateways Kuadrant serves (Istio, Envoy Gateway): the check is about AuthPolicy.",
}

// DataPlaneText says which data planes a check applies to, in a sentence or two.
func (c *Check) DataPlaneText() string { return dataPlaneText[c.DataPlanes] }

// servedByAgentic reports whether a route is attached to a Gateway the reference data
// plane serves (topology.ClassifyGateways).
func servedByAgentic(ctx *Context, r *snapshot.HTTPRoute) bool {
	g := graph(ctx)
	for _, a := range g.AttachmentsOfRoute(topology.HTTPRouteRef(r.Namespace, r.Name)) {
		if a.Accepted && g.DataPlane(a.Gateway).Agentic() {
			return true
		}
	}
	return false
}
