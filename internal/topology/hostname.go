package topology

import "strings"

// Hostname semantics follow Gateway API (apis/v1 gateway_types.go Listener.Hostname,
// httproute_types.go HTTPRouteSpec.Hostnames) as the kube-agentic-networking translator
// implements them (pkg/translator/routes.go isHostnameSubset, getIntersectingHostnames).
// All comparisons are case-insensitive: callers pass lower-cased names.

// isWildcard reports whether h is a "*.suffix" wildcard hostname.
func isWildcard(h string) bool { return strings.HasPrefix(h, "*.") }

// HostMatches reports whether a request host matches a hostname pattern: "" or "*"
// match anything; "*.example.com" matches any host with at least one more label in
// front of ".example.com" (a.example.com, a.b.example.com) but not example.com;
// otherwise the names must be equal. Case-insensitive; a ":port" suffix of host is ignored.
func HostMatches(pattern, host string) bool {
	return hostMatches(lower(pattern), lower(StripPort(host)))
}

func hostMatches(pattern, host string) bool {
	switch {
	case pattern == "" || pattern == "*":
		return true
	case isWildcard(pattern):
		suffix := pattern[1:] // ".example.com"
		return len(host) > len(suffix) && strings.HasSuffix(host, suffix)
	default:
		return pattern == host
	}
}

// StripPort removes a trailing ":port" from an authority (IPv6 literals in brackets kept).
func StripPort(host string) string {
	if strings.IndexByte(host, ':') < 0 { // IndexByte is vectorised, LastIndexByte is not
		return host
	}
	i := strings.LastIndexByte(host, ':')
	if strings.IndexByte(host, ']') > i { // "[::1]" without port
		return host
	}
	for _, c := range host[i+1:] {
		if c < '0' || c > '9' {
			return host
		}
	}
	return host[:i]
}

// hostPort returns the numeric port of an authority, or 0.
func hostPort(host string) int {
	if strings.IndexByte(host, ':') < 0 {
		return 0
	}
	i := strings.LastIndexByte(host, ':')
	if i < 0 || i == len(host)-1 || strings.IndexByte(host, ']') > i {
		return 0
	}
	n := 0
	for _, c := range host[i+1:] {
		if c < '0' || c > '9' {
			return 0
		}
		if n = n*10 + int(c-'0'); n > 65535 {
			return 0 // checked after each digit: "70000" is no port either
		}
	}
	return n
}

// hostnameSubset reports whether a route hostname is allowed by a listener hostname
// (routes.go isHostnameSubset): equal names; a listener wildcard "*.example.com" admits
// "foo.example.com", "a.b.example.com" and "*.foo.example.com" but not "example.com";
// a route wildcard "*.example.com" admits an exact listener "example.com" or
// "foo.example.com".
func hostnameSubset(route, listener string) bool {
	if route == listener {
		return true
	}
	if isWildcard(listener) {
		suffix := listener[1:]
		if isWildcard(route) {
			return strings.HasSuffix(route[1:], suffix)
		}
		return strings.HasSuffix(route, suffix)
	}
	if isWildcard(route) {
		return listener == route[2:] || strings.HasSuffix(listener, route[1:])
	}
	return false
}

// intersectHostnames returns the virtual host domains a route serves on a listener
// (routes.go getIntersectingHostnames): listener without hostname → the route's
// hostnames, or "*" when it has none; route without hostnames → the listener's
// hostname; otherwise, per intersecting route hostname, the more specific of the two.
// The result is deduplicated, in route hostname order; nil means no intersection.
func intersectHostnames(listener string, routeHosts []string) []string {
	if listener == "" {
		if len(routeHosts) == 0 {
			return []string{"*"}
		}
		return dedupe(routeHosts)
	}
	if len(routeHosts) == 0 {
		return []string{listener}
	}
	var out []string
	for _, h := range routeHosts {
		if !hostnameSubset(h, listener) {
			continue
		}
		if isWildcard(h) && !isWildcard(listener) {
			out = append(out, listener)
		} else {
			out = append(out, h)
		}
	}
	return dedupe(out)
}

func dedupe(in []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// hostnameSpecificity ranks how specifically a pattern matches: exact names beat
// wildcards, longer wildcards beat shorter ones, and no hostname ranks last.
func hostnameSpecificity(pattern string) int {
	switch {
	case pattern == "" || pattern == "*":
		return 0
	case isWildcard(pattern):
		return 1 + len(pattern)
	default:
		return 1 << 20
	}
}

// HostnamesIntersect reports whether a listener with hostname listener (empty: any)
// serves any of a route's hostnames (none: any): whether the data plane programs the
// route on that listener at all.
func HostnamesIntersect(listener string, routeHosts []string) bool {
	return intersectHostnames(strings.ToLower(listener), lowerAll(routeHosts)) != nil
}

func lowerAll(in []string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = strings.ToLower(s)
	}
	return out
}
