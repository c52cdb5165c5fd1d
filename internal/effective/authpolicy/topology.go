package authpolicy

import (
	"sort"
	"strconv"
	"strings"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Path is a path through the topology, or a prefix of one: trailing fields are empty
// when the prefix does not reach them.
type Path struct {
	// GatewayClass is the class name; empty when the class is not in the input.
	GatewayClass string `json:"gatewayClass,omitempty"`
	Gateway      string `json:"gateway,omitempty"`  // ns/name
	Listener     string `json:"listener,omitempty"` // listener name
	Route        string `json:"route,omitempty"`    // ns/name
	Rule         string `json:"rule,omitempty"`     // rule name (synthetic rule-N for unnamed rules)
}

// ID is kuadrant-operator's path ID: "class|ns/gw|ns/gw#listener|ns/route|ns/route#rule",
// without the parts the path does not have.
func (p Path) ID() string {
	var parts []string
	if p.GatewayClass != "" {
		parts = append(parts, p.GatewayClass)
	}
	if p.Gateway != "" {
		parts = append(parts, p.Gateway)
	}
	if p.Listener != "" {
		parts = append(parts, p.Gateway+"#"+p.Listener)
	}
	if p.Route != "" {
		parts = append(parts, p.Route)
	}
	if p.Rule != "" {
		parts = append(parts, p.Route+"#"+p.Rule)
	}
	return strings.Join(parts, "|")
}

// String is a readable form: "gateway infra/edge › listener https › route pay/ledger › rule mcp".
func (p Path) String() string {
	return strings.Join(p.readable(), " › ")
}

// StringWithRule is String with the route and rule written as one part, "route " + routeRule,
// so that an answer that names the rule elsewhere ("pay/ledger#mcp", "crm/crm[0]") names it
// the same way here.
func (p Path) StringWithRule(routeRule string) string {
	q := p
	q.Route, q.Rule = "", ""
	parts := q.readable()
	if routeRule != "" {
		parts = append(parts, "route "+routeRule)
	}
	return strings.Join(parts, " › ")
}

func (p Path) readable() []string {
	var parts []string
	if p.Gateway != "" {
		parts = append(parts, "gateway "+p.Gateway)
	}
	if p.Listener != "" {
		parts = append(parts, "listener "+p.Listener)
	}
	if p.Route != "" {
		parts = append(parts, "route "+p.Route)
	}
	if p.Rule != "" {
		parts = append(parts, "rule "+p.Rule)
	}
	return parts
}

// nodes lists the attachment nodes of the path, least specific first.
func (p Path) nodes() []string {
	var out []string
	if p.Gateway != "" {
		out = append(out, gatewayNode(p.Gateway))
	}
	if p.Listener != "" {
		out = append(out, listenerNode(p.Gateway, p.Listener))
	}
	if p.Route != "" {
		out = append(out, routeNode(p.Route))
	}
	if p.Rule != "" {
		out = append(out, ruleNode(p.Route, p.Rule))
	}
	return out
}

// RuleName is Kuadrant's name of rule i (0-based) of an HTTPRoute: its name, or the
// synthetic "rule-N" (1-based) when it has none.
func RuleName(i int, name string) string {
	if name != "" {
		return name
	}
	return "rule-" + strconv.Itoa(i+1)
}

func gatewayNode(gw string) string     { return "gateway:" + gw }
func listenerNode(gw, l string) string { return "listener:" + gw + "#" + l }
func routeNode(rt string) string       { return "httproute:" + rt }
func ruleNode(rt, rule string) string  { return "httproute-rule:" + rt + "#" + rule }
func nsName(ns, name string) string    { return ns + "/" + name }

// Topology is the Gateway API graph policy-machinery builds for Kuadrant:
// GatewayClass → Gateway → Listener → HTTPRoute → HTTPRouteRule.
type Topology struct {
	// Gateways in ns/name order.
	Gateways []*GatewayNode
	// Routes in ns/name order.
	Routes []*RouteNode

	// NotProgrammed are the (route, listener) links the route's parentRefs ask for that
	// the gateway never programs: no route hostname is one the listener's hostname
	// accepts. They are left out of every path.
	NotProgrammed []NotProgrammed

	gateways map[string]*GatewayNode
	routes   map[string]*RouteNode
	nodes    map[string]bool
}

// NotProgrammed is a route a listener does not carry, and why (Why,
// ReasonListenerHostname); render writes Reason, the text of -o json.
type NotProgrammed struct {
	Route    string `json:"route"`
	Gateway  string `json:"gateway"`
	Listener string `json:"listener"`
	Reason   string `json:"reason"`
	Why      Reason `json:"-"`
}

// GatewayNode is a Gateway with its listeners in declaration order.
type GatewayNode struct {
	Ref       string // ns/name
	Class     string // empty when the GatewayClass is not in the input
	ClassName string // spec.gatewayClassName
	Listeners []string
	Object    *snapshot.Gateway
	// DataPlane is the data plane that serves the Gateway (topology.ClassifyGateways).
	DataPlane topology.GatewayDataPlane
	// Unprogrammed says why Kuadrant never programs the Gateway (it programs Istio and
	// Envoy Gateway only: ReasonUnprogrammed); nil when it does, or is assumed to.
	Unprogrammed *Reason
	// routes per listener, in ns/name order.
	routes map[string][]*RouteNode
}

// RouteNode is an HTTPRoute with its rule names (synthetic rule-N for unnamed rules).
type RouteNode struct {
	Ref    string
	Rules  []string
	Object *snapshot.HTTPRoute
	// Parents are the (gateway, listener) pairs the route is linked to, in gateway ns/name
	// then listener declaration order.
	Parents []Parent
}

// Parent is one listener a route hangs under.
type Parent struct {
	Gateway  string
	Listener string
}

// BuildTopology links the snapshot's Gateways, listeners, HTTPRoutes and rules. A
// parentRef with sectionName links the route to that listener only, one without it to
// every listener of the Gateway. A link whose listener hostname accepts none of the
// route's hostnames is left out (Topology.NotProgrammed): the gateway never programs the
// route there, so no AuthPolicy can apply on that path. Protocols and allowedRoutes are
// not checked. planes is the data plane of each Gateway (topology.Graph.DataPlanes).
func BuildTopology(s *snapshot.Snapshot, planes map[*snapshot.Gateway]topology.GatewayDataPlane) *Topology {
	t := &Topology{gateways: map[string]*GatewayNode{}, routes: map[string]*RouteNode{}, nodes: map[string]bool{}}
	classes := map[string]bool{}
	for _, c := range s.GatewayClasses {
		classes[c.Name] = true
	}
	for _, g := range s.Gateways {
		ref := nsName(g.Namespace, g.Name)
		if _, dup := t.gateways[ref]; dup {
			continue
		}
		gn := &GatewayNode{Ref: ref, ClassName: string(g.Spec.GatewayClassName), Object: g, routes: map[string][]*RouteNode{}}
		if classes[gn.ClassName] {
			gn.Class = gn.ClassName
		}
		gn.DataPlane = planes[g]
		gn.Unprogrammed = unprogrammed(ref, gn.DataPlane)
		t.nodes[gatewayNode(ref)] = true
		for _, l := range g.Spec.Listeners {
			name := string(l.Name)
			if t.nodes[listenerNode(ref, name)] {
				continue
			}
			gn.Listeners = append(gn.Listeners, name)
			t.nodes[listenerNode(ref, name)] = true
		}
		t.gateways[ref] = gn
		t.Gateways = append(t.Gateways, gn)
	}
	sort.Slice(t.Gateways, func(i, j int) bool { return t.Gateways[i].Ref < t.Gateways[j].Ref })

	for _, r := range s.HTTPRoutes {
		ref := nsName(r.Namespace, r.Name)
		if _, dup := t.routes[ref]; dup {
			continue
		}
		rn := &RouteNode{Ref: ref, Object: r}
		seenRule := map[string]bool{}
		for i, rule := range r.Spec.Rules {
			name := ""
			if rule.Name != nil {
				name = string(*rule.Name)
			}
			name = RuleName(i, name)
			if seenRule[name] {
				continue
			}
			seenRule[name] = true
			rn.Rules = append(rn.Rules, name)
			t.nodes[ruleNode(ref, name)] = true
		}
		t.nodes[routeNode(ref)] = true
		t.routes[ref] = rn
		t.Routes = append(t.Routes, rn)
	}
	sort.Slice(t.Routes, func(i, j int) bool { return t.Routes[i].Ref < t.Routes[j].Ref })

	for _, rn := range t.Routes {
		r := rn.Object
		linked := map[Parent]bool{}
		for _, pr := range r.Spec.ParentRefs {
			if pr.Namespace != nil && *pr.Namespace == "" {
				pr.Namespace = nil // an empty namespace is the route's here (the API server rejects it)
			}
			gref, ok := topology.ParentGateway(pr, r.Namespace)
			if !ok {
				continue
			}
			gn := t.gateways[nsName(gref.Namespace, gref.Name)]
			if gn == nil {
				continue
			}
			for _, l := range gn.Listeners {
				if pr.SectionName != nil && string(*pr.SectionName) != l {
					continue
				}
				p := Parent{Gateway: gn.Ref, Listener: l}
				if host, hosts := listenerHostname(gn, l), routeHostnames(r); !topology.HostnamesIntersect(host, hosts) {
					if !linked[p] && !t.notProgrammed(rn.Ref, p) {
						t.NotProgrammed = append(t.NotProgrammed, NotProgrammed{Route: rn.Ref, Gateway: gn.Ref, Listener: l,
							Why: Reason{Code: ReasonListenerHostname, Host: host, Hosts: hosts}})
					}
					continue
				}
				linked[p] = true
			}
		}
		for _, gn := range t.Gateways {
			for _, l := range gn.Listeners {
				p := Parent{Gateway: gn.Ref, Listener: l}
				if linked[p] {
					rn.Parents = append(rn.Parents, p)
					gn.routes[l] = append(gn.routes[l], rn)
				}
			}
		}
	}
	return t
}

// unprogrammed says why Kuadrant never programs a Gateway, or nil when it does. Kuadrant
// programs the Gateways of Istio and Envoy Gateway; for any other controller its
// AuthPolicyStatusUpdater.enforcedCondition lists the Gateway among the components still
// to sync, so the policy is not enforced (kuadrant-operator
// internal/controller/auth_policy_status_updater.go, defaultGatewayControllerName). A
// Gateway whose class is not in the input and that nothing marks as the reference data
// plane's is assumed to be one Kuadrant programs (Kuadrant's own guides leave Istio's
// class out).
func unprogrammed(ref string, dp topology.GatewayDataPlane) *Reason {
	switch dp.DataPlane {
	case topology.DataPlaneIstio, topology.DataPlaneEnvoyGateway:
		return nil
	case topology.DataPlaneGatewayAPI:
		if dp.Assumed {
			return nil
		}
	}
	return &Reason{Code: ReasonUnprogrammed, Ref: ref, DataPlane: dp}
}

// GatewayUnprogrammed says why Kuadrant never programs the Gateway "ns/name", or nil
// when it does (or the Gateway is not in the input).
func (t *Topology) GatewayUnprogrammed(ref string) *Reason {
	if g := t.gateways[ref]; g != nil {
		return g.Unprogrammed
	}
	return nil
}

func (t *Topology) notProgrammed(route string, p Parent) bool {
	for _, n := range t.NotProgrammed {
		if n.Route == route && n.Gateway == p.Gateway && n.Listener == p.Listener {
			return true
		}
	}
	return false
}

// listenerHostname is the hostname of a gateway's listener ("" for any host).
func listenerHostname(gn *GatewayNode, name string) string {
	for _, l := range gn.Object.Spec.Listeners {
		if string(l.Name) == name && l.Hostname != nil {
			return string(*l.Hostname)
		}
	}
	return ""
}

func routeHostnames(r *snapshot.HTTPRoute) []string {
	out := make([]string, len(r.Spec.Hostnames))
	for i, h := range r.Spec.Hostnames {
		out[i] = string(h)
	}
	return out
}

// Gateway returns the Gateway node for "ns/name".
func (t *Topology) Gateway(ref string) *GatewayNode { return t.gateways[ref] }

// Route returns the HTTPRoute node for "ns/name".
func (t *Topology) Route(ref string) *RouteNode { return t.routes[ref] }

// RoutesOf returns the routes linked to a listener.
func (t *Topology) RoutesOf(gateway, listener string) []*RouteNode {
	if g := t.gateways[gateway]; g != nil {
		return g.routes[listener]
	}
	return nil
}

// FullPaths lists every path from a Gateway to a route rule, Gateways in ns/name order,
// listeners in declaration order, routes in ns/name order, rules in declaration order.
func (t *Topology) FullPaths() []Path {
	var out []Path
	for _, g := range t.Gateways {
		for _, l := range g.Listeners {
			for _, r := range g.routes[l] {
				for _, rule := range r.Rules {
					out = append(out, Path{GatewayClass: g.Class, Gateway: g.Ref, Listener: l, Route: r.Ref, Rule: rule})
				}
			}
		}
	}
	return out
}

// resolve returns the node a policy target attaches to, or "" with the reason.
func (t *Topology) resolve(tg Target) (node string, why Reason) {
	ref := nsName(tg.Namespace, tg.Name)
	switch tg.Kind {
	case "Gateway":
		if t.gateways[ref] == nil {
			return "", Reason{Code: ReasonNoGateway, Ref: ref}
		}
		if tg.Section == "" {
			return gatewayNode(ref), Reason{}
		}
		if !t.nodes[listenerNode(ref, tg.Section)] {
			return "", Reason{Code: ReasonNoListener, Ref: ref, Section: tg.Section}
		}
		return listenerNode(ref, tg.Section), Reason{}
	case "HTTPRoute":
		if t.routes[ref] == nil {
			return "", Reason{Code: ReasonNoRoute, Ref: ref}
		}
		if tg.Section == "" {
			return routeNode(ref), Reason{}
		}
		if !t.nodes[ruleNode(ref, tg.Section)] {
			return "", Reason{Code: ReasonNoRule, Ref: ref, Section: tg.Section}
		}
		return ruleNode(ref, tg.Section), Reason{}
	case "GRPCRoute":
		return "", Reason{Code: ReasonGRPCRoute, Ref: ref}
	}
	return "", Reason{Code: ReasonUnsupportedKind, Kind: tg.Kind}
}

func levelOf(tg Target) Level {
	switch tg.Kind {
	case "Gateway":
		if tg.Section != "" {
			return LevelListener
		}
		return LevelGateway
	case "HTTPRoute", "GRPCRoute":
		if tg.Section != "" {
			return LevelRouteRule
		}
		return LevelRoute
	}
	return 0
}
