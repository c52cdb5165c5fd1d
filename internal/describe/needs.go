// Needs: which objects of the input a describe answer reads.

package describe

import (
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
)

// Needs names the objects of s that the views List builds (kind, name and ns as List
// takes them) read, found in s as written, before admission: the loader admits only
// those (cluster.LoadOptions.Needs), since what admission does to another object (the
// fields the API server would drop, its defaults, a list it would refuse) cannot change
// the answer. It returns nil when every object is needed: the view of an AuthPolicy, and
// any input holding a kuadrant.io/v1beta2 AuthPolicy (Authorino's host lookup spans every
// Gateway).
//
// References are followed by namespace and name whatever the kind and group they name
// (the API server defaults both), so the set is a superset (docs/limits.md, "describe
// admits what the answer reads"). From a Gateway: its ListenerSets, the HTTPRoutes whose
// parentRefs name it or one of them, the XBackends of every namespace those routes send
// to, the AuthPolicies targeting any of these by name, and the XAccessPolicies targeting
// the Gateway or those XBackends, with every policy counted with them toward the limit
// per target (admission), transitively, and the XBackends their externalAuth names. An
// HTTPRoute's view reads the Gateways its parentRefs name (directly or through a
// ListenerSet); an XBackend's, the Gateways of the routes naming it (or its Service); an
// XAccessPolicy's, its targets'. Every GatewayClass and ReferenceGrant is needed, and
// the first AuthPolicy (a view lists the AuthPolicy of its paths when there is one).
//
// The views read nothing else of the kinds with a CRD: built on s.Subset of what Needs
// names, they are the views built on s (TestNeedsSameAsFullAdmission).
func Needs(s *snapshot.Snapshot, kind string, name []string, ns string) func(snapshot.Ref) bool {
	if kind == KindAuthPolicy {
		return nil
	}
	for _, ap := range s.AuthPolicies {
		if ap.IsV1beta2() {
			return nil
		}
	}
	n := newNeeds(s)
	names := [][2]string{}
	if name != nil {
		names = append(names, [2]string{name[0], name[1]})
	} else {
		names = Names(s, kind, ns)
	}
	for _, nm := range names {
		k := key{nm[0], nm[1]}
		switch kind {
		case KindGateway:
			n.gateway(k)
		case KindHTTPRoute:
			for _, r := range n.routes[k] {
				n.routeView(r)
			}
		case KindXBackend:
			n.xbackendView(k)
		case KindXAccessPolicy:
			for _, p := range n.policies[k] {
				n.policyView(p)
			}
		}
	}
	return n.has
}

// key is a namespace and name; a cluster-scoped object has namespace "".
type key struct{ ns, name string }

// needs is the set being built, with the indexes of s by name and by what names what.
type needs struct {
	s   *snapshot.Snapshot
	out map[string]map[key]bool // kind → objects needed

	gateways     map[key]bool // gateways whose view is needed (done)
	backends     map[key]bool // XBackends whose policies are needed (done)
	policyDone   map[*snapshot.XAccessPolicy]bool
	routes       map[key][]*snapshot.HTTPRoute
	policies     map[key][]*snapshot.XAccessPolicy
	listenerSets map[key][]*snapshot.ListenerSet
	xbackends    map[string][]*snapshot.XBackend // by namespace

	routesByParent    map[key][]*snapshot.HTTPRoute
	routesByBackend   map[key][]*snapshot.HTTPRoute
	setsByParent      map[key][]*snapshot.ListenerSet
	policiesByTarget  map[key][]*snapshot.XAccessPolicy
	authByTarget      map[key][]*snapshot.AuthPolicy
	gatewaysOfSetName map[key][]key
}

func newNeeds(s *snapshot.Snapshot) *needs {
	n := &needs{s: s, out: map[string]map[key]bool{},
		gateways: map[key]bool{}, backends: map[key]bool{}, policyDone: map[*snapshot.XAccessPolicy]bool{},
		routes: map[key][]*snapshot.HTTPRoute{}, policies: map[key][]*snapshot.XAccessPolicy{},
		listenerSets: map[key][]*snapshot.ListenerSet{}, xbackends: map[string][]*snapshot.XBackend{},
		routesByParent: map[key][]*snapshot.HTTPRoute{}, routesByBackend: map[key][]*snapshot.HTTPRoute{},
		setsByParent: map[key][]*snapshot.ListenerSet{}, policiesByTarget: map[key][]*snapshot.XAccessPolicy{},
		authByTarget: map[key][]*snapshot.AuthPolicy{}, gatewaysOfSetName: map[key][]key{}}
	for _, o := range s.GatewayClasses {
		n.add("GatewayClass", key{"", o.Name})
	}
	for _, o := range s.ReferenceGrants {
		n.add("ReferenceGrant", key{o.Namespace, o.Name})
	}
	for _, r := range s.HTTPRoutes {
		n.routes[key{r.Namespace, r.Name}] = append(n.routes[key{r.Namespace, r.Name}], r)
		for _, p := range r.Spec.ParentRefs {
			k := refKey(r.Namespace, p.Namespace, p.Name)
			n.routesByParent[k] = append(n.routesByParent[k], r)
		}
		for _, b := range routeBackends(r) {
			n.routesByBackend[b] = append(n.routesByBackend[b], r)
		}
	}
	for _, ls := range s.ListenerSets {
		k := key{ls.Namespace, ls.Name}
		n.listenerSets[k] = append(n.listenerSets[k], ls)
		p := refKey(ls.Namespace, ls.Spec.ParentRef.Namespace, ls.Spec.ParentRef.Name)
		n.setsByParent[p] = append(n.setsByParent[p], ls)
		n.gatewaysOfSetName[k] = append(n.gatewaysOfSetName[k], p)
	}
	for _, xb := range s.XBackends {
		n.xbackends[xb.Namespace] = append(n.xbackends[xb.Namespace], xb)
	}
	for _, p := range s.XAccessPolicies {
		k := key{p.Namespace, p.Name}
		n.policies[k] = append(n.policies[k], p)
		for _, t := range policyTargets(p) {
			n.policiesByTarget[t] = append(n.policiesByTarget[t], p)
		}
	}
	for i, ap := range s.AuthPolicies {
		t := key{ap.Namespace, string(ap.Spec.TargetRef.Name)}
		n.authByTarget[t] = append(n.authByTarget[t], ap)
		if i == 0 {
			// A Gateway's or HTTPRoute's view lists the AuthPolicy of its paths, even
			// none, when the input holds one (authPolicies): the first witnesses it.
			n.add("AuthPolicy", key{ap.Namespace, ap.Name})
		}
	}
	return n
}

// refKey is the object a reference of an object in namespace own names: its namespace
// (own when it names none) and name.
func refKey[N ~string](own string, ns *N, name gwapiv1.ObjectName) key {
	if ns != nil && *ns != "" {
		return key{string(*ns), string(name)}
	}
	return key{own, string(name)}
}

// routeBackends are the objects r's rules send to, mirror to or authorize with, by
// namespace and name.
func routeBackends(r *snapshot.HTTPRoute) []key {
	var out []key
	ref := func(b gwapiv1.BackendObjectReference) {
		out = append(out, refKey(r.Namespace, b.Namespace, b.Name))
	}
	filters := func(fs []gwapiv1.HTTPRouteFilter) {
		for _, f := range fs {
			if f.RequestMirror != nil {
				ref(f.RequestMirror.BackendRef)
			}
			if f.ExternalAuth != nil {
				ref(f.ExternalAuth.BackendRef)
			}
			if f.ExtensionRef != nil {
				out = append(out, key{r.Namespace, string(f.ExtensionRef.Name)})
			}
		}
	}
	for _, rule := range r.Spec.Rules {
		filters(rule.Filters)
		for _, b := range rule.BackendRefs {
			ref(b.BackendObjectReference)
			filters(b.Filters)
		}
	}
	return out
}

// policyTargets are the objects p's targetRefs name (in p's namespace).
func policyTargets(p *snapshot.XAccessPolicy) []key {
	var out []key
	for _, t := range p.Spec.TargetRefs {
		out = append(out, key{p.Namespace, string(t.Name)})
	}
	if p.Legacy != nil {
		for _, t := range p.Legacy.Spec.TargetRefs {
			out = append(out, key{p.Namespace, string(t.Name)})
		}
	}
	return out
}

// add marks the object of kind k as needed.
func (n *needs) add(kind string, k key) {
	m := n.out[kind]
	if m == nil {
		m = map[key]bool{}
		n.out[kind] = m
	}
	m[k] = true
}

// has reports whether the object ref names is needed.
func (n *needs) has(ref snapshot.Ref) bool {
	return n.out[ref.Kind][key{ref.Namespace, ref.Name}]
}

// gateway adds what the view of the Gateway k reads (see Needs).
func (n *needs) gateway(k key) {
	if n.gateways[k] {
		return
	}
	n.gateways[k] = true
	n.add("Gateway", k)
	n.auth(k)
	for _, p := range n.policiesByTarget[k] {
		n.policy(p)
	}
	parents := []key{k}
	for _, ls := range n.setsByParent[k] {
		lk := key{ls.Namespace, ls.Name}
		n.add("ListenerSet", lk)
		n.auth(lk)
		parents = append(parents, lk)
	}
	for _, pk := range parents {
		for _, r := range n.routesByParent[pk] {
			n.route(r)
		}
	}
}

// route adds a route of a needed Gateway: it, its AuthPolicies, and the XBackends of
// every namespace it sends to (an XBackend may name a Service it sends to in
// spec.mcp.serviceName) with their policies.
func (n *needs) route(r *snapshot.HTTPRoute) {
	rk := key{r.Namespace, r.Name}
	n.add("HTTPRoute", rk)
	n.auth(rk)
	namespaces := map[string]bool{r.Namespace: true}
	for _, b := range routeBackends(r) {
		namespaces[b.ns] = true
	}
	for ns := range namespaces {
		for _, xb := range n.xbackends[ns] {
			n.backend(key{xb.Namespace, xb.Name})
		}
	}
}

// backend adds an XBackend a needed path reaches and the policies targeting it.
func (n *needs) backend(k key) {
	if n.backends[k] {
		return
	}
	n.backends[k] = true
	n.add("XBackend", k)
	for _, p := range n.policiesByTarget[k] {
		n.policy(p)
	}
}

// policy adds an XAccessPolicy whose admission a view reads: every policy sharing one
// of its targets counts toward the limit, and the objects it names.
func (n *needs) policy(p *snapshot.XAccessPolicy) {
	if n.policyDone[p] {
		return
	}
	n.policyDone[p] = true
	n.add("XAccessPolicy", key{p.Namespace, p.Name})
	for _, t := range policyTargets(p) {
		n.add("Gateway", t)
		n.add("XBackend", t)
		for _, o := range n.policiesByTarget[t] {
			n.policy(o)
		}
	}
	ext := func(f *gwapiv1.HTTPExternalAuthFilter) {
		if f != nil {
			n.add("XBackend", refKey(p.Namespace, f.BackendRef.Namespace, f.BackendRef.Name))
		}
	}
	ext(p.Spec.ExternalAuth)
	if p.Legacy != nil {
		for _, r := range p.Legacy.Spec.Rules {
			if r.Authorization != nil {
				ext(r.Authorization.ExternalAuth)
			}
		}
	}
}

// auth adds the AuthPolicies targeting k (a Gateway, ListenerSet or HTTPRoute) by name.
func (n *needs) auth(k key) {
	for _, ap := range n.authByTarget[k] {
		n.add("AuthPolicy", key{ap.Namespace, ap.Name})
	}
}

// routeView adds what an HTTPRoute's view reads: the Gateways its parentRefs name,
// directly or through a ListenerSet, and the route itself.
func (n *needs) routeView(r *snapshot.HTTPRoute) {
	n.route(r)
	for _, p := range r.Spec.ParentRefs {
		k := refKey(r.Namespace, p.Namespace, p.Name)
		n.gateway(k)
		for _, g := range n.gatewaysOfSetName[k] {
			n.gateway(g)
		}
	}
}

// xbackendView adds what an XBackend's view reads: the Gateways of every route naming
// it or the Service it names (spec.mcp.serviceName), and its own policies.
func (n *needs) xbackendView(k key) {
	n.backend(k)
	targets := []key{k}
	for _, xb := range n.xbackends[k.ns] {
		if xb.Name == k.name && xb.Spec.MCP.ServiceName != nil {
			targets = append(targets, key{k.ns, *xb.Spec.MCP.ServiceName})
		}
	}
	for _, t := range targets {
		for _, r := range n.routesByBackend[t] {
			n.routeView(r)
		}
	}
}

// policyView adds what an XAccessPolicy's view reads: it and the views of its targets.
func (n *needs) policyView(p *snapshot.XAccessPolicy) {
	n.policy(p)
	for _, t := range policyTargets(p) {
		n.gateway(t)
		n.xbackendView(t)
	}
}
