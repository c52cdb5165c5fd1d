package topology

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// ParentGateway is the Gateway a route's parentRef names, as Gateway API defaults it:
// group gateway.networking.k8s.io, kind Gateway, the route's namespace. It is false
// for a parentRef to anything but a Gateway.
func ParentGateway(p gwapiv1.ParentReference, routeNS string) (Ref, bool) {
	if p.Group != nil && string(*p.Group) != gwapiv1.GroupName {
		return Ref{}, false
	}
	if p.Kind != nil && string(*p.Kind) != "Gateway" {
		return Ref{}, false
	}
	ns := routeNS
	if p.Namespace != nil {
		ns = string(*p.Namespace)
	}
	return GatewayRef(ns, string(p.Name)), true
}
