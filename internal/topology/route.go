package topology

import (
	"errors"
	"fmt"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Route sends a request through a gateway: it picks the listener, the virtual host,
// and the route rule that would serve it, and returns the rule's backends. The
// error is only for a gateway missing from the snapshot; a request nothing serves
// gets a result with an empty Listener or a nil Route and a Reason.
//
// Listener: among programmed HTTP/HTTPS listeners (only req.Listener if set) on
// req.Port, or on the port of a ":port" in req.Host when a listener uses that port,
// or on any port, whose hostname matches the host, the most specific hostname wins
// (exact, then the longest wildcard, then no hostname); ties go to the first listener
// in spec order.
//
// Route: the reference data plane has one route table per port shared by every
// listener on it (translator.go:148-160, 310-330); the other data planes isolate
// listeners, one table per listener (tableOf). The virtual host is the one whose
// domain matches the host most specifically (exact, longest wildcard, "*"); only its
// routes are considered (no fall-through to a less specific host), and the first
// match in precedence order (see precedes) wins.
func (g *Graph) Route(req RouteRequest) (*RouteResult, error) {
	res := &RouteResult{}
	if err := g.RouteInto(&req, res); err != nil {
		return nil, err
	}
	return res, nil
}

// RouteInto is Route writing into a result the caller owns (overwritten entirely), so
// that routing many requests allocates nothing: a request that reaches a rule allocates
// no memory; only the Miss of a request nothing serves is.
func (g *Graph) RouteInto(req *RouteRequest, res *RouteResult) error {
	gi := g.gatewayIndex(req.Gateway)
	if gi == nil {
		*res = RouteResult{}
		return fmt.Errorf("route request: %w: %s/%s", ErrGatewayNotFound, req.Gateway.Namespace, req.Gateway.Name)
	}
	*res = RouteResult{Gateway: gi.gw, GatewayKey: gi.key}
	host := strings.ToLower(StripPort(req.Host))
	port := req.Port
	if port == 0 && req.Listener == "" {
		if p := hostPort(req.Host); p != 0 && gi.hasPort(p) {
			port = p
		}
	}
	li, miss := gi.selectListener(req.Listener, port, host, req.Terse)
	if li == nil {
		res.Miss = miss
		if p := gi.portOf(req.Listener, port); p != 0 && gi.plainHTTPPort(p) {
			res.Port = p
			if miss != nil {
				miss.PlainHTTPPort = p
			}
		}
		return nil
	}
	res.Listener, res.Port = li.name, int(li.port)
	res.Protocol, res.ListenerPort = li.named.protocol, int(li.named.port)
	var vh *vhost
	if li.table != nil {
		vh = li.table.lookup(host)
	}
	if vh == nil {
		if req.Terse {
			return nil
		}
		if gi.plane.Agentic() {
			res.Miss = &RouteMiss{Why: MissNoHost, Gateway: gi.ref, Port: int(li.port), Host: host}
		} else {
			res.Miss = &RouteMiss{Why: MissNoHostIsolated, Gateway: gi.ref, Listener: li.name, Host: host}
		}
		return nil
	}
	res.Hostname = vh.domain

	r := request{path: req.Path, headers: req.Headers}
	if i := QueryStart(r.path); i >= 0 {
		if r.path[i] == '?' {
			r.rawQ = r.path[i+1:]
			if j := strings.IndexByte(r.rawQ, '#'); j >= 0 {
				r.rawQ = r.rawQ[:j]
			}
		}
		r.path = r.path[:i]
	}
	if r.path == "" {
		r.path = "/"
	}
	for i := range vh.entries {
		e := &vh.entries[i]
		if !e.matches(&r) {
			continue
		}
		if vh.uncertain != nil && i >= vh.uncertainAt {
			res.Uncertain = vh.uncertain
		}
		h := e.hit
		if m := h.method; m != "" && !strings.EqualFold(m, req.Method) {
			if !gi.plane.Agentic() {
				continue // other data planes check the method, as Gateway API says
			}
			res.IgnoredMethod = m
		}
		res.Route, res.RouteKey = h.route, h.routeKey
		res.RuleIndex, res.RuleName, res.MatchIndex = int(h.ruleIndex), h.ruleName, int(h.matchIndex)
		res.Backends, res.Redirect, res.RuleProblem = h.backends, h.redirect, h.problem
		res.RouteListener = h.listeners[0]
		for _, l := range h.listeners {
			if l == li.name {
				res.RouteListener = l
				break
			}
		}
		return nil
	}
	res.Uncertain = vh.uncertain
	if req.Terse {
		return nil
	}
	names := make([]string, len(vh.routes))
	for i, ri := range vh.routes {
		names[i] = ri.key
	}
	res.Miss = &RouteMiss{Why: MissNoRule, Gateway: gi.ref, Host: host, Routes: names, VirtualHost: vh.domain, Method: req.Method, Path: req.Path}
	return nil
}

// QueryStart is the index of the first '?' or '#' of a request path, or -1: where the
// path proper ends. (Two vectorised IndexByte scans; strings.IndexAny builds a set for
// every call.)
func QueryStart(path string) int {
	q := strings.IndexByte(path, '?')
	if q == 0 {
		return 0
	}
	scan := path
	if q > 0 {
		scan = path[:q] // a '#' counts only before the '?'
	}
	if h := strings.IndexByte(scan, '#'); h >= 0 {
		return h
	}
	return q
}

// URLPath is a request path without its query and fragment (QueryStart).
func URLPath(path string) string {
	if i := QueryStart(path); i >= 0 {
		return path[:i]
	}
	return path
}

// ErrGatewayNotFound is returned by Route for a gateway missing from the snapshot.
var ErrGatewayNotFound = errors.New("gateway not found")

func (gi *gatewayIndex) hasPort(p int) bool {
	for _, li := range gi.listeners {
		if int(li.port) == p {
			return true
		}
	}
	return false
}

// portOf is the port a request is aimed at: the named listener's, else the given one.
func (gi *gatewayIndex) portOf(listener string, port int) int {
	if listener != "" {
		for _, li := range gi.listeners {
			if li.name == listener {
				if port != 0 && int(li.port) != port {
					return 0
				}
				return int(li.port)
			}
		}
		return 0
	}
	return port
}

// plainHTTPPort reports whether the reference data plane accepts any host on a port:
// the port's first listener is HTTP and at least one listener on it is programmed
// (translator.go:340-356: one Envoy listener per port, with a single filter chain
// templated on the first listener when that one is HTTP).
func (gi *gatewayIndex) plainHTTPPort(port int) bool {
	first, programmed := true, false
	for _, li := range gi.listeners {
		if int(li.port) != port {
			continue
		}
		if first && li.protocol != gwapiv1.HTTPProtocolType {
			return false
		}
		first = false
		programmed = programmed || li.notProgrammed == nil
	}
	return programmed
}

// selectListener picks the listener that takes a request, or says why none does
// (unless terse).
func (gi *gatewayIndex) selectListener(name string, port int, host string, terse bool) (*listenerInfo, *RouteMiss) {
	if name == "" {
		// The most specific hostname among the programmed listeners on the port that
		// accept the host; ties go to the first in spec order. Read from gi.sel.
		best, bestScore := -1, -1
		for i := range gi.sel {
			s := &gi.sel[i]
			if !s.programmed || (port != 0 && int(s.port) != port) || !hostMatches(s.host, host) {
				continue
			}
			if s.specificity > bestScore {
				best, bestScore = i, s.specificity
			}
		}
		switch {
		case best >= 0:
			return gi.sel[best].li, nil
		case terse:
			return nil, nil
		}
		return nil, &RouteMiss{Why: MissNoListener, Gateway: gi.ref, Port: port, Host: host}
	}
	// The named listener, which must take the request. (Every listener of that name is
	// checked: Gateway API forbids repeating one, but a manifest may.)
	var best *listenerInfo
	bestScore := -1
	for _, li := range gi.listeners {
		if li.name != name {
			continue
		}
		if terse && (li.notProgrammed != nil || (port != 0 && int(li.port) != port) || !hostMatches(li.host, host)) {
			return nil, nil
		}
		switch {
		case li.notProgrammed != nil:
			return nil, &RouteMiss{Why: MissListenerNotProgrammed, Gateway: gi.ref, Listener: li.name, Host: host, NotProgrammed: li.notProgrammed}
		case port != 0 && int(li.port) != port:
			return nil, &RouteMiss{Why: MissListenerPort, Gateway: gi.ref, Listener: li.name, Host: host, Port: port, ListenerPort: int(li.port)}
		case !hostMatches(li.host, host):
			return nil, &RouteMiss{Why: MissListenerHost, Gateway: gi.ref, Listener: li.name, Host: host, ListenerHost: li.host}
		}
		if s := hostnameSpecificity(li.host); s > bestScore {
			best, bestScore = li, s
		}
	}
	if best != nil || terse {
		return best, nil
	}
	return nil, &RouteMiss{Why: MissNoListenerNamed, Gateway: gi.ref, Listener: name, Host: host}
}

// queryValue returns the value of the first parameter of a raw query named name, as
// Envoy's query_parameters matcher sees it: values are compared raw (not
// percent-decoded: the router's RouteEntryImplBase::matchRoute parses the query with
// Http::Utility::parseQueryString, not parseAndDecodeQueryString, which only other
// filters use), the first of repeated names counts, a parameter without "=" has the
// empty value, and empty pairs ("a=1&&b=2") are skipped. It scans the query instead of building a map, so matching
// allocates nothing.
func queryValue(raw, name string) (string, bool) {
	for raw != "" {
		var kv string
		kv, raw, _ = strings.Cut(raw, "&")
		if kv == "" {
			continue
		}
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v, true
		}
	}
	return "", false
}

// ListenerOption is a listener that would take a request naming no listener and no
// port, and whether the request reaches a route rule there.
type ListenerOption struct {
	Name     string
	Protocol gwapiv1.ProtocolType
	Port     int
	Routed   bool

	specificity int
}

// ListenerOptions appends to buf (and returns) the programmed listeners of req.Gateway
// that accept req.Host, most specific hostname first (ties in spec order: the order
// Route picks in), each with whether req reaches a route rule through it. It is for a
// request that names no listener and no port, and appends nothing when the gateway is
// missing or the request names either. It allocates only to grow buf.
func (g *Graph) ListenerOptions(req RouteRequest, buf []ListenerOption) []ListenerOption {
	gi := g.gatewayIndex(req.Gateway)
	if gi == nil || req.Listener != "" || req.Port != 0 || (hostPort(req.Host) != 0 && gi.hasPort(hostPort(req.Host))) {
		return buf
	}
	host := strings.ToLower(StripPort(req.Host))
	var res RouteResult
	start := len(buf)
	for i := range gi.sel {
		s := &gi.sel[i]
		if !s.programmed || !hostMatches(s.host, host) {
			continue
		}
		r := req
		r.Listener, r.Terse = s.li.name, true
		_ = g.RouteInto(&r, &res) // the gateway exists
		o := ListenerOption{Name: s.li.name, Protocol: s.li.protocol, Port: int(s.li.port), Routed: res.Route != nil, specificity: s.specificity}
		buf = append(buf, o)
		// Insertion sort, stable: most specific first, spec order among equals.
		for j := len(buf) - 1; j > start && buf[j-1].specificity < buf[j].specificity; j-- {
			buf[j-1], buf[j] = buf[j], buf[j-1]
		}
	}
	return buf
}
