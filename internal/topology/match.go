package topology

import (
	"fmt"
	"regexp"
	"strings"

	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/agpol/agpol/internal/snapshot"
)

// HTTPRoute matching follows Gateway API (httproute_types.go HTTPRouteMatch, HTTPPathMatch,
// HTTPHeaderMatch, HTTPQueryParamMatch and the precedence rules on HTTPRouteRule.Matches)
// and the Envoy configuration the kube-agentic-networking translator generates
// (httproute.go translateHTTPRouteMatch, sortRoutes).
//
// Where the reference translator (v0.1.0) departs from Gateway API:
//   - translateHTTPRouteMatch drops `method`, so the data plane routes every method by
//     the other fields of a match, and sortRoutes does not rank method matches. agpol
//     does the same, as a request's fate is the data plane's, and reports the method it
//     passed over (RouteResult.IgnoredMethod; lint AGP410).
//   - it matches every query param Exact, even with type RegularExpression: the value
//     is compared as literal text, never compiled. agpol does the same (lint AGP508).
//   - sortRoutes uses sort.Slice over routes gathered in lister order, so the reference
//     breaks cross-route ties arbitrarily; agpol uses the Gateway API tie-breakers.

type pathKind uint8

const (
	pathPrefix pathKind = iota
	pathExact
	pathRegex
)

type routeInfo struct {
	route   *snapshot.HTTPRoute
	ref     Ref
	key     string   // "namespace/name"
	hosts   []string // spec.hostnames, lower-cased
	rules   []*ruleInfo
	matches []*matchEntry // every compiled match, rule then match order
}

type ruleInfo struct {
	index    int
	name     string
	redirect bool
	refs     []gwapiv1.HTTPBackendRef
	// agentic is the rule's backends as the reference data plane resolves them; other
	// holds them as other data planes do, resolved when a Gateway of one needs them.
	agentic ruleBackends
	other   map[DataPlane]*ruleBackends
}

// ruleBackends is a rule's backends as one data plane resolves them.
type ruleBackends struct {
	backends []BackendTarget // weight > 0, in order
	problem  *RuleProblem    // why the whole rule answers 500, or nil
}

type valueMatcher struct {
	name  string
	value string
	re    *regexp.Regexp // set for RegularExpression
	never bool           // invalid: never matches
}

func (v *valueMatcher) matches(s string) bool {
	if v.never {
		return false
	}
	if v.re != nil {
		return v.re.MatchString(s)
	}
	return s == v.value
}

type matchEntry struct {
	route      *routeInfo
	rule       *ruleInfo
	matchIndex int

	kind pathKind
	path string // Exact value, or PathPrefix value without trailing "/" ("/" kept for the root)
	re   *regexp.Regexp
	// rePrefix is the literal every match of re starts with: a path without it is
	// rejected before running the regular expression.
	rePrefix string
	never    bool // an invalid match the data plane drops: never matches
	// uncertain says why Envoy may route otherwise than this match says (a regular
	// expression Envoy and Go read differently, compileRouteRegex), nil when not.
	uncertain *RegexDiffers
	// method is the match's method, which the data plane does not check (see above):
	// kept only to say so.
	method string
	// headers and query hold the matchers; a request must satisfy all of them.
	headers []valueMatcher
	query   []valueMatcher

	catchAll bool // PathPrefix "/" and nothing else
	pathLen  int  // precedence: length of the path value (regex: pattern length, as upstream)
}

// precedes reports whether match a takes precedence over match b. Gateway API order
// (httproute_types.go HTTPRouteRule.Matches): Exact path, then the longest path value,
// then a method match (withMethod; the reference data plane drops methods and does not
// rank them), then more header matches, then more query param matches; ties across
// routes go to the oldest route, then "{namespace}/{name}"; within a route, rule and
// match order. As in the reference (httproute.go sortRoutes), a catch-all (PathPrefix
// "/" alone) always sorts last and a RegularExpression path ranks among prefixes by its
// pattern length (Gateway API leaves regex precedence implementation-specific).
func precedes(a, b *matchEntry, withMethod bool) bool {
	// With methods ranked, a method match on PathPrefix "/" is no catch-all.
	ca, cb := a.catchAll && (!withMethod || a.method == ""), b.catchAll && (!withMethod || b.method == "")
	if ca != cb {
		return cb
	}
	if (a.kind == pathExact) != (b.kind == pathExact) {
		return a.kind == pathExact
	}
	if a.pathLen != b.pathLen {
		return a.pathLen > b.pathLen
	}
	if withMethod && (a.method != "") != (b.method != "") {
		return a.method != ""
	}
	if len(a.headers) != len(b.headers) {
		return len(a.headers) > len(b.headers)
	}
	if len(a.query) != len(b.query) {
		return len(a.query) > len(b.query)
	}
	if a.route != b.route {
		ta, tb := a.route.route.CreationTimestamp, b.route.route.CreationTimestamp
		if !ta.Equal(&tb) {
			return ta.Before(&tb)
		}
		return a.route.key < b.route.key
	}
	if a.rule.index != b.rule.index {
		return a.rule.index < b.rule.index
	}
	return a.matchIndex < b.matchIndex
}

// compileRoute prepares a route's rules: matches with compiled regular expressions,
// resolved backendRefs, and the problems found.
func (g *Graph) compileRoute(r *snapshot.HTTPRoute) *routeInfo {
	ri := &routeInfo{route: r, ref: HTTPRouteRef(r.Namespace, r.Name), key: r.Namespace + "/" + r.Name}
	for _, h := range r.Spec.Hostnames {
		ri.hosts = append(ri.hosts, lower(string(h)))
	}
	for i, rule := range r.Spec.Rules {
		rl := &ruleInfo{index: i}
		if rule.Name != nil {
			rl.name = string(*rule.Name)
		}
		for _, f := range rule.Filters {
			if f.Type == gwapiv1.HTTPRouteFilterRequestRedirect && f.RequestRedirect != nil {
				rl.redirect = true
				break
			}
		}
		if !rl.redirect {
			rl.refs = rule.BackendRefs
			rl.agentic = g.resolveBackends(ri, rl, DataPlaneAgentic)
		}
		ri.rules = append(ri.rules, rl)
		if len(rule.Matches) == 0 {
			ri.matches = append(ri.matches, g.compileMatch(ri, rl, 0, gwapiv1.HTTPRouteMatch{}))
			continue
		}
		for j, m := range rule.Matches {
			ri.matches = append(ri.matches, g.compileMatch(ri, rl, j, m))
		}
	}
	return ri
}

func (g *Graph) compileMatch(ri *routeInfo, rl *ruleInfo, idx int, m gwapiv1.HTTPRouteMatch) *matchEntry {
	e := &matchEntry{route: ri, rule: rl, matchIndex: idx, kind: pathPrefix, path: "/"}
	field := fmt.Sprintf("spec.rules[%d].matches[%d]", rl.index, idx)
	bad := func(f string, p Problem) {
		e.never = true
		g.problem(ri.ref, ri.route.Source, field+f, p)
	}
	if p := m.Path; p != nil {
		typ := gwapiv1.PathMatchPathPrefix
		if p.Type != nil {
			typ = *p.Type
		}
		if p.Value == nil {
			bad(".path.value", Problem{Why: ProblemPathNoValue})
		} else {
			v := *p.Value
			switch typ {
			case gwapiv1.PathMatchExact:
				e.kind, e.path = pathExact, v
			case gwapiv1.PathMatchPathPrefix:
				e.kind = pathPrefix
				if v != "/" {
					v = strings.TrimSuffix(v, "/") // Envoy path_separated_prefix (httproute.go:369-374)
				}
				e.path = v
			case gwapiv1.PathMatchRegularExpression:
				e.kind, e.path = pathRegex, v
				re, differs, err := compileRouteRegex(v) // Envoy safe_regex: full match, RE2
				switch {
				case err != nil:
					bad(".path.value", Problem{Why: ProblemRegexInvalid, Regex: v, Err: err.Error()})
				case re == nil:
					bad(".path.value", Problem{Why: ProblemRegexUnmatched, Differs: differs})
				default:
					e.re = re
					e.rePrefix, _ = re.LiteralPrefix()
					if differs != nil {
						g.problem(ri.ref, ri.route.Source, field+".path.value", Problem{Why: ProblemRegexDiffers, Differs: differs})
					}
				}
				e.uncertain = differs
			default:
				bad(".path.type", Problem{Why: ProblemPathType, MatchType: string(typ)})
			}
		}
	}
	e.pathLen = len(e.path)
	if m.Method != nil {
		e.method = string(*m.Method)
	}
	seenHeader := map[string]bool{}
	for k, h := range m.Headers {
		name := lower(string(h.Name))
		if seenHeader[name] {
			// Gateway API: only the first match for a header name is considered.
			continue
		}
		seenHeader[name] = true
		vm := valueMatcher{name: name, value: h.Value}
		if h.Type != nil && *h.Type == gwapiv1.HeaderMatchRegularExpression {
			at := fmt.Sprintf("%s.headers[%d].value", field, k)
			re, differs, err := compileRouteRegex(h.Value)
			switch {
			case err != nil:
				vm.never = true
				g.problem(ri.ref, ri.route.Source, at, Problem{Why: ProblemRegexInvalid, Regex: h.Value, Err: err.Error()})
			case re == nil:
				vm.never = true
				g.problem(ri.ref, ri.route.Source, at, Problem{Why: ProblemRegexUnmatched, Differs: differs})
			default:
				vm.re = re
				if differs != nil {
					g.problem(ri.ref, ri.route.Source, at, Problem{Why: ProblemRegexDiffers, Differs: differs})
				}
			}
			if e.uncertain == nil {
				e.uncertain = differs
			}
		} else if h.Type != nil && *h.Type != gwapiv1.HeaderMatchExact {
			bad(fmt.Sprintf(".headers[%d].type", k), Problem{Why: ProblemHeaderType, MatchType: string(*h.Type)})
		}
		e.headers = append(e.headers, vm)
	}
	seenQuery := map[string]bool{}
	for _, q := range m.QueryParams {
		name := string(q.Name) // query param names are case-sensitive
		if seenQuery[name] {
			continue
		}
		seenQuery[name] = true
		// Exact, whatever the type says: see the note at the top of this file.
		e.query = append(e.query, valueMatcher{name: name, value: q.Value})
	}
	e.catchAll = e.kind == pathPrefix && e.path == "/" && len(e.headers) == 0 && len(e.query) == 0 && !e.never
	return e
}

// matchPath reports whether a path (query removed) satisfies a path match of a kind and
// value (e's, or a copy of them); for pathRegex, value is the literal prefix of e's
// regular expression, which a path must start with.
func matchPath(kind pathKind, value string, e *matchEntry, path string) bool {
	switch kind {
	case pathExact:
		return path == value
	case pathRegex:
		return strings.HasPrefix(path, value) && e.re != nil && e.re.MatchString(path)
	default:
		if value == "/" {
			return true
		}
		// Segment-wise prefix: /mcp matches /mcp and /mcp/x, not /mcpx.
		return strings.HasPrefix(path, value) && (len(path) == len(value) || path[len(value)] == '/')
	}
}

// request is a RouteRequest prepared once for matching.
type request struct {
	path    string
	rawQ    string
	headers map[string]string
}

// matches reports whether a request satisfies the entry's match, reading the path from
// the entry's copy: the match entry itself is read only for a request that passes it.
func (v *vhostEntry) matches(r *request) bool {
	if v.never || !matchPath(v.kind, v.path, v.m, r.path) {
		return false
	}
	return !v.fields || v.m.matchesFields(r)
}

// matchesFields reports whether a request satisfies e's header and query matches.
func (e *matchEntry) matchesFields(r *request) bool {
	for i := range e.headers {
		h := &e.headers[i]
		v, ok := r.headers[h.name]
		if !ok || !h.matches(v) {
			return false
		}
	}
	for i := range e.query {
		q := &e.query[i]
		v, ok := queryValue(r.rawQ, q.name)
		if !ok || !q.matches(v) {
			return false
		}
	}
	return true
}
