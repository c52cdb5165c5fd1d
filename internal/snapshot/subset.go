package snapshot

import (
	"github.com/agpol/agpol/internal/apis/agentic"
	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// Subset is s with only the objects of the kinds with a CRD (GatewayClass, Gateway,
// HTTPRoute, ReferenceGrant, ListenerSet, XBackend, XAccessPolicy, AuthPolicy) that keep
// names, in their order; the core and input-only kinds and everything loading noticed
// are kept whole. The objects are shared with s. keep is asked with the object's group
// (agentic aliases folded), kind, namespace and name.
func (s *Snapshot) Subset(keep func(Ref) bool) *Snapshot {
	out := *s
	out.GatewayClasses = subset(s.GatewayClasses, keep, func(o *GatewayClass) Ref { return Ref{GatewayGroup, "GatewayClass", "", o.Name} })
	out.Gateways = subset(s.Gateways, keep, func(o *Gateway) Ref { return Ref{GatewayGroup, "Gateway", o.Namespace, o.Name} })
	out.HTTPRoutes = subset(s.HTTPRoutes, keep, func(o *HTTPRoute) Ref { return Ref{GatewayGroup, "HTTPRoute", o.Namespace, o.Name} })
	out.ReferenceGrants = subset(s.ReferenceGrants, keep, func(o *ReferenceGrant) Ref {
		return Ref{GatewayGroup, "ReferenceGrant", o.Namespace, o.Name}
	})
	out.ListenerSets = subset(s.ListenerSets, keep, func(o *ListenerSet) Ref { return Ref{GatewayGroup, "ListenerSet", o.Namespace, o.Name} })
	out.XBackends = subset(s.XBackends, keep, func(o *XBackend) Ref {
		return Ref{agentic.GroupName, agentic.KindXBackend, o.Namespace, o.Name}
	})
	out.XAccessPolicies = subset(s.XAccessPolicies, keep, func(o *XAccessPolicy) Ref {
		return Ref{agentic.GroupName, agentic.KindXAccessPolicy, o.Namespace, o.Name}
	})
	out.AuthPolicies = subset(s.AuthPolicies, keep, func(o *AuthPolicy) Ref {
		return Ref{kuadrantv1.GroupName, kuadrantv1.KindAuthPolicy, o.Namespace, o.Name}
	})
	return &out
}

func subset[T any](objs []*T, keep func(Ref) bool, ref func(*T) Ref) []*T {
	if objs == nil {
		return nil
	}
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		if keep(ref(o)) {
			out = append(out, o)
		}
	}
	return out
}
