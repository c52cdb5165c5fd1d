package topology

import (
	"fmt"
	"hash/maphash"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
)

// Route attachment follows Gateway API (gateway_types.go AllowedRoutes, RouteNamespaces,
// ParentReference in shared_types.go) as the kube-agentic-networking translator applies
// it: translator.go validateHTTPRoute (parentRef name/namespace, sectionName, port),
// routes.go isAllowedByListener (allowedRoutes namespaces and kinds) and
// isAllowedByHostname, listener.go validateListeners (conflicts) and translator.go
// getSupportedKinds (invalid kinds make the listener carry no routes).

// Attachment reasons (Gateway API RouteConditionReason values, plus one of agpol's own).
const (
	ReasonAccepted                   = "Accepted"
	ReasonNotAllowedByListeners      = "NotAllowedByListeners"
	ReasonNoMatchingListenerHostname = "NoMatchingListenerHostname"
	ReasonNoMatchingParent           = "NoMatchingParent"
	// ReasonListenerNotProgrammed: the listener would accept the route, but the data
	// plane carries no routes on it (conflicted listener, unsupported protocol or kinds).
	ReasonListenerNotProgrammed = "ListenerNotProgrammed"
)

type gatewayIndex struct {
	gw        *snapshot.Gateway
	ref       Ref
	key       string // "namespace/name"
	listeners []*listenerInfo
	// sel is what choosing a listener for a request reads of each listener, in spec
	// order, in one array (see listenerSel).
	sel []listenerSel
	// tables are the route tables: one per port on the reference data plane, one per
	// listener on the others (tableOf).
	tables      map[tableKey]*portTable
	attachments []Attachment
	paths       []Path
	// plane is the data plane that serves the gateway (ClassifyGateways).
	plane GatewayDataPlane
}

type listenerInfo struct {
	// name is the listener's name, "namespace/listenerset/name" for a ListenerSet's
	// (ListenerSetListenerName); section is the name a parentRef's sectionName gives.
	name    string
	section string
	// ns is the namespace of the listener's owner (Gateway or ListenerSet): allowedRoutes
	// "Same" means it.
	ns string
	// set is the ListenerSet the listener comes from, nil for the Gateway's own.
	set      *snapshot.ListenerSet
	port     int32
	protocol gwapiv1.ProtocolType
	host     string // lower-cased; "" = any host
	// notProgrammed says why the data plane carries no routes on this listener, nil
	// when it carries them.
	notProgrammed *NotProgrammed
	// conflictReason is HostnameConflict or ProtocolConflict when notProgrammed is a
	// ListenerSet listener's conflict with an earlier one, "" otherwise.
	conflictReason string
	allowed        *gwapiv1.AllowedRoutes
	selector       labels.Selector // for From=Selector; nil when invalid
	// named is the gateway's first listener of this name: this one, unless the
	// gateway repeats the name.
	named *listenerInfo
	// table is the route table the listener reads (gatewayIndex.tables), nil when no
	// route is attached to it.
	table *portTable
}

// listenerSel is what selectListener reads of a listener when the request names none:
// scanning a gateway's listeners reads one array, and their hostnames from one string,
// instead of each listener's listenerInfo and hostname.
type listenerSel struct {
	host        string // li.host
	port        int32
	programmed  bool // li.notProgrammed == nil
	specificity int  // hostnameSpecificity(li.host)
	li          *listenerInfo
}

// selectionTable builds gi.sel from gi.listeners.
func (gi *gatewayIndex) selectionTable() {
	hosts := make([]string, len(gi.listeners))
	for i, li := range gi.listeners {
		hosts[i] = li.host
	}
	packStrings(hosts)
	gi.sel = make([]listenerSel, len(gi.listeners))
	for i, li := range gi.listeners {
		gi.sel[i] = listenerSel{host: hosts[i], port: li.port, programmed: li.notProgrammed == nil,
			specificity: hostnameSpecificity(li.host), li: li}
	}
}

// tableKey names a route table: a port, and on a data plane with listener isolation a
// listener (its index in the gateway's listeners).
type tableKey struct {
	port     int32
	listener int
}

// tableOf is the route table a listener reads. The reference data plane has one route
// table per port, shared by every listener on it (translator.go:148-160, 310-330).
// Gateway API's listener isolation (GatewayHTTPListenerIsolation, gateway_types.go
// Listeners: "requests SHOULD be matched to the most specific listener… and only routes
// attached to that listener") gives every other data plane one table per listener.
func (gi *gatewayIndex) tableOf(li *listenerInfo) tableKey {
	if gi.plane.Agentic() {
		return tableKey{port: li.port, listener: -1}
	}
	for i, l := range gi.listeners {
		if l == li {
			return tableKey{port: li.port, listener: i}
		}
	}
	return tableKey{port: li.port, listener: -1}
}

// portTable is a route table: the virtual hosts of the listeners that read it.
type portTable struct {
	exact    map[string]*vhost
	wildcard map[string]*vhost // keyed by ".example.com" for "*.example.com"
	any      *vhost
	// hosts are the exact domains' hashes (hostHash) beside their virtual hosts, for a
	// table of at most maxHostScan domains: lookup compares hashes held in a cache line
	// or two, where a small Go map compares the host with every key of its length,
	// reading each key's bytes.
	hosts []hostSlot
	scan  bool // lookup scans hosts, not exact
	// uncertain: a virtual host has a match Envoy may read otherwise (vhost.uncertain).
	uncertain bool
}

type hostSlot struct {
	hash uint64
	vh   *vhost
}

// maxHostScan is the most exact domains a port table scans by hash (lookup); larger
// tables are hashed maps, which compare one key.
const maxHostScan = 8

var hostSeed = maphash.MakeSeed()

func hostHash(host string) uint64 { return maphash.String(hostSeed, host) }

type vhost struct {
	domain  string
	entries []vhostEntry // precedence order
	routes  []*routeInfo // namespace/name order, for reasons
	// uncertain is the first entry's whose match Envoy may read otherwise (matchEntry.uncertain),
	// uncertainAt its index: a request the entries before it do not take is uncertain.
	uncertain   *RegexDiffers
	uncertainAt int
}

type vhostEntry struct {
	m *matchEntry
	// hit is what routing answers when the entry takes a request, in one record; while
	// the table is built, only its listeners are set (packEntries fills it).
	hit *routeHit

	// What rejects most entries, copied from m, with the bytes of the paths in one
	// string per virtual host (packEntries): scanning the entries reads a few cache
	// lines instead of m and its path for each entry.
	kind  pathKind
	never bool
	// fields: m has header or query matches (else a matching path is enough).
	fields bool
	// path is m.path, or for a regular expression m.rePrefix.
	path string
}

// routeHit is what RouteInto reads of a vhost entry that takes a request, copied from
// its match, route and rule: one record (the records of a virtual host lie in one
// slice) where the match, route, rule and listener list are four scattered objects.
// It is 128 bytes, two cache lines: a slice of them keeps each record within two lines
// (TestRouteHitSize).
type routeHit struct {
	route    *snapshot.HTTPRoute
	routeKey string
	ruleName string
	method   string
	backends []BackendTarget
	// problem is the rule's problem (nil when none; rare, so kept out of line).
	problem *RuleProblem
	// listeners are the listeners on the port the route is attached to, spec order.
	listeners  []string
	ruleIndex  int32
	matchIndex int32
	redirect   bool
}

// buildGateway indexes gateway gw, whose "namespace/name" is key.
func (g *Graph) buildGateway(gw *snapshot.Gateway, key string, routes []*routeInfo) *gatewayIndex {
	gi := &gatewayIndex{gw: gw, ref: GatewayRef(gw.Namespace, gw.Name), key: key, tables: map[tableKey]*portTable{}, plane: g.planes[gw]}
	gi.listeners = g.listenerSetInfos(gw, gi.plane, g.listenerInfos(gw))
	gi.selectionTable()
	sets := g.attachedListenerSets(gw, gi.plane)

	type portVhostKey struct {
		table  tableKey
		domain string
	}
	for _, ri := range routes {
		own, bySet := routeRefs(ri, gw, sets)
		for _, li := range gi.listeners {
			refs := own
			if li.set != nil {
				refs = bySet[li.set]
			}
			if len(refs) == 0 {
				continue
			}
			a := g.attach(gw, li, ri, refs)
			gi.attachments = append(gi.attachments, a)
		}
	}
	// Attachments are built route-major; present them listener-major (listener spec
	// order, then route namespace/name), which is also the Paths order.
	pos := map[string]int{}
	for i, li := range gi.listeners {
		if _, dup := pos[li.name]; !dup {
			pos[li.name] = i
		}
	}
	sort.SliceStable(gi.attachments, func(i, j int) bool {
		return pos[gi.attachments[i].Listener] < pos[gi.attachments[j].Listener]
	})

	listenerOf := map[string]*listenerInfo{}
	for _, li := range gi.listeners {
		if _, dup := listenerOf[li.name]; !dup {
			listenerOf[li.name] = li
		}
	}
	entryIdx := map[portVhostKey]map[*matchEntry]int{}
	for _, a := range gi.attachments {
		if !a.Accepted {
			continue
		}
		li := listenerOf[a.Listener]
		ri := g.routeInfos[a.Route]
		tk := gi.tableOf(li)
		pt := gi.tables[tk]
		if pt == nil {
			pt = &portTable{exact: map[string]*vhost{}, wildcard: map[string]*vhost{}}
			gi.tables[tk] = pt
		}
		for _, d := range a.Hostnames {
			vh := pt.vhost(d)
			k := portVhostKey{tk, d}
			idx := entryIdx[k]
			if idx == nil {
				idx = map[*matchEntry]int{}
				entryIdx[k] = idx
			}
			if len(vh.routes) == 0 || vh.routes[len(vh.routes)-1] != ri {
				if !containsRoute(vh.routes, ri) {
					vh.routes = append(vh.routes, ri)
				}
			}
			for _, m := range ri.matches {
				if i, ok := idx[m]; ok {
					h := vh.entries[i].hit
					h.listeners = appendUnique(h.listeners, li.name)
					continue
				}
				idx[m] = len(vh.entries)
				vh.entries = append(vh.entries, vhostEntry{m: m, hit: &routeHit{listeners: []string{li.name}}})
			}
		}
		for _, rule := range ri.rules {
			gi.paths = append(gi.paths, rulePaths(gw, a.Listener, ri, rule, g.backendsOn(ri, rule, gi.plane.DataPlane))...)
		}
	}
	for _, pt := range gi.tables {
		for _, vh := range pt.all() {
			withMethod := !gi.plane.Agentic()
			sort.SliceStable(vh.entries, func(i, j int) bool { return precedes(vh.entries[i].m, vh.entries[j].m, withMethod) })
			sort.Slice(vh.routes, func(i, j int) bool { return vh.routes[i].key < vh.routes[j].key })
			g.packEntries(vh, gi.plane.DataPlane)
			pt.uncertain = pt.uncertain || vh.uncertain != nil
		}
		pt.index()
	}
	for _, li := range gi.listeners {
		li.table = gi.tables[gi.tableOf(li)]
	}
	return gi
}

// index prepares the scan of a small table's exact domains by hash (see hosts), and
// lays the exact domains out in one string: a lookup compares the host with a domain's
// bytes, which then lie together and stay in cache.
func (pt *portTable) index() {
	vhs := make([]*vhost, 0, len(pt.exact))
	domains := make([]string, 0, len(pt.exact))
	for _, vh := range pt.exact {
		vhs, domains = append(vhs, vh), append(domains, vh.domain)
	}
	packStrings(domains)
	pt.exact = make(map[string]*vhost, len(vhs))
	for i, vh := range vhs {
		vh.domain = domains[i]
		pt.exact[vh.domain] = vh
	}
	pt.scan = len(pt.exact) <= maxHostScan
	pt.hosts = pt.hosts[:0]
	if pt.scan {
		for d, vh := range pt.exact {
			pt.hosts = append(pt.hosts, hostSlot{hostHash(d), vh})
		}
	}
}

// packEntries copies into each entry what rejects most requests (see vhostEntry), and
// what a request it takes reads, with the backends as data plane p resolves them.
func (g *Graph) packEntries(vh *vhost, p DataPlane) {
	paths := make([]string, len(vh.entries))
	for i := range vh.entries {
		if m := vh.entries[i].m; m.kind == pathRegex {
			paths[i] = m.rePrefix
		} else {
			paths[i] = m.path
		}
	}
	packStrings(paths)
	hits := make([]routeHit, len(vh.entries))
	for i := range vh.entries {
		e := &vh.entries[i]
		if e.m.uncertain != nil && vh.uncertain == nil {
			vh.uncertain, vh.uncertainAt = e.m.uncertain, i
		}
		e.kind, e.never = e.m.kind, e.m.never
		e.fields = len(e.m.headers) > 0 || len(e.m.query) > 0
		e.path = paths[i]
		m, rl := e.m, e.m.rule
		rb := g.backendsOn(m.route, rl, p)
		hits[i] = routeHit{route: m.route.route, routeKey: m.route.key, ruleName: rl.name, method: m.method,
			backends: rb.backends, listeners: e.hit.listeners,
			ruleIndex: int32(rl.index), matchIndex: int32(m.matchIndex), redirect: rl.redirect, problem: rb.problem}
		e.hit = &hits[i]
	}
}

func containsRoute(l []*routeInfo, r *routeInfo) bool {
	for _, x := range l {
		if x == r {
			return true
		}
	}
	return false
}

func appendUnique(l []string, s string) []string {
	for _, x := range l {
		if x == s {
			return l
		}
	}
	return append(l, s)
}

func (pt *portTable) vhost(domain string) *vhost {
	var m map[string]*vhost
	key := domain
	switch {
	case domain == "*" || domain == "":
		if pt.any == nil {
			pt.any = &vhost{domain: "*"}
		}
		return pt.any
	case isWildcard(domain):
		m, key = pt.wildcard, domain[1:]
	default:
		m = pt.exact
	}
	vh := m[key]
	if vh == nil {
		vh = &vhost{domain: domain}
		m[key] = vh
	}
	return vh
}

func (pt *portTable) all() []*vhost {
	var out []*vhost
	for _, v := range pt.exact {
		out = append(out, v)
	}
	for _, v := range pt.wildcard {
		out = append(out, v)
	}
	if pt.any != nil {
		out = append(out, pt.any)
	}
	return out
}

// lookup finds the virtual host for a lower-cased host the way Envoy picks one:
// exact domain, else the longest matching wildcard suffix, else "*".
func (pt *portTable) lookup(host string) *vhost {
	if !pt.scan {
		if vh := pt.exact[host]; vh != nil {
			return vh
		}
	} else if len(pt.hosts) > 0 {
		h := hostHash(host)
		for _, s := range pt.hosts {
			if s.hash == h && s.vh.domain == host {
				return s.vh
			}
		}
	}
	if len(pt.wildcard) > 0 {
		for i := 1; i < len(host); i++ { // i ≥ 1: a wildcard needs at least one character before the suffix
			if host[i] == '.' {
				if vh := pt.wildcard[host[i:]]; vh != nil {
					return vh
				}
			}
		}
	}
	return pt.any
}

// parentNamesGateway reports whether a parentRef names the gateway (ParentGateway).
// (The reference translator compares only name and namespace, translator.go:598-606;
// agpol also requires the Gateway group and kind, as Gateway API defines them.)
func parentNamesGateway(p gwapiv1.ParentReference, routeNS string, gw *snapshot.Gateway) bool {
	ref, ok := ParentGateway(p, routeNS)
	return ok && ref.Namespace == gw.Namespace && ref.Name == gw.Name
}

func (g *Graph) listenerInfos(gw *snapshot.Gateway) []*listenerInfo {
	ls := gw.Spec.Listeners
	out := make([]*listenerInfo, len(ls))
	for i, l := range ls {
		li := &listenerInfo{name: string(l.Name), section: string(l.Name), ns: gw.Namespace, port: int32(l.Port), protocol: l.Protocol, allowed: l.AllowedRoutes}
		if l.Hostname != nil {
			li.host = lower(string(*l.Hostname))
		}
		if l.Protocol != gwapiv1.HTTPProtocolType && l.Protocol != gwapiv1.HTTPSProtocolType {
			li.notProgrammed = &NotProgrammed{Why: NotProgrammedProtocol, Protocol: string(l.Protocol)}
		}
		if a := l.AllowedRoutes; a != nil {
			for _, k := range a.Kinds {
				if (k.Group != nil && *k.Group != "" && string(*k.Group) != gwapiv1.GroupName) || k.Kind != "HTTPRoute" {
					// translator.go getSupportedKinds + 180-188: one unsupported kind makes the
					// listener ResolvedRefs=False/InvalidRouteKinds, and it is skipped entirely.
					li.notProgrammed = &NotProgrammed{Why: NotProgrammedInvalidKinds, Kind: groupKind(k)}
					break
				}
			}
		}
		g.allowedRoutes(li, GatewayRef(gw.Namespace, gw.Name), gw.Source, fmt.Sprintf("spec.listeners[%d].allowedRoutes.namespaces.selector", i))
		li.named = li
		for _, prev := range out[:i] {
			if prev.name == li.name {
				li.named = prev
				break
			}
		}
		out[i] = li
	}
	// listener.go validateListeners: TCP/UDP sharing a port with HTTP/HTTPS/TLS conflicts
	// all listeners on the port; HTTP/HTTPS/TLS listeners on one port with the same
	// hostname conflict each other. Conflicted listeners are not programmed.
	byPort := map[int32][]*listenerInfo{}
	for _, li := range out {
		byPort[li.port] = append(byPort[li.port], li)
	}
	for port, lis := range byPort {
		hasTCP, hasHTTP := false, false
		for _, li := range lis {
			switch li.protocol {
			case gwapiv1.TCPProtocolType, gwapiv1.UDPProtocolType:
				hasTCP = true
			case gwapiv1.HTTPProtocolType, gwapiv1.HTTPSProtocolType, gwapiv1.TLSProtocolType:
				hasHTTP = true
			}
		}
		if hasTCP && hasHTTP {
			np := &NotProgrammed{Why: NotProgrammedProtocolConflict, Port: port}
			for _, li := range lis {
				li.notProgrammed = np
			}
			continue
		}
		seen := map[string]*listenerInfo{}
		for _, li := range lis {
			if li.protocol != gwapiv1.HTTPProtocolType && li.protocol != gwapiv1.HTTPSProtocolType && li.protocol != gwapiv1.TLSProtocolType {
				continue
			}
			if other, ok := seen[li.host]; ok {
				np := &NotProgrammed{Why: NotProgrammedHostnameConflict, Port: port, Listener: other.name, Other: li.name, Host: li.host}
				other.notProgrammed, li.notProgrammed = np, np
				continue
			}
			seen[li.host] = li
		}
	}
	return out
}

// allowedRoutes reads a listener's allowedRoutes namespace selector, reporting an
// unusable one as a problem of its owner at field.
func (g *Graph) allowedRoutes(li *listenerInfo, owner Ref, src snapshot.Source, field string) {
	a := li.allowed
	if a == nil || a.Namespaces == nil || a.Namespaces.From == nil || *a.Namespaces.From != gwapiv1.NamespacesFromSelector {
		return
	}
	if a.Namespaces.Selector == nil {
		g.problem(owner, src, field, Problem{Why: ProblemSelectorMissing, Listener: li.name})
	} else if sel, err := metav1.LabelSelectorAsSelector(a.Namespaces.Selector); err != nil {
		g.problem(owner, src, field, Problem{Why: ProblemSelectorInvalid, Listener: li.name, Err: err.Error()})
	} else {
		li.selector = sel
	}
}

func groupKind(k gwapiv1.RouteGroupKind) string {
	g := gwapiv1.GroupName
	if k.Group != nil && *k.Group != "" {
		g = string(*k.Group)
	}
	return string(k.Kind) + "." + g
}

// attach decides one (listener, route) pair over the route's parentRefs naming the
// gateway; the most favourable outcome across those parentRefs wins.
func (g *Graph) attach(gw *snapshot.Gateway, li *listenerInfo, ri *routeInfo, refs []int) Attachment {
	best := Attachment{Gateway: gw, Listener: li.name, Route: ri.route, ParentRef: -1}
	var bestMiss AttachMiss
	bestRank := -1
	for _, i := range refs {
		p := ri.route.Spec.ParentRefs[i]
		rank, reason := 0, ""
		var miss AttachMiss
		switch {
		case p.SectionName != nil && string(*p.SectionName) != li.section:
			reason, miss = ReasonNoMatchingParent, AttachMiss{Why: AttachSectionName, SectionName: string(*p.SectionName)}
		case p.Port != nil && int32(*p.Port) != li.port:
			reason, miss = ReasonNoMatchingParent, AttachMiss{Why: AttachPort, Port: int32(*p.Port), ListenerPort: li.port}
		default:
			if why := g.notAllowed(li, ri.route.Namespace); why != nil {
				rank, reason, miss = 1, ReasonNotAllowedByListeners, *why
			} else if hosts := intersectHostnames(li.host, ri.hosts); len(hosts) == 0 {
				rank, reason = 2, ReasonNoMatchingListenerHostname
				miss = AttachMiss{Why: AttachHostnames, RouteHostnames: ri.hosts, ListenerHost: li.host}
			} else if li.notProgrammed != nil {
				rank, reason = 3, ReasonListenerNotProgrammed
				miss = AttachMiss{Why: AttachListenerNotProgrammed, NotProgrammed: li.notProgrammed}
			} else {
				rank, reason = 4, ReasonAccepted
				if rank > bestRank {
					best.Hostnames = hosts
				}
			}
		}
		if rank > bestRank {
			bestRank, best.Reason, bestMiss = rank, reason, miss
			best.ParentRef = i
			if rank == 0 {
				best.ParentRef = -1
			}
		}
	}
	best.Accepted = bestRank == 4
	if !best.Accepted {
		best.Hostnames = nil
		m := bestMiss
		best.Miss = &m
	}
	return best
}

// notAllowed returns why the listener's allowedRoutes rejects a route namespace, or nil.
// routes.go isAllowedByListener: no allowedRoutes or no from → Same; Selector matches
// the labels of the Namespace object (an absent Namespace has no labels); None rejects.
// Kinds are checked in listenerInfos (any kind other than HTTPRoute unprograms the listener).
func (g *Graph) notAllowed(li *listenerInfo, routeNS string) *AttachMiss {
	from := gwapiv1.NamespacesFromSame
	if a := li.allowed; a != nil && a.Namespaces != nil && a.Namespaces.From != nil {
		from = *a.Namespaces.From
	}
	switch from {
	case gwapiv1.NamespacesFromAll:
		return nil
	case gwapiv1.NamespacesFromSame:
		if routeNS == li.ns {
			return nil
		}
		return &AttachMiss{Why: AttachNotSameNamespace, Namespace: routeNS, ListenerNamespace: li.ns, ListenerSet: li.set != nil}
	case gwapiv1.NamespacesFromSelector:
		if li.selector == nil {
			// allowedRoutes: no selector, or one LabelSelectorAsSelector refuses.
			m := &AttachMiss{Why: AttachSelectorUnusable}
			if sel := li.allowed.Namespaces.Selector; sel != nil {
				if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
					m.SelectorErr = err.Error()
				}
			}
			return m
		}
		if li.selector.Matches(labels.Set(g.nsLabels[routeNS])) {
			return nil
		}
		return &AttachMiss{Why: AttachSelectorMismatch, Namespace: routeNS, ListenerNamespace: li.ns, Selector: li.selector.String()}
	case gwapiv1.NamespacesFromNone:
		return &AttachMiss{Why: AttachFromNone}
	default:
		return &AttachMiss{Why: AttachFromUnknown, From: string(from)}
	}
}
