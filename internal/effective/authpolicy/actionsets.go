package authpolicy

import (
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// The wasm action sets kuadrant-operator writes for a Gateway, and which of them tie in
// its order (docs/semantics.md#kuadrant-tied). kuadrant-operator v1.5.2 writes one action
// set per hostname and match of every path with an effective AuthPolicy
// (wasm.BuildActionSetsForPath, internal/wasm/utils.go:242-331), sorts a Gateway's action
// sets with SortableHTTPRouteMatchConfigs.Less (internal/gatewayapi/types.go:42-114) by the
// unstable sort.Sort over paths listed in map order (GrouppedHTTPRouteMatchConfigs.Sorted,
// :131-141; internal/controller/istio_extension_reconciler.go:381-393 and 548), and the
// wasm-shim runs the first action set whose hostname and predicates match. Less ends with
// the HTTPRoute's namespace and name, so only action sets of one HTTPRoute can tie: the
// route on two listeners, or two of its rules with matches Less does not tell apart.

// ActionSet is one wasm action set of a path: a hostname and one match of the route rule.
type ActionSet struct {
	Hostname string
	Match    gwapiv1.HTTPRouteMatch
}

// Tie is an action set of another path of the same Gateway that ties with one of a
// path's own under kuadrant-operator's order and may match the same requests.
type Tie struct {
	// Path is the other path (a prefix of the same route's full paths, folded anew).
	Path *PathResult
	// Mine indexes the path's own action set (pathWasm.sets); Theirs is the other's.
	Mine   int
	Theirs ActionSet
}

// pathWasm is a path's action sets and their ties, computed on first use.
type pathWasm struct {
	sets []ActionSet
	ties []Tie
}

// wasmSets lists the action sets kuadrant-operator writes for a path if it has an
// effective policy: one per hostname of HostnamesFromListenerAndHTTPRoute
// (internal/gatewayapi/utils.go:52-64: the listener's hostname, "*" without one, or the
// route's hostnames that are a subset of it) and match of the rule (a rule without
// matches: PathPrefix "/", internal/wasm/utils.go:270-281).
func (r *Result) wasmSets(gateway, listener, route, rule string) []ActionSet {
	g, rn := r.Topology.Gateway(gateway), r.Topology.Route(route)
	if g == nil || rn == nil {
		return nil
	}
	lh := listenerHostname(g, listener)
	if lh == "" {
		lh = "*"
	}
	hosts := []string{lh}
	if len(rn.Object.Spec.Hostnames) > 0 {
		hosts = hosts[:0]
		for _, h := range rn.Object.Spec.Hostnames {
			if hostnameSubsetOf(string(h), lh) {
				hosts = append(hosts, string(h))
			}
		}
	}
	var matches []gwapiv1.HTTPRouteMatch
	for i, x := range rn.Object.Spec.Rules {
		name := ""
		if x.Name != nil {
			name = string(*x.Name)
		}
		if RuleName(i, name) == rule {
			matches = x.Matches
			break
		}
	}
	if len(matches) == 0 {
		prefix, slash := gwapiv1.PathMatchPathPrefix, "/"
		matches = []gwapiv1.HTTPRouteMatch{{Path: &gwapiv1.HTTPPathMatch{Type: &prefix, Value: &slash}}}
	}
	out := make([]ActionSet, 0, len(hosts)*len(matches))
	for _, h := range hosts {
		for _, m := range matches {
			out = append(out, ActionSet{Hostname: h, Match: m})
		}
	}
	return out
}

// hasActionSets reports whether kuadrant-operator writes action sets for the path: it
// has an effective policy (effective_auth_policies_reconciler.go:80; every effective
// policy gets an auth action, auth_workflow_helpers.go:92-103) on a Gateway Kuadrant
// programs.
func hasActionSets(p *PathResult) bool {
	return p != nil && p.Effective != nil && len(p.Effective.Policies) > 0 && p.Unprogrammed == nil
}

// wasmOf is the action sets of full path p and the action sets of the other paths of
// its Gateway that tie with them: paths of the same HTTPRoute (Less ends with the
// route's namespace and name), through another listener or rule. Computed once per path.
func (r *Result) wasmOf(p *PathResult) *pathWasm {
	id := p.Path.ID()
	if v, ok := r.wasm.Load(id); ok {
		return v.(*pathWasm)
	}
	w := &pathWasm{sets: r.wasmSets(p.Path.Gateway, p.Path.Listener, p.Path.Route, p.Path.Rule)}
	rn := r.Topology.Route(p.Path.Route)
	for _, parent := range parentsOfRoute(rn) {
		if parent.Gateway != p.Path.Gateway {
			continue
		}
		for _, rule := range rn.Rules {
			if parent.Listener != p.Path.Listener || rule != p.Path.Rule {
				w.ties = r.appendTies(w, p.Path, parent.Listener, rule)
			}
		}
	}
	v, _ := r.wasm.LoadOrStore(id, w)
	return v.(*pathWasm)
}

// appendTies adds to w's ties those of the path through listener and rule of p's
// Gateway and route: its action sets that tie with one of w's and may match the same
// requests, when it has an effective policy (folded only then).
func (r *Result) appendTies(w *pathWasm, p Path, listener, rule string) []Tie {
	var other *PathResult
	for _, b := range r.wasmSets(p.Gateway, listener, p.Route, rule) {
		for i, a := range w.sets {
			if !ties(p.Gateway, p.Route, a, b) || !mayOverlap(a.Match, b.Match) {
				continue
			}
			if other == nil {
				if other, _ = r.ForPrefix(p.Gateway, listener, p.Route, rule); !hasActionSets(other) {
					return w.ties
				}
			}
			w.ties = append(w.ties, Tie{Path: other, Mine: i, Theirs: b})
		}
	}
	return w.ties
}

func parentsOfRoute(rn *RouteNode) []Parent {
	if rn == nil {
		return nil
	}
	return rn.Parents
}

// ties reports whether neither action set comes before the other in Less.
func ties(gateway, route string, a, b ActionSet) bool {
	ka, kb := keyOf(gateway, route, a), keyOf(gateway, route, b)
	return ka == kb && !less(ka, kb, a, b) && !less(kb, ka, b, a)
}

// mayOverlap is false when no request can satisfy both matches: different methods,
// different exact paths, prefixes neither of which starts the other, or one header
// with two values. Tied action sets that cannot match one request never compete.
func mayOverlap(a, b gwapiv1.HTTPRouteMatch) bool {
	if a.Method != nil && b.Method != nil && *a.Method != *b.Method {
		return false
	}
	if a.Path != nil && b.Path != nil && a.Path.Type != nil && b.Path.Type != nil && a.Path.Value != nil && b.Path.Value != nil {
		ta, tb, va, vb := *a.Path.Type, *b.Path.Type, *a.Path.Value, *b.Path.Value
		switch {
		case ta == gwapiv1.PathMatchExact && tb == gwapiv1.PathMatchExact:
			if va != vb {
				return false
			}
		case ta == gwapiv1.PathMatchPathPrefix && tb == gwapiv1.PathMatchPathPrefix:
			if !strings.HasPrefix(va, vb) && !strings.HasPrefix(vb, va) {
				return false
			}
		}
	}
	for _, ha := range a.Headers {
		for _, hb := range b.Headers {
			if strings.EqualFold(string(ha.Name), string(hb.Name)) && ha.Value != hb.Value {
				return false
			}
		}
	}
	return true
}

// hostnameSubsetOf is kuadrant-operator's utils.Name.SubsetOf
// (internal/utils/hostname.go:14-37): h is covered by o.
func hostnameSubsetOf(h, o string) bool {
	hw, ow := strings.HasPrefix(h, "*"), strings.HasPrefix(o, "*")
	switch {
	case hw && ow:
		return len(h) >= len(o) && strings.HasSuffix(h[1:], o[1:])
	case hw:
		return false
	case ow:
		return strings.HasSuffix(h, o[1:])
	}
	return h == o
}

// tieKey holds what Less compares strictly between two action sets of one Gateway:
// the HTTPRoute (its creation time and namespace/name), the hostname, the path value's
// length, whether a method is matched, and the numbers of header and query matches.
type tieKey struct {
	gateway, route, hostname    string
	pathLen, headers, queryArgs int
	method                      bool
}

func keyOf(gateway, route string, a ActionSet) tieKey {
	k := tieKey{gateway: gateway, route: route, hostname: a.Hostname, method: a.Match.Method != nil,
		headers: len(a.Match.Headers), queryArgs: len(a.Match.QueryParams)}
	if a.Match.Path != nil && a.Match.Path.Value != nil {
		k.pathLen = len(*a.Match.Path.Value)
	}
	return k
}

// pathTypeLess is the part of Less that is not in tieKey: Exact before
// RegularExpression before PathPrefix, when both matches name a path type
// (internal/gatewayapi/types.go:48-75).
func pathTypeLess(a, b gwapiv1.HTTPRouteMatch) bool {
	rank := func(m gwapiv1.HTTPRouteMatch) int {
		if m.Path == nil || m.Path.Type == nil {
			return -1
		}
		switch *m.Path.Type {
		case gwapiv1.PathMatchExact:
			return 0
		case gwapiv1.PathMatchRegularExpression:
			return 1
		case gwapiv1.PathMatchPathPrefix:
			return 2
		}
		return -1
	}
	ra, rb := rank(a), rank(b)
	return ra >= 0 && rb >= 0 && ra < rb
}

// less is Less for two action sets of one Gateway.
func less(ka, kb tieKey, a, b ActionSet) bool {
	if ka.hostname != kb.hostname {
		return compareHostnamesSpecificity(ka.hostname, kb.hostname)
	}
	if pathTypeLess(a.Match, b.Match) {
		return true
	}
	if pathTypeLess(b.Match, a.Match) {
		return false
	}
	switch {
	case ka.pathLen != kb.pathLen:
		return ka.pathLen > kb.pathLen
	case ka.method != kb.method:
		return !ka.method
	case ka.headers != kb.headers:
		return ka.headers > kb.headers
	case ka.queryArgs != kb.queryArgs:
		return ka.queryArgs > kb.queryArgs
	}
	return false // same route: same creation time and name
}

// compareHostnamesSpecificity is kuadrant-operator's utils.CompareHostnamesSpecificity
// (internal/utils/hostname.go:48-60): more labels first, then a name before a wildcard.
func compareHostnamesSpecificity(a, b string) bool {
	la, lb := strings.Count(a, ".")+1, strings.Count(b, ".")+1
	if la != lb {
		return la > lb
	}
	wa, wb := strings.HasPrefix(a, "*"), strings.HasPrefix(b, "*")
	if wa != wb {
		return !wa
	}
	return a < b
}

// Ties are the action sets of other paths of p's Gateway that tie with one of p's own in
// kuadrant-operator's order and may match the same requests, whatever the request; nil
// when p has no action set or none ties. TiedPaths narrows them to one request.
func (r *Result) Ties(p *PathResult) []Tie {
	if !hasActionSets(p) || p.Path.Rule == "" {
		return nil
	}
	return r.wasmOf(p).ties
}

// ActionSets are the wasm action sets kuadrant-operator writes for p (Tie.Mine indexes
// them); nil when p has none.
func (r *Result) ActionSets(p *PathResult) []ActionSet {
	if !hasActionSets(p) || p.Path.Rule == "" {
		return nil
	}
	return r.wasmOf(p).sets
}

// TiedPaths are the other paths whose AuthConfig the wasm-shim may run instead of p's for
// req, in path ID order: the action set of p the wasm-shim would choose for req (of the
// most specific hostname matching the request's host, the first in Less whose predicates
// hold) ties with one of theirs whose predicates hold too. agpol takes p's action set to
// be the one the wasm-shim reaches (docs/semantics.md#kuadrant-tied). Nil when none.
func (r *Result) TiedPaths(p *PathResult, req Request) []*PathResult {
	if !hasActionSets(p) || p.Path.Rule == "" {
		return nil
	}
	w := r.wasmOf(p)
	if len(w.ties) == 0 {
		return nil
	}
	host := strings.ToLower(req.Host)
	if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	// p's own action sets that match the request, of its most specific hostname.
	best, score := []int(nil), -1
	for i, a := range w.sets {
		s := hostnameScore(a.Hostname, host)
		if s < 0 || s < score || !Holds(a.Match, req) {
			continue
		}
		if s > score {
			best, score = best[:0], s
		}
		best = append(best, i)
	}
	// The first in Less among them (several when they tie with one another).
	var first []int
	for _, i := range best {
		ki := keyOf(p.Path.Gateway, p.Path.Route, w.sets[i])
		preceded := false
		for _, j := range best {
			if j != i && less(keyOf(p.Path.Gateway, p.Path.Route, w.sets[j]), ki, w.sets[j], w.sets[i]) {
				preceded = true
				break
			}
		}
		if !preceded {
			first = append(first, i)
		}
	}
	var out []*PathResult
	seen := map[string]bool{}
	for _, t := range w.ties {
		if seen[t.Path.Path.ID()] || !slices.Contains(first, t.Mine) || !Holds(t.Theirs.Match, req) {
			continue
		}
		seen[t.Path.Path.ID()] = true
		out = append(out, t.Path)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path.ID() < out[j].Path.ID() })
	return out
}

// hostnameScore says how specifically an action set's hostname matches a host: -1 not
// at all, then "*", a wildcard (longer is more specific), an exact name.
func hostnameScore(pattern, host string) int {
	switch {
	case pattern == "*":
		return 0
	case strings.HasPrefix(pattern, "*."):
		if len(host) > len(pattern)-1 && strings.HasSuffix(host, strings.ToLower(pattern[1:])) {
			return len(pattern)
		}
		return -1
	case strings.EqualFold(pattern, host):
		return 1 << 20
	}
	return -1
}

// Holds reports whether the predicates kuadrant-operator writes for a route match hold
// for req (PredicatesFromHTTPRouteMatch, internal/wasm/utils.go:538-567, and the
// predicates of :592-641): the method equals; the URL path (no query) equals, starts with
// (PathPrefix: a string prefix, not a path segment) or matches the regular expression
// anywhere (CEL matches); each header is present, by name case-insensitively, with the
// value exactly (whatever the match type); each query parameter (the first match of a
// name) has the value: the wasm-shim's queryMap is taken to give a parameter's first
// value.
func Holds(m gwapiv1.HTTPRouteMatch, req Request) bool {
	if m.Method != nil && req.Method != string(*m.Method) {
		return false
	}
	path, query, _ := strings.Cut(req.Path, "?")
	if m.Path != nil {
		typ, value := PathMatch(m.Path)
		switch typ {
		case gwapiv1.PathMatchPathPrefix:
			if !strings.HasPrefix(path, value) {
				return false
			}
		case gwapiv1.PathMatchRegularExpression:
			re, err := regexp.Compile(value)
			if err != nil || !re.MatchString(path) {
				return false
			}
		default:
			if path != value {
				return false
			}
		}
	}
	for _, h := range m.Headers {
		found := false
		for k, v := range req.Headers {
			if strings.EqualFold(k, string(h.Name)) && v == h.Value {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if len(m.QueryParams) > 0 {
		q, _ := url.ParseQuery(query)
		seen := map[string]bool{}
		for _, qp := range m.QueryParams {
			name := string(qp.Name)
			if seen[name] {
				continue
			}
			seen[name] = true
			if vs, ok := q[name]; !ok || len(vs) == 0 || vs[0] != qp.Value {
				return false
			}
		}
	}
	return true
}

// PathMatch is a path match's type and value with Gateway API's defaults (PathPrefix, "/")
// where the match leaves them out.
func PathMatch(p *gwapiv1.HTTPPathMatch) (gwapiv1.PathMatchType, string) {
	typ, value := gwapiv1.PathMatchPathPrefix, "/"
	if p.Type != nil {
		typ = *p.Type
	}
	if p.Value != nil {
		value = *p.Value
	}
	return typ, value
}
