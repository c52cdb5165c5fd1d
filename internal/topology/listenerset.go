package topology

import (
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
)

// ListenerSets (Gateway API v1 standard channel since v1.5, listenerset_types.go, GEP-1713)
// add listeners to a Gateway that allows them (gateway_types.go AllowedListeners):
//   - the ListenerSet's spec.parentRef names the Gateway (group gateway.networking.k8s.io,
//     kind Gateway, namespace the ListenerSet's when unset);
//   - the Gateway's spec.allowedListeners.namespaces.from admits the ListenerSet's
//     namespace: None (the default, also without allowedListeners), Same, All, or
//     Selector (the namespace's labels);
//   - the Gateway's own listeners come first, then the ListenerSets' by creation time,
//     oldest first, then namespace/name; a ListenerSet listener that conflicts with one
//     before it (same port and hostname, or TCP/UDP beside HTTP on a port) is not
//     programmed, and the earlier listener keeps working;
//   - a route attaches to a ListenerSet's listeners by a parentRef of kind ListenerSet
//     (sectionName: the listener's name in its ListenerSet); a parentRef to the Gateway
//     reaches only the Gateway's own listeners; allowedRoutes "Same" means the
//     ListenerSet's namespace.
//
// The kube-agentic-networking reference data plane (c7e4194) reads no ListenerSets: on
// its Gateways they carry no traffic, and ListenerSetProblems says so.

// ListenerSetListenerName is the name agpol gives a listener of a ListenerSet in routing
// results and attachments: "namespace/listenerset/listener" (a Gateway's own listener
// names cannot contain "/").
func ListenerSetListenerName(ls *snapshot.ListenerSet, listener string) string {
	return ls.Namespace + "/" + ls.Name + "/" + listener
}

// ParentListenerSet is the ListenerSet a route's parentRef names (group
// gateway.networking.k8s.io, kind ListenerSet, the route's namespace by default).
func ParentListenerSet(p gwapiv1.ParentReference, routeNS string) (Ref, bool) {
	if p.Kind == nil || string(*p.Kind) != "ListenerSet" || (p.Group != nil && string(*p.Group) != gwapiv1.GroupName) {
		return Ref{}, false
	}
	ns := routeNS
	if p.Namespace != nil {
		ns = string(*p.Namespace)
	}
	return Ref{Group: gwapiv1.GroupName, Kind: "ListenerSet", Namespace: ns, Name: string(p.Name)}, true
}

// listenerSetParent is the Gateway a ListenerSet's parentRef names, false for another kind.
func listenerSetParent(ls *snapshot.ListenerSet) (nsName, bool) {
	p := ls.Spec.ParentRef
	if (p.Group != nil && string(*p.Group) != gwapiv1.GroupName) || (p.Kind != nil && string(*p.Kind) != "Gateway") {
		return nsName{}, false
	}
	ns := ls.Namespace
	if p.Namespace != nil {
		ns = string(*p.Namespace)
	}
	return nsName{ns, string(p.Name)}, true
}

// ListenerSetStatus is whether a ListenerSet is attached to its Gateway, and why not.
type ListenerSetStatus struct {
	ListenerSet *snapshot.ListenerSet
	Gateway     Ref
	Accepted    bool
	// Reason is ReasonAccepted, or ReasonNotAllowed, ReasonParentNotFound or
	// ReasonNotSupported; Miss says why not, as data (nil when Accepted).
	Reason string
	Miss   *ListenerSetMiss
	// Conflicts are the listeners (by their name in the ListenerSet) that conflict with
	// an earlier listener of the Gateway (Conflicted=True, Accepted=False), with why.
	Conflicts map[string]*NotProgrammed
	// Listeners are the ListenerSet's listeners as its Gateway takes them (conflicts,
	// attached routes), in spec order; nil when the Gateway does not take it.
	Listeners []SetListener
}

// ListenerSetStatuses says, for every ListenerSet of the input, whether its Gateway takes
// its listeners (namespace/name order).
func (g *Graph) ListenerSetStatuses() []ListenerSetStatus {
	var out []ListenerSetStatus
	for _, ls := range g.snap.ListenerSets {
		st := ListenerSetStatus{ListenerSet: ls}
		parent, ok := listenerSetParent(ls)
		if ok {
			st.Gateway = GatewayRef(parent.ns, parent.name)
		}
		gi := g.gateways[parent]
		switch {
		case !ok:
			st.Reason, st.Miss = ReasonParentNotFound, &ListenerSetMiss{Why: SetMissNoParent}
		case gi == nil:
			st.Reason, st.Miss = ReasonParentNotFound, &ListenerSetMiss{Why: SetMissGatewayNotFound}
		case gi.plane.Agentic():
			st.Reason, st.Miss = ReasonNotSupported, &ListenerSetMiss{Why: SetMissAgentic}
		default:
			if why := g.listenerSetNotAllowed(gi.gw, ls); why != nil {
				st.Reason, st.Miss = ReasonNotAllowed, why
			} else {
				st.Accepted, st.Reason = true, ReasonAccepted
				for _, sl := range g.ListenerSetListeners(st.Gateway) {
					if sl.ListenerSet != ls {
						continue
					}
					st.Listeners = append(st.Listeners, sl)
					if sl.ConflictReason != "" {
						if st.Conflicts == nil {
							st.Conflicts = map[string]*NotProgrammed{}
						}
						st.Conflicts[string(sl.Entry.Name)] = sl.NotProgrammed
					}
				}
			}
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].ListenerSet, out[j].ListenerSet
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// listenerSetNotAllowed says why a Gateway's allowedListeners rejects a ListenerSet, or nil.
func (g *Graph) listenerSetNotAllowed(gw *snapshot.Gateway, ls *snapshot.ListenerSet) *ListenerSetMiss {
	from := gwapiv1.NamespacesFromNone
	var sel *metav1.LabelSelector
	if a := gw.Spec.AllowedListeners; a != nil && a.Namespaces != nil {
		if a.Namespaces.From != nil {
			from = *a.Namespaces.From
		}
		sel = a.Namespaces.Selector
	}
	switch from {
	case gwapiv1.NamespacesFromAll:
		return nil
	case gwapiv1.NamespacesFromSame:
		if ls.Namespace == gw.Namespace {
			return nil
		}
		return &ListenerSetMiss{Why: SetMissFromSame}
	case gwapiv1.NamespacesFromSelector:
		if sel == nil {
			return &ListenerSetMiss{Why: SetMissSelectorMissing}
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			return &ListenerSetMiss{Why: SetMissSelectorInvalid, SelectorErr: err.Error()}
		}
		if s.Matches(labels.Set(g.nsLabels[ls.Namespace])) {
			return nil
		}
		return &ListenerSetMiss{Why: SetMissSelectorMismatch, Selector: s.String()}
	case gwapiv1.NamespacesFromNone:
		return &ListenerSetMiss{Why: SetMissFromNone}
	}
	return &ListenerSetMiss{Why: SetMissFromUnknown, From: string(from)}
}

// attachedListenerSets are the ListenerSets whose listeners a Gateway takes, in
// precedence order (creation time, then namespace/name).
func (g *Graph) attachedListenerSets(gw *snapshot.Gateway, plane GatewayDataPlane) []*snapshot.ListenerSet {
	var out []*snapshot.ListenerSet
	for _, ls := range g.snap.ListenerSets {
		if p, ok := listenerSetParent(ls); !ok || p.ns != gw.Namespace || p.name != gw.Name {
			continue
		}
		if plane.Agentic() || g.listenerSetNotAllowed(gw, ls) != nil {
			continue
		}
		out = append(out, ls)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	return out
}

// listenerSetInfos appends the listeners of the ListenerSets a Gateway takes to its own
// (listenerInfos), each not programmed when it conflicts with a listener before it.
func (g *Graph) listenerSetInfos(gw *snapshot.Gateway, plane GatewayDataPlane, own []*listenerInfo) []*listenerInfo {
	out := own
	for _, ls := range g.attachedListenerSets(gw, plane) {
		for i, l := range ls.Spec.Listeners {
			li := &listenerInfo{name: ListenerSetListenerName(ls, string(l.Name)), section: string(l.Name), ns: ls.Namespace, set: ls,
				port: int32(l.Port), protocol: l.Protocol, allowed: l.AllowedRoutes}
			if l.Hostname != nil {
				li.host = lower(string(*l.Hostname))
			}
			if l.Protocol != gwapiv1.HTTPProtocolType && l.Protocol != gwapiv1.HTTPSProtocolType {
				li.notProgrammed = &NotProgrammed{Why: NotProgrammedProtocol, Protocol: string(l.Protocol)}
			}
			g.allowedRoutes(li, Ref{Group: gwapiv1.GroupName, Kind: "ListenerSet", Namespace: ls.Namespace, Name: ls.Name}, ls.Source,
				fmt.Sprintf("spec.listeners[%d].allowedRoutes.namespaces.selector", i))
			li.named = li
			for _, prev := range out {
				if reason, why := conflict(prev, li); why != nil && li.notProgrammed == nil {
					li.notProgrammed, li.conflictReason = why, reason
					break
				}
			}
			out = append(out, li)
		}
	}
	return out
}

// Conflict reasons of a ListenerSet listener (gateway-api listenerset_types.go
// ListenerEntryReasonHostnameConflict, ListenerEntryReasonProtocolConflict).
const (
	ReasonHostnameConflict = string(gwapiv1.ListenerEntryReasonHostnameConflict)
	ReasonProtocolConflict = string(gwapiv1.ListenerEntryReasonProtocolConflict)
)

// conflict says why a ListenerSet listener conflicts with an earlier listener (its
// reason and why, as data), or "", nil.
func conflict(prev, li *listenerInfo) (reason string, why *NotProgrammed) {
	if prev.port != li.port {
		return "", nil
	}
	httpFamily := func(p gwapiv1.ProtocolType) bool {
		return p == gwapiv1.HTTPProtocolType || p == gwapiv1.HTTPSProtocolType || p == gwapiv1.TLSProtocolType
	}
	l4 := func(p gwapiv1.ProtocolType) bool { return p == gwapiv1.TCPProtocolType || p == gwapiv1.UDPProtocolType }
	switch {
	case (l4(prev.protocol) && httpFamily(li.protocol)) || (httpFamily(prev.protocol) && l4(li.protocol)):
		return ReasonProtocolConflict, &NotProgrammed{Why: NotProgrammedSetProtocolConflict, Port: li.port, Other: prev.name}
	case httpFamily(prev.protocol) && httpFamily(li.protocol) && prev.host == li.host:
		return ReasonHostnameConflict, &NotProgrammed{Why: NotProgrammedSetHostnameConflict, Port: li.port, Other: prev.name, Host: li.host}
	}
	return "", nil
}

// routeRefs are the indexes of a route's parentRefs naming the Gateway, and those naming
// each of its ListenerSets.
func routeRefs(ri *routeInfo, gw *snapshot.Gateway, sets []*snapshot.ListenerSet) (own []int, bySet map[*snapshot.ListenerSet][]int) {
	for i, p := range ri.route.Spec.ParentRefs {
		if parentNamesGateway(p, ri.route.Namespace, gw) {
			own = append(own, i)
			continue
		}
		ref, ok := ParentListenerSet(p, ri.route.Namespace)
		if !ok {
			continue
		}
		for _, ls := range sets {
			if ls.Namespace == ref.Namespace && ls.Name == ref.Name {
				if bySet == nil {
					bySet = map[*snapshot.ListenerSet][]int{}
				}
				bySet[ls] = append(bySet[ls], i)
			}
		}
	}
	return own, bySet
}

// SetListener is a listener a ListenerSet adds to a Gateway.
type SetListener struct {
	// Name is the listener's name in routing results (ListenerSetListenerName).
	Name        string
	ListenerSet *snapshot.ListenerSet
	Entry       gwapiv1.ListenerEntry
	// ConflictReason is set (ReasonHostnameConflict, ReasonProtocolConflict) when the
	// listener conflicts with an earlier one of the Gateway or an older ListenerSet
	// (status condition Conflicted=True, Accepted=False); NotProgrammed then says why.
	ConflictReason string
	// NotProgrammed says why the data plane carries no routes on the listener (its
	// conflict, or a protocol that carries no HTTPRoutes), or nil.
	NotProgrammed *NotProgrammed
	// AttachedRoutes counts the routes attached to the listener (Accepted), as the
	// listener's status.attachedRoutes would.
	AttachedRoutes int
}

// ListenerSetListeners are the listeners the ListenerSets attached to a Gateway add, in
// precedence order; none on the reference data plane or for a missing Gateway.
func (g *Graph) ListenerSetListeners(gw Ref) []SetListener {
	gi := g.gatewayIndex(gw)
	if gi == nil {
		return nil
	}
	routes := map[string]int{}
	for _, a := range gi.attachments {
		if a.Accepted {
			routes[a.Listener]++
		}
	}
	var out []SetListener
	for _, li := range gi.listeners {
		if li.set == nil {
			continue
		}
		sl := SetListener{Name: li.name, ListenerSet: li.set, NotProgrammed: li.notProgrammed, AttachedRoutes: routes[li.name]}
		for _, l := range li.set.Spec.Listeners {
			if string(l.Name) == li.section {
				sl.Entry = l
				break
			}
		}
		sl.ConflictReason = li.conflictReason
		out = append(out, sl)
	}
	return out
}
