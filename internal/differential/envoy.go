//lint:file-ignore SA1019 the evaluator reads every field the translator may write, deprecated Envoy fields included

package differential

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	rbacconfigv3 "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	rbacv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	envoyproxytypes "github.com/envoyproxy/go-control-plane/pkg/cache/types"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// The names Envoy uses for the dynamic metadata the RBAC filter writes and for the
// MCP filter's namespace.
const (
	rbacMetadataNamespace = "envoy.filters.http.rbac"
	mcpMetadataNamespace  = "mcp_proxy"
	shadowPolicyIDKey     = "shadow_effective_policy_id"
)

// EnvoyConfig is the part of one gateway's xDS resources a request meets: listeners
// by port (filter chains with their HTTP filters) and route configurations by name.
type EnvoyConfig struct {
	Listeners map[uint32][]*chain
	Routes    map[string]*routev3.RouteConfiguration
}

type chain struct {
	serverNames []string
	tls         bool
	routeName   string
	filters     []httpFilter
}

type filterKind int

const (
	filterOther filterKind = iota
	filterRBAC
	filterExtAuthz
	filterRouter
)

type httpFilter struct {
	name     string
	kind     filterKind
	rbac     *rbacv3.RBAC
	extAuthz *extauthzv3.ExtAuthz
}

func newEnvoyConfig(res map[resourcev3.Type][]envoyproxytypes.Resource) (*EnvoyConfig, error) {
	cfg := &EnvoyConfig{Listeners: map[uint32][]*chain{}, Routes: map[string]*routev3.RouteConfiguration{}}
	for _, r := range res[resourcev3.RouteType] {
		rc := r.(*routev3.RouteConfiguration)
		cfg.Routes[rc.GetName()] = rc
	}
	for _, r := range res[resourcev3.ListenerType] {
		l := r.(*listenerv3.Listener)
		port := l.GetAddress().GetSocketAddress().GetPortValue()
		for _, fc := range l.GetFilterChains() {
			c := &chain{serverNames: fc.GetFilterChainMatch().GetServerNames(), tls: fc.GetTransportSocket() != nil}
			for _, f := range fc.GetFilters() {
				hcm := &hcmv3.HttpConnectionManager{}
				if err := f.GetTypedConfig().UnmarshalTo(hcm); err != nil {
					return nil, fmt.Errorf("listener %s: filter %s is not an HTTP connection manager: %w", l.GetName(), f.GetName(), err)
				}
				c.routeName = hcm.GetRds().GetRouteConfigName()
				for _, hf := range hcm.GetHttpFilters() {
					pf, err := parseHTTPFilter(hf)
					if err != nil {
						return nil, err
					}
					c.filters = append(c.filters, pf)
				}
			}
			cfg.Listeners[port] = append(cfg.Listeners[port], c)
		}
	}
	return cfg, nil
}

func parseHTTPFilter(hf *hcmv3.HttpFilter) (httpFilter, error) {
	f := httpFilter{name: hf.GetName()}
	tc := hf.GetTypedConfig()
	switch {
	case tc.MessageIs(&rbacv3.RBAC{}):
		f.kind, f.rbac = filterRBAC, &rbacv3.RBAC{}
		if err := tc.UnmarshalTo(f.rbac); err != nil {
			return f, err
		}
	case tc.MessageIs(&extauthzv3.ExtAuthz{}):
		f.kind, f.extAuthz = filterExtAuthz, &extauthzv3.ExtAuthz{}
		if err := tc.UnmarshalTo(f.extAuthz); err != nil {
			return f, err
		}
	case strings.HasSuffix(tc.GetTypeUrl(), "envoy.extensions.filters.http.router.v3.Router"):
		f.kind = filterRouter
	}
	return f, nil
}

// EnvoyRequest is a request as the data plane sees it.
type EnvoyRequest struct {
	Port uint32
	// SNI is the TLS server name the client sends (HTTPS listeners).
	SNI string
	// Principal is the URI SAN of the client certificate; "" without one.
	Principal string
	Method    string
	Path      string // with the query string
	Host      string // :authority
	Headers   map[string]string
	Time      time.Time
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
	OutcomeForward  = "forward"   // the router forwards to Cluster
	OutcomeNoRoute  = "no-route"  // 404 from the router
	OutcomeDirect   = "direct"    // a direct response (500 for a broken rule)
	OutcomeRedirect = "redirect"  // a redirect
	OutcomeNoChain  = "no-listen" // nothing listens (no listener on the port, no filter chain)
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

// Verdicts of the data plane.
const (
	VerdictAllow = "allow"
	VerdictDeny  = "deny"
)

// Decision is the outcome of the HTTP filters for one path under one set of
// authorizer answers.
type Decision struct {
	Verdict string
	// By is the filter that denied ("" for allow); Level its level (gateway or
	// backend; "" for an authorizer both levels enabled).
	By, Level string
	// Consulted are the ext_authz filters (by index) the request reached and enabled.
	Consulted []int
}

// filterLevel is the level of one of the translator's RBAC filters, by its name.
func filterLevel(name string) string {
	switch {
	case strings.Contains(name, "gateway"):
		return "gateway"
	case strings.Contains(name, "backend"):
		return "backend"
	}
	return ""
}

// ExtAuthzFilters lists the indexes of the path's ext_authz filters.
func (p *Path) ExtAuthzFilters() []int {
	if p.ch == nil {
		return nil
	}
	var out []int
	for i, f := range p.ch.filters {
		if f.kind == filterExtAuthz {
			out = append(out, i)
		}
	}
	return out
}

// ExtAuthzKey is the metadata key that enables ext_authz filter i.
func (p *Path) ExtAuthzKey(i int) string {
	segs := p.ch.filters[i].extAuthz.GetFilterEnabledMetadata().GetPath()
	if len(segs) == 0 {
		return ""
	}
	return segs[0].GetKey()
}

// Decide runs the HTTP filters of the path in order. answer says what the authorizer
// behind an enabled ext_authz filter answers (true allows), given the levels of the
// RBAC filters whose shadow rules enabled it.
func (p *Path) Decide(req *EnvoyRequest, answer func(levels []string) bool) (Decision, error) {
	if p.ch == nil {
		return Decision{Verdict: VerdictDeny, By: "no listener"}, nil
	}
	// envoy.filters.http.rbac dynamic metadata: key -> levels of the filters that wrote it.
	md := map[string][]string{}
	var d Decision
	for i, f := range p.ch.filters {
		switch f.kind {
		case filterRBAC:
			cfg, shadowPrefix := p.rbacFor(f)
			if sh := cfg.GetShadowRules(); sh != nil {
				id, err := p.engineMatch(sh, req)
				if err != nil {
					return d, err
				}
				if id != "" {
					k := shadowPrefix + shadowPolicyIDKey
					md[k] = append(md[k], filterLevel(f.name))
				}
			}
			if rules := cfg.GetRules(); rules != nil {
				id, err := p.engineMatch(rules, req)
				if err != nil {
					return d, err
				}
				allowed := (rules.GetAction() == rbacconfigv3.RBAC_ALLOW) == (id != "")
				if rules.GetAction() == rbacconfigv3.RBAC_LOG {
					allowed = true
				}
				if !allowed {
					d.Verdict, d.By, d.Level = VerdictDeny, f.name, filterLevel(f.name)
					return d, nil
				}
			}
			if cfg.GetMatcher() != nil {
				return d, fmt.Errorf("filter %s: RBAC matcher is not a config type the translator emits", f.name)
			}
		case filterExtAuthz:
			levels, on := extAuthzEnabled(f.extAuthz, md)
			if !on {
				continue
			}
			d.Consulted = append(d.Consulted, i)
			if !answer(levels) {
				d.Verdict, d.By = VerdictDeny, f.name
				if len(levels) == 1 {
					d.Level = levels[0]
				}
				return d, nil
			}
		case filterRouter:
			d.Verdict = VerdictAllow
			return d, nil
		}
	}
	d.Verdict = VerdictAllow
	return d, nil
}

// rbacFor is the RBAC config the filter applies on this path: the most specific
// RBACPerRoute (weighted cluster, route, virtual host) by the filter's name, else the
// filter's own; and the prefix of the shadow metadata keys (a route-local non-empty
// shadow_rules_stat_prefix overrides the filter's).
func (p *Path) rbacFor(f httpFilter) (*rbacv3.RBAC, string) {
	var perRoute *anypb.Any
	if p.cluster != nil {
		perRoute = p.cluster.GetTypedPerFilterConfig()[f.name]
	}
	if perRoute == nil && p.route != nil {
		perRoute = p.route.GetTypedPerFilterConfig()[f.name]
	}
	if perRoute != nil {
		pr := &rbacv3.RBACPerRoute{}
		if err := perRoute.UnmarshalTo(pr); err == nil {
			prefix := f.rbac.GetShadowRulesStatPrefix()
			if pr.GetRbac().GetShadowRulesStatPrefix() != "" {
				prefix = pr.GetRbac().GetShadowRulesStatPrefix()
			}
			// RBACPerRoute without rbac disables the filter on the route.
			if pr.GetRbac() == nil {
				return &rbacv3.RBAC{}, prefix
			}
			return pr.GetRbac(), prefix
		}
	}
	return f.rbac, f.rbac.GetShadowRulesStatPrefix()
}

// extAuthzEnabled applies filter_enabled_metadata: the filter runs only when the
// metadata matcher matches. It returns the levels of the filters that wrote the key.
func extAuthzEnabled(ea *extauthzv3.ExtAuthz, md map[string][]string) ([]string, bool) {
	m := ea.GetFilterEnabledMetadata()
	if m == nil {
		return nil, true
	}
	if m.GetFilter() != rbacMetadataNamespace || len(m.GetPath()) != 1 {
		panic("ext_authz filter_enabled_metadata is not of the form the translator emits")
	}
	levels, present := md[m.GetPath()[0].GetKey()]
	return levels, present == m.GetValue().GetPresentMatch()
}

// engineMatch returns the name of the first policy (in Envoy's order: by name) that
// matches, "" if none.
func (p *Path) engineMatch(rules *rbacconfigv3.RBAC, req *EnvoyRequest) (string, error) {
	names := make([]string, 0, len(rules.GetPolicies()))
	for n := range rules.GetPolicies() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ok, err := policyMatches(rules.GetPolicies()[n], req)
		if err != nil {
			return "", fmt.Errorf("policy %s: %w", n, err)
		}
		if ok {
			return n, nil
		}
	}
	return "", nil
}

// policyMatches: some permission AND some principal AND the condition.
func policyMatches(pol *rbacconfigv3.Policy, req *EnvoyRequest) (bool, error) {
	perm := false
	for _, pm := range pol.GetPermissions() {
		ok, err := permissionMatches(pm, req)
		if err != nil {
			return false, err
		}
		if ok {
			perm = true
			break
		}
	}
	if !perm {
		return false, nil
	}
	prin := false
	for _, pr := range pol.GetPrincipals() {
		ok, err := principalMatches(pr, req)
		if err != nil {
			return false, err
		}
		if ok {
			prin = true
			break
		}
	}
	if !prin {
		return false, nil
	}
	if pol.GetCheckedCondition() != nil {
		return false, fmt.Errorf("checked_condition is not a config type the translator emits")
	}
	if c := pol.GetCondition(); c != nil {
		return evalCondition(c, req), nil
	}
	return true, nil
}

func permissionMatches(pm *rbacconfigv3.Permission, req *EnvoyRequest) (bool, error) {
	switch r := pm.GetRule().(type) {
	case *rbacconfigv3.Permission_Any:
		return r.Any, nil
	case *rbacconfigv3.Permission_AndRules:
		for _, x := range r.AndRules.GetRules() {
			ok, err := permissionMatches(x, req)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case *rbacconfigv3.Permission_OrRules:
		for _, x := range r.OrRules.GetRules() {
			ok, err := permissionMatches(x, req)
			if err != nil {
				return false, err
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	case *rbacconfigv3.Permission_NotRule:
		ok, err := permissionMatches(r.NotRule, req)
		return !ok, err
	case *rbacconfigv3.Permission_Header:
		return headerMatches(r.Header, req), nil
	case *rbacconfigv3.Permission_UrlPath:
		path, _ := splitPath(req.Path)
		return stringMatches(r.UrlPath.GetPath(), path), nil
	case *rbacconfigv3.Permission_Metadata:
		return metadataMatches(r.Metadata, req), nil
	case *rbacconfigv3.Permission_SourcedMetadata:
		if r.SourcedMetadata.GetMetadataSource() != rbacconfigv3.MetadataSource_DYNAMIC {
			return false, fmt.Errorf("sourced metadata from %v is not a config type the translator emits", r.SourcedMetadata.GetMetadataSource())
		}
		return metadataMatches(r.SourcedMetadata.GetMetadataMatcher(), req), nil
	}
	return false, fmt.Errorf("permission %T is not a config type the translator emits", pm.GetRule())
}

func principalMatches(pr *rbacconfigv3.Principal, req *EnvoyRequest) (bool, error) {
	switch r := pr.GetIdentifier().(type) {
	case *rbacconfigv3.Principal_Any:
		return r.Any, nil
	case *rbacconfigv3.Principal_Authenticated_:
		// Without a client certificate the principal never matches; with one, the
		// matcher sees the URI SAN (the only identity the harness's callers carry).
		if req.Principal == "" {
			return false, nil
		}
		if r.Authenticated.GetPrincipalName() == nil {
			return true, nil
		}
		return stringMatches(r.Authenticated.GetPrincipalName(), req.Principal), nil
	case *rbacconfigv3.Principal_AndIds:
		for _, x := range r.AndIds.GetIds() {
			ok, err := principalMatches(x, req)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case *rbacconfigv3.Principal_OrIds:
		for _, x := range r.OrIds.GetIds() {
			ok, err := principalMatches(x, req)
			if err != nil {
				return false, err
			}
			if ok {
				return true, nil
			}
		}
		return false, nil
	case *rbacconfigv3.Principal_NotId:
		ok, err := principalMatches(r.NotId, req)
		return !ok, err
	case *rbacconfigv3.Principal_Header:
		return headerMatches(r.Header, req), nil
	}
	return false, fmt.Errorf("principal %T is not a config type the translator emits", pr.GetIdentifier())
}

// mcpValue resolves a path in the mcp_proxy namespace.
func (req *EnvoyRequest) mcpValue(path []string) (string, bool) {
	if req.MCP == nil {
		return "", false
	}
	switch strings.Join(path, ".") {
	case "method":
		return req.MCP.Method, true
	case "params.name":
		return req.MCP.ParamsName, req.MCP.ParamsName != ""
	}
	return "", false
}

func metadataMatches(m *matcherv3.MetadataMatcher, req *EnvoyRequest) bool {
	if m.GetFilter() != mcpMetadataNamespace {
		return m.GetInvert()
	}
	var path []string
	for _, s := range m.GetPath() {
		path = append(path, s.GetKey())
	}
	v, ok := req.mcpValue(path)
	res := ok && valueMatches(m.GetValue(), v)
	if m.GetInvert() {
		return !res
	}
	return res
}

func valueMatches(vm *matcherv3.ValueMatcher, v string) bool {
	switch p := vm.GetMatchPattern().(type) {
	case *matcherv3.ValueMatcher_StringMatch:
		return stringMatches(p.StringMatch, v)
	case *matcherv3.ValueMatcher_PresentMatch:
		return p.PresentMatch
	case *matcherv3.ValueMatcher_OrMatch:
		for _, x := range p.OrMatch.GetValueMatchers() {
			if valueMatches(x, v) {
				return true
			}
		}
		return false
	}
	panic(fmt.Sprintf("value matcher %T is not one the translator emits", vm.GetMatchPattern()))
}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
	progMu     sync.Mutex
	progCache  = map[string]cel.Program{}
)

// envoyCELEnv declares what Envoy's RBAC condition sees: the request attributes and
// the stream's metadata, both dynamic. No extension library: Envoy's RBAC filter
// evaluates with CEL's standard functions.
func envoyCELEnv() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.Variable("request", cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable("metadata", cel.MapType(cel.StringType, cel.DynType)),
		)
	})
	return celEnv, celEnvErr
}

// evalCondition evaluates an RBAC condition; an error is a non-match (Envoy).
func evalCondition(c *exprpb.Expr, req *EnvoyRequest) bool {
	env, err := envoyCELEnv()
	if err != nil {
		return false
	}
	key := c.String()
	progMu.Lock()
	prg, ok := progCache[key]
	progMu.Unlock()
	if !ok {
		ast := cel.ParsedExprToAst(&exprpb.ParsedExpr{Expr: c})
		prg, err = env.Program(ast)
		if err != nil {
			return false
		}
		progMu.Lock()
		progCache[key] = prg
		progMu.Unlock()
	}
	path, _ := splitPath(req.Path)
	headers := map[string]any{}
	for k, v := range req.Headers {
		headers[strings.ToLower(k)] = v
	}
	request := map[string]any{
		"path":     req.Path,
		"url_path": path,
		"host":     req.Host,
		"method":   req.Method,
		"headers":  headers,
		"time":     req.Time,
	}
	fm := map[string]any{}
	if req.MCP != nil {
		mcp := map[string]any{"method": req.MCP.Method}
		params := map[string]any{}
		if req.MCP.ParamsName != "" {
			params["name"] = req.MCP.ParamsName
		}
		mcp["params"] = params
		fm[mcpMetadataNamespace] = mcp
	}
	out, _, err := prg.Eval(map[string]any{"request": request, "metadata": map[string]any{"filter_metadata": fm}})
	if err != nil {
		return false
	}
	return out == types.True
}
