package topology

import (
	"fmt"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/snapshot"
)

// DataPlane names the implementation that programs a Gateway: it decides how routes
// match, which backend kinds exist, and whether XAccessPolicies are enforced at all.
type DataPlane string

const (
	// DataPlaneAgentic is the kube-agentic-networking reference data plane: Envoy as its
	// translator programs it. XAccessPolicies are enforced only here.
	DataPlaneAgentic DataPlane = "agentic"
	// DataPlaneIstio is Istio's Gateway API implementation (Kuadrant's usual data plane).
	DataPlaneIstio DataPlane = "istio"
	// DataPlaneEnvoyGateway is Envoy Gateway (Kuadrant's other data plane).
	DataPlaneEnvoyGateway DataPlane = "envoy-gateway"
	// DataPlaneGatewayAPI is any other implementation: routed as Gateway API specifies.
	DataPlaneGatewayAPI DataPlane = "gateway-api"
)

// DataPlanes are the data planes a GatewayClass can be mapped to, in the order help lists them.
var DataPlanes = []DataPlane{DataPlaneAgentic, DataPlaneIstio, DataPlaneEnvoyGateway, DataPlaneGatewayAPI}

// AgenticControllerName is the GatewayClass controllerName of the kube-agentic-networking
// reference controller (pkg/constants/controller.go).
const AgenticControllerName = "sigs.k8s.io/kube-agentic-networking-controller"

// controllerPlanes maps the controllerName of the implementations agpol knows.
var controllerPlanes = map[string]DataPlane{
	AgenticControllerName:                           DataPlaneAgentic,
	"istio.io/gateway-controller":                   DataPlaneIstio,
	"openshift.io/gateway-controller/v1":            DataPlaneIstio, // OpenShift Service Mesh (Istio)
	"gateway.envoyproxy.io/gatewayclass-controller": DataPlaneEnvoyGateway,
}

// ParseDataPlane reads a data plane name.
func ParseDataPlane(s string) (DataPlane, error) {
	for _, p := range DataPlanes {
		if string(p) == s {
			return p, nil
		}
	}
	names := make([]string, len(DataPlanes))
	for i, p := range DataPlanes {
		names[i] = string(p)
	}
	return "", fmt.Errorf("unknown data plane %q: use one of %s", s, strings.Join(names, ", "))
}

// Where agpol learns which data plane serves a Gateway (GatewayDataPlane.From); render
// writes the phrase of each (render.DataPlaneWhy).
const (
	// PlaneFromConfig: the GatewayClass is mapped to the data plane by .agpol.yaml or
	// --data-plane (snapshot.ClassDataPlanes).
	PlaneFromConfig = "config"
	// PlaneFromController: the GatewayClass in the input names a controller agpol knows.
	PlaneFromController = "controller"
	// PlaneFromUnknownController: the GatewayClass names a controller agpol does not
	// model: routed as Gateway API specifies.
	PlaneFromUnknownController = "unknown-controller"
	// PlaneFromHint: the GatewayClass is not in the input, and an XAccessPolicy targets
	// the Gateway or an HTTPRoute of it sends traffic to an XBackend (Hint): assumed the
	// reference data plane.
	PlaneFromHint = "hint"
	// PlaneFromDefault: the GatewayClass is not in the input and nothing hints at the
	// reference data plane: assumed an implementation routing as Gateway API specifies.
	PlaneFromDefault = "default"
)

// GatewayDataPlane is the data plane of one Gateway and how agpol knows it, as data:
// where the answer comes from (From) and the names it needs.
type GatewayDataPlane struct {
	DataPlane DataPlane `json:"dataPlane"`
	// Why is the phrase of where the answer comes from, as text ("GatewayClass agentic
	// names controller …"): the JSON field of describe, written only by render
	// (render.DataPlaneWhy) from the data below, in its view; empty here.
	Why string `json:"why"`
	// From is where the answer comes from: one of the PlaneFrom codes.
	From string `json:"-"`
	// Class is the Gateway's spec.gatewayClassName.
	Class string `json:"-"`
	// Controller is the GatewayClass's controllerName (PlaneFromController,
	// PlaneFromUnknownController).
	Controller string `json:"-"`
	// Hint is the XAccessPolicy that targets the Gateway, or the HTTPRoute of it that
	// sends traffic to an XBackend (PlaneFromHint).
	Hint *Ref `json:"-"`
	// Assumed is true when the GatewayClass is not in the input and agpol inferred the
	// data plane from the objects around the Gateway.
	Assumed bool `json:"assumed,omitempty"`
}

// Agentic reports whether the reference data plane serves the Gateway.
func (d GatewayDataPlane) Agentic() bool { return d.DataPlane == DataPlaneAgentic }

// ClassifyGateways says which data plane serves each Gateway of s:
//   - a GatewayClass named in s.ClassDataPlanes (the user's .agpol.yaml or --data-plane)
//     is that data plane;
//   - a GatewayClass in the input is the data plane of its controllerName, and
//     gateway-api for a controller agpol does not know;
//   - without the GatewayClass, a Gateway that an XAccessPolicy targets or whose routes
//     send traffic to an XBackend is assumed to be the reference data plane's, and any
//     other is assumed to be routed as Gateway API specifies.
func ClassifyGateways(s *snapshot.Snapshot) map[*snapshot.Gateway]GatewayDataPlane {
	out := make(map[*snapshot.Gateway]GatewayDataPlane, len(s.Gateways))
	if len(s.Gateways) == 0 {
		return out
	}
	controllers := make(map[string]string, len(s.GatewayClasses))
	for _, c := range s.GatewayClasses {
		controllers[c.Name] = string(c.Spec.ControllerName)
	}
	var hinted map[nsName]Ref
	for _, gw := range s.Gateways {
		class := string(gw.Spec.GatewayClassName)
		var dp GatewayDataPlane
		if p, ok := s.ClassDataPlanes[class]; ok {
			dp = GatewayDataPlane{DataPlane: DataPlane(p), From: PlaneFromConfig, Class: class}
		} else if ctrl, ok := controllers[class]; ok {
			if p, known := controllerPlanes[ctrl]; known {
				dp = GatewayDataPlane{DataPlane: p, From: PlaneFromController, Class: class, Controller: ctrl}
			} else {
				dp = GatewayDataPlane{DataPlane: DataPlaneGatewayAPI, From: PlaneFromUnknownController, Class: class, Controller: ctrl}
			}
		} else {
			if hinted == nil {
				hinted = agenticHints(s)
			}
			if hint, ok := hinted[nsName{gw.Namespace, gw.Name}]; ok {
				dp = GatewayDataPlane{DataPlane: DataPlaneAgentic, From: PlaneFromHint, Class: class, Hint: &hint, Assumed: true}
			} else {
				dp = GatewayDataPlane{DataPlane: DataPlaneGatewayAPI, From: PlaneFromDefault, Class: class, Assumed: true}
			}
		}
		out[gw] = dp
	}
	return out
}

// agenticHints lists the Gateways that an XAccessPolicy targets or that an HTTPRoute
// attaches to with an XBackend backendRef, with the first such object.
func agenticHints(s *snapshot.Snapshot) map[nsName]Ref {
	out := map[nsName]Ref{}
	add := func(k nsName, hint Ref) {
		if _, ok := out[k]; !ok {
			out[k] = hint
		}
	}
	for _, p := range s.XAccessPolicies {
		for _, t := range p.Spec.TargetRefs {
			if string(t.Kind) == "Gateway" && NormalizeGroup(string(t.Group)) == gwapiv1.GroupName {
				add(nsName{p.Namespace, string(t.Name)}, Ref{Group: agentic.GroupName, Kind: agentic.KindXAccessPolicy, Namespace: p.Namespace, Name: p.Name})
			}
		}
	}
	routes := append([]*snapshot.HTTPRoute(nil), s.HTTPRoutes...)
	sort.SliceStable(routes, func(i, j int) bool {
		return routes[i].Namespace+"/"+routes[i].Name < routes[j].Namespace+"/"+routes[j].Name
	})
	for _, r := range routes {
		if !sendsToXBackend(r) {
			continue
		}
		for _, pr := range r.Spec.ParentRefs {
			if pr.Kind != nil && string(*pr.Kind) != "Gateway" {
				continue
			}
			ns := r.Namespace
			if pr.Namespace != nil {
				ns = string(*pr.Namespace)
			}
			add(nsName{ns, string(pr.Name)}, HTTPRouteRef(r.Namespace, r.Name))
		}
	}
	return out
}

func sendsToXBackend(r *snapshot.HTTPRoute) bool {
	for _, rule := range r.Spec.Rules {
		for _, b := range rule.BackendRefs {
			if b.Kind != nil && string(*b.Kind) == agentic.KindXBackend {
				return true
			}
		}
	}
	return false
}

// backendKindOf says how a data plane takes a backendRef of a kind other than Service
// and XBackend: supported (it reaches a backend agpol does not model further), or not.
// known is false when agpol does not know the data plane's kinds.
func backendKindOf(p DataPlane, group, kind string) (supported, known bool) {
	switch p {
	case DataPlaneIstio:
		return group == "networking.istio.io" && kind == "Hostname", true
	case DataPlaneEnvoyGateway:
		return group == "gateway.envoyproxy.io" && kind == "Backend", true
	case DataPlaneAgentic:
		return false, true
	}
	return false, false
}

// DataPlane returns the data plane that serves gw (see ClassifyGateways).
func (g *Graph) DataPlane(gw *snapshot.Gateway) GatewayDataPlane { return g.planes[gw] }

// DataPlanes is the data plane of every Gateway of the snapshot (ClassifyGateways, run
// once when the graph was built). It must not be changed.
func (g *Graph) DataPlanes() map[*snapshot.Gateway]GatewayDataPlane { return g.planes }
