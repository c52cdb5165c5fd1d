//lint:file-ignore SA1019 the evaluator reads every field the translator may write, deprecated Envoy fields included

package differential

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"google.golang.org/protobuf/proto"
)

// EnvoyRequest is a request as the data plane sees it.
type EnvoyRequest struct {
	Port uint32
	// SNI is the TLS server name the client sends (HTTPS listeners).
	SNI string
	// Principal is the URI SAN of the client certificate; "" without one.
	Principal string
	// CertWithoutSPIFFE: the caller presents a CA-signed certificate without a SPIFFE
	// ID (Principal is then "").
	CertWithoutSPIFFE bool
	Method            string
	Path              string // with the query string
	Host              string // :authority
	Headers           map[string]string
	Time              time.Time
	// MCP is the MCP filter's metadata (nil for a request that is not JSON-RPC).
	MCP *MCPMeta
}

// MCPMeta is what the MCP filter puts in the mcp_proxy metadata namespace.
type MCPMeta struct {
	Method string
	// ParamsName is params.name ("" when the request has none).
	ParamsName string
}

// Outcome kinds.
const (
	OutcomeHandshake = "handshake" // the TLS handshake fails: no request
	OutcomeForward   = "forward"   // the router forwards to Cluster
	OutcomeNoRoute   = "no-route"  // 404 from the router
	OutcomeDirect    = "direct"    // a direct response (500 for a broken rule)
	OutcomeRedirect  = "redirect"  // a redirect
	OutcomeNoChain   = "no-listen" // nothing listens (no listener on the port, no filter chain)
)

// Path is where one request goes: a forward to one weighted cluster, or a route
// without a cluster. Its Decide evaluates the HTTP filters for that path.
type Path struct {
	Kind    string
	Cluster string
	Route   string
	// Tie is set when another route of the same precedence also matches (the
	// translator's order among them is not specified).
	Tie bool

	cfg     *EnvoyConfig
	ch      *chain
	route   *routev3.Route
	cluster *routev3.WeightedCluster_ClusterWeight
}

// Paths routes req and returns one Path per weighted cluster the route may choose
// (a single Path when no cluster is chosen).
func (cfg *EnvoyConfig) Paths(req *EnvoyRequest) []*Path {
	ch := cfg.chainFor(req)
	if ch == nil {
		return []*Path{{Kind: OutcomeNoChain}}
	}
	if ch.requireClientCert && (req.Principal == "" && !req.CertWithoutSPIFFE || req.CertWithoutSPIFFE && ch.spiffeBundle) {
		// No client certificate, or one the validation context does not accept (a
		// SPIFFE bundle validates SVIDs only; a CA is assumed to have issued the
		// certificate of a cert: caller).
		return []*Path{{Kind: OutcomeHandshake, cfg: cfg, ch: ch}}
	}
	rc := cfg.Routes[ch.routeName]
	vh := selectVirtualHost(rc, req.Host)
	if vh == nil {
		return []*Path{{Kind: OutcomeNoRoute, cfg: cfg, ch: ch}}
	}
	var hit *routev3.Route
	tie := false
	for _, r := range vh.GetRoutes() {
		if !routeMatches(r.GetMatch(), req) {
			continue
		}
		if hit == nil {
			hit = r
			continue
		}
		if samePrecedence(hit.GetMatch(), r.GetMatch()) && !sameAction(hit, r) {
			tie = true
		}
		break
	}
	if hit == nil {
		return []*Path{{Kind: OutcomeNoRoute, cfg: cfg, ch: ch}}
	}
	switch a := hit.GetAction().(type) {
	case *routev3.Route_Route:
		var out []*Path
		for _, cw := range a.Route.GetWeightedClusters().GetClusters() {
			out = append(out, &Path{Kind: OutcomeForward, Cluster: cw.GetName(), Route: hit.GetName(), Tie: tie, cfg: cfg, ch: ch, route: hit, cluster: cw})
		}
		if c := a.Route.GetCluster(); c != "" {
			out = append(out, &Path{Kind: OutcomeForward, Cluster: c, Route: hit.GetName(), Tie: tie, cfg: cfg, ch: ch, route: hit})
		}
		return out
	case *routev3.Route_Redirect:
		return []*Path{{Kind: OutcomeRedirect, Route: hit.GetName(), Tie: tie, cfg: cfg, ch: ch, route: hit}}
	default:
		return []*Path{{Kind: OutcomeDirect, Route: hit.GetName(), Tie: tie, cfg: cfg, ch: ch, route: hit}}
	}
}

// sameAction: two routes that do the same thing (the same rule attached twice).
func sameAction(a, b *routev3.Route) bool {
	return proto.Equal(a.GetRoute(), b.GetRoute()) && proto.Equal(a.GetRedirect(), b.GetRedirect()) &&
		proto.Equal(a.GetDirectResponse(), b.GetDirectResponse())
}

func (cfg *EnvoyConfig) chainFor(req *EnvoyRequest) *chain {
	chains := cfg.Listeners[req.Port]
	// Filter chain match: a chain naming the SNI first, then a chain without server names.
	for _, c := range chains {
		for _, n := range c.serverNames {
			if serverNameMatches(n, req.SNI) {
				return c
			}
		}
	}
	for _, c := range chains {
		if len(c.serverNames) == 0 {
			return c
		}
	}
	return nil
}

func serverNameMatches(pattern, sni string) bool {
	if sni == "" {
		return false
	}
	if strings.HasPrefix(pattern, "*.") {
		return strings.HasSuffix(sni, pattern[1:]) && len(sni) > len(pattern)-1
	}
	return pattern == sni
}

// selectVirtualHost is Envoy's domain search: exact, then the longest suffix wildcard,
// then the longest prefix wildcard, then "*". The route configuration ignores the port.
func selectVirtualHost(rc *routev3.RouteConfiguration, host string) *routev3.VirtualHost {
	if rc == nil {
		return nil
	}
	h := strings.ToLower(host)
	if rc.GetIgnorePortInHostMatching() {
		if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
			h = h[:i]
		}
	}
	var best *routev3.VirtualHost
	bestRank, bestLen := 99, -1
	for _, vh := range rc.GetVirtualHosts() {
		for _, d := range vh.GetDomains() {
			d = strings.ToLower(d)
			rank, l := -1, 0
			switch {
			case d == h:
				rank, l = 0, len(d)
			case d == "*":
				rank = 3
			case strings.HasPrefix(d, "*") && strings.HasSuffix(h, d[1:]) && len(h) > len(d)-1:
				rank, l = 1, len(d)
			case strings.HasSuffix(d, "*") && strings.HasPrefix(h, d[:len(d)-1]) && len(h) > len(d)-1:
				rank, l = 2, len(d)
			}
			if rank < 0 {
				continue
			}
			if rank < bestRank || (rank == bestRank && l > bestLen) {
				best, bestRank, bestLen = vh, rank, l
			}
		}
	}
	return best
}

func splitPath(p string) (path, query string) {
	if i := strings.IndexByte(p, '?'); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, ""
}

func routeMatches(m *routev3.RouteMatch, req *EnvoyRequest) bool {
	path, query := splitPath(req.Path)
	cs := m.GetCaseSensitive() == nil || m.GetCaseSensitive().GetValue()
	cmp := func(a, b string) bool {
		if cs {
			return a == b
		}
		return strings.EqualFold(a, b)
	}
	switch ps := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		if len(path) < len(ps.Prefix) || !cmp(path[:len(ps.Prefix)], ps.Prefix) {
			return false
		}
	case *routev3.RouteMatch_Path:
		if !cmp(path, ps.Path) {
			return false
		}
	case *routev3.RouteMatch_PathSeparatedPrefix:
		p := ps.PathSeparatedPrefix
		if len(path) < len(p) || !cmp(path[:len(p)], p) {
			return false
		}
		if len(path) > len(p) && path[len(p)] != '/' {
			return false
		}
	case *routev3.RouteMatch_SafeRegex:
		re, err := compileRE2(ps.SafeRegex.GetRegex())
		if err != nil || !fullMatch(re, path) {
			return false
		}
	default:
		return false
	}
	for _, hm := range m.GetHeaders() {
		if !headerMatches(hm, req) {
			return false
		}
	}
	if len(m.GetQueryParameters()) > 0 {
		params := parseQuery(query)
		for _, qm := range m.GetQueryParameters() {
			vals, ok := params[qm.GetName()]
			if !ok {
				return false
			}
			// Envoy looks at the first value of a repeated parameter.
			if sm := qm.GetStringMatch(); sm != nil && !stringMatches(sm, vals[0]) {
				return false
			}
		}
	}
	return true
}

func parseQuery(q string) map[string][]string {
	out := map[string][]string{}
	for _, kv := range strings.Split(q, "&") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		out[k] = append(out[k], v)
	}
	return out
}

// samePrecedence is the translator's sort key (httproute.go sortRoutes): two routes
// with the same key keep the order the listers gave them.
func samePrecedence(a, b *routev3.RouteMatch) bool {
	return (a.GetPath() != "") == (b.GetPath() != "") &&
		len(pathMatchValue(a)) == len(pathMatchValue(b)) &&
		len(a.GetHeaders()) == len(b.GetHeaders()) &&
		len(a.GetQueryParameters()) == len(b.GetQueryParameters())
}

func pathMatchValue(m *routev3.RouteMatch) string {
	switch {
	case m.GetPath() != "":
		return m.GetPath()
	case m.GetPrefix() != "":
		return m.GetPrefix()
	case m.GetPathSeparatedPrefix() != "":
		return m.GetPathSeparatedPrefix()
	case m.GetSafeRegex() != nil:
		return strings.ReplaceAll(strings.TrimSuffix(m.GetSafeRegex().GetRegex(), "(/.*)?"), `\`, "")
	}
	return ""
}

// header returns a request header as Envoy's header matchers see it (pseudo-headers included).
func (req *EnvoyRequest) header(name string) (string, bool) {
	switch strings.ToLower(name) {
	case ":method":
		return req.Method, true
	case ":path":
		return req.Path, true
	case ":authority", "host":
		return req.Host, true
	}
	v, ok := req.Headers[strings.ToLower(name)]
	return v, ok
}

func headerMatches(hm *routev3.HeaderMatcher, req *EnvoyRequest) bool {
	v, ok := req.header(hm.GetName())
	var m bool
	switch s := hm.GetHeaderMatchSpecifier().(type) {
	case *routev3.HeaderMatcher_PresentMatch:
		m = ok == s.PresentMatch
		if hm.GetInvertMatch() {
			return !m
		}
		return m
	case *routev3.HeaderMatcher_StringMatch:
		m = ok && stringMatches(s.StringMatch, v)
	case *routev3.HeaderMatcher_SafeRegexMatch:
		re, err := compileRE2(s.SafeRegexMatch.GetRegex())
		m = ok && err == nil && fullMatch(re, v)
	case *routev3.HeaderMatcher_ExactMatch:
		m = ok && v == s.ExactMatch
	case nil:
		m = ok
	default:
		panic(fmt.Sprintf("header matcher %T is not one the translator emits", s))
	}
	if hm.GetInvertMatch() {
		return !m
	}
	return m
}

func stringMatches(sm *matcherv3.StringMatcher, v string) bool {
	if sm.GetIgnoreCase() {
		v = strings.ToLower(v)
	}
	lower := func(s string) string {
		if sm.GetIgnoreCase() {
			return strings.ToLower(s)
		}
		return s
	}
	switch p := sm.GetMatchPattern().(type) {
	case *matcherv3.StringMatcher_Exact:
		return v == lower(p.Exact)
	case *matcherv3.StringMatcher_Prefix:
		return strings.HasPrefix(v, lower(p.Prefix))
	case *matcherv3.StringMatcher_Suffix:
		return strings.HasSuffix(v, lower(p.Suffix))
	case *matcherv3.StringMatcher_Contains:
		return strings.Contains(v, lower(p.Contains))
	case *matcherv3.StringMatcher_SafeRegex:
		re, err := compileRE2(p.SafeRegex.GetRegex())
		return err == nil && fullMatch(re, v)
	}
	panic(fmt.Sprintf("string matcher %T is not one the translator emits", sm.GetMatchPattern()))
}

var (
	reMu    sync.Mutex
	reCache = map[string]*regexp.Regexp{}
)

// compileRE2 compiles a Google RE2 regular expression (Go's regexp is RE2).
func compileRE2(s string) (*regexp.Regexp, error) {
	reMu.Lock()
	defer reMu.Unlock()
	if re, ok := reCache[s]; ok {
		return re, nil
	}
	re, err := regexp.Compile("^(?:" + s + ")$")
	if err != nil {
		return nil, err
	}
	reCache[s] = re
	return re, nil
}

func fullMatch(re *regexp.Regexp, s string) bool { return re.MatchString(s) }
