package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	kuadrantgatewayapi "github.com/kuadrant/kuadrant-operator/internal/gatewayapi"
	"github.com/kuadrant/kuadrant-operator/internal/wasm"
)

// The wasm-shim (Rust) selects the action set of a request and evaluates its actions'
// predicates; there is no Go code of it to call. This file stands in for it: it reads
// the wasm configuration kuadrant-operator wrote for each Gateway (Istio's EnvoyFilter,
// Envoy Gateway's EnvoyExtensionPolicy), picks the action sets of the longest matching
// hostname, takes the first whose route rule predicates hold, and evaluates the auth
// action's predicates with cel-go in the environment kuadrant-operator validates them
// in (internal/cel/kuadrant_validator.go: request, source, destination, connection,
// ext.Strings).

// wasmConfigs returns the wasm configuration written for each Gateway ("ns/name").
func wasmConfigs(writes []write) map[string]*wasm.Config {
	out := map[string]*wasm.Config{}
	for _, w := range writes {
		if w.Object == nil || (w.Resource != "envoyfilters" && w.Resource != "envoyextensionpolicies") {
			continue
		}
		raw := findActionSets(w.Object.Object)
		if raw == nil {
			continue
		}
		b, err := json.Marshal(raw)
		if err != nil {
			continue
		}
		c := &wasm.Config{}
		if err := json.Unmarshal(b, c); err != nil {
			continue
		}
		for _, g := range gatewaysOf(w.Object) {
			out[w.Object.GetNamespace()+"/"+g] = c
		}
	}
	return out
}

func gatewaysOf(u *unstructured.Unstructured) []string {
	names := targetNames(u)
	if len(names) == 0 {
		refs, _, _ := unstructured.NestedSlice(u.Object, "spec", "targetRefs")
		for _, r := range refs {
			if m, ok := r.(map[string]any); ok {
				if n, ok := m["name"].(string); ok {
					names = append(names, n)
				}
			}
		}
	}
	return names
}

// findActionSets finds the map holding "actionSets" (the plugin configuration) in an
// object written by kuadrant-operator.
func findActionSets(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["actionSets"]; ok {
			return x
		}
		for _, y := range x {
			if r := findActionSets(y); r != nil {
				return r
			}
		}
	case []any:
		for _, y := range x {
			if r := findActionSets(y); r != nil {
				return r
			}
		}
	case string:
		// Istio's EnvoyFilter carries the plugin configuration as a JSON string
		// (google.protobuf.StringValue).
		if strings.Contains(x, `"actionSets"`) {
			var m map[string]any
			if json.Unmarshal([]byte(x), &m) == nil {
				return findActionSets(m)
			}
		}
	}
	return nil
}

// hostMatches is a Gateway API hostname match: exact, "*", or "*.suffix".
func hostMatches(pattern, host string) (bool, int) {
	switch {
	case pattern == "*":
		return true, 0
	case strings.HasPrefix(pattern, "*."):
		return strings.HasSuffix(host, pattern[1:]) && len(host) > len(pattern)-1, len(pattern)
	default:
		return pattern == host, len(pattern) + 1000
	}
}

// shim is the wasm-shim stand-in: the configuration written for each Gateway
// ("ns/name") and, per action set name, the route match kuadrant-operator sorted it by.
type shim struct {
	configs map[string]*wasm.Config
	matches map[string]kuadrantgatewayapi.HTTPRouteMatchConfig
}

// newShim reads the wasm configurations of run's writes and rebuilds, with
// kuadrant-operator's own wasm.BuildActionSetsForPath, the route match of every
// action set of the effective AuthPolicies' paths (the only policies scenarios hold).
func newShim(run *operatorRun) *shim {
	s := &shim{configs: wasmConfigs(run.writes), matches: map[string]kuadrantgatewayapi.HTTPRouteMatchConfig{}}
	for pathID, ep := range effective(run) {
		configs, err := wasm.BuildActionSetsForPath(context.Background(), pathID, ep.Path, nil)
		if err != nil {
			continue
		}
		for _, c := range configs {
			s.matches[c.Config.(wasm.ActionSet).Name] = c
		}
	}
	return s
}

// selectActionSet is the wasm-shim's choice of action set for a request on gateway:
// the first, in the order written, of the action sets of the most specific matching
// hostname whose route rule predicates hold. kuadrant-operator writes them sorted by
// SortableHTTPRouteMatchConfigs.Less (internal/gatewayapi/types.go:42) with the
// unstable sort.Sort over paths in map order (GrouppedHTTPRouteMatchConfigs.Sorted,
// :131; istio_extension_reconciler.go:383-548), so among action sets that tie under
// Less the order differs from one reconcile to the next. When action sets of other
// paths (other auth scopes) tie with the chosen one and their predicates hold too,
// tied holds one action set of each such path, the chosen one first: which runs is
// not fixed.
func (s *shim) selectActionSet(gateway string, rq Request) (chosen *wasm.ActionSet, tied []*wasm.ActionSet, err error) {
	c := s.configs[gateway]
	if c == nil {
		return nil, nil, nil
	}
	host := rq.Host
	if i := strings.LastIndex(host, ":"); i >= 0 && !strings.Contains(host[i:], "]") {
		host = host[:i]
	}
	best := -1
	var candidates []*wasm.ActionSet
	for i := range c.ActionSets {
		as := &c.ActionSets[i]
		score := -1
		for _, h := range as.RouteRuleConditions.Hostnames {
			if ok, s := hostMatches(h, host); ok && s > score {
				score = s
			}
		}
		if score < 0 {
			continue
		}
		if score > best {
			best, candidates = score, nil
		}
		if score == best {
			candidates = append(candidates, as)
		}
	}
	var holding []*wasm.ActionSet
	for _, as := range candidates {
		ok, err := allHold(as.RouteRuleConditions.Predicates, rq)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			holding = append(holding, as)
		}
	}
	if len(holding) == 0 {
		return nil, nil, nil
	}
	chosen = holding[0]
	tied = []*wasm.ActionSet{chosen}
	for _, as := range holding[1:] {
		t, err := s.tie(chosen, as)
		if err != nil {
			return nil, nil, err
		}
		if t && !slices.ContainsFunc(tied, func(x *wasm.ActionSet) bool { return authScope(x) == authScope(as) }) {
			tied = append(tied, as)
		}
	}
	if len(tied) == 1 {
		tied = nil
	}
	return chosen, tied, nil
}

// tie reports whether neither action set comes before the other under
// kuadrant-operator's SortableHTTPRouteMatchConfigs.Less.
func (s *shim) tie(a, b *wasm.ActionSet) (bool, error) {
	ma, okA := s.matches[a.Name]
	mb, okB := s.matches[b.Name]
	if !okA || !okB {
		return false, fmt.Errorf("the route match of action set %s or %s is not known", a.Name, b.Name)
	}
	pair := kuadrantgatewayapi.SortableHTTPRouteMatchConfigs{ma, mb}
	return !pair.Less(0, 1) && !pair.Less(1, 0), nil
}

// authScope is the scope (AuthConfig name) of an action set's auth action.
func authScope(as *wasm.ActionSet) string {
	for _, a := range as.Actions {
		if a.ServiceName == wasm.AuthServiceName {
			return a.Scope
		}
	}
	return ""
}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
	celCache   sync.Map // expression → cel.Program
)

func program(expr string) (cel.Program, error) {
	if p, ok := celCache.Load(expr); ok {
		return p.(cel.Program), nil
	}
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(ext.Strings(),
			cel.Variable("request", cel.DynType), cel.Variable("source", cel.DynType),
			cel.Variable("destination", cel.DynType), cel.Variable("connection", cel.DynType))
	})
	if celEnvErr != nil {
		return nil, celEnvErr
	}
	ast, iss := celEnv.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	p, err := celEnv.Program(ast)
	if err != nil {
		return nil, err
	}
	celCache.Store(expr, p)
	return p, nil
}

// attributes are the request attributes the wasm-shim gives CEL (Envoy's
// attributes: request.url_path is the path without its query).
func attributes(rq Request) map[string]any {
	u, _ := url.Parse(rq.Path)
	headers := map[string]any{}
	for k, v := range rq.Headers {
		headers[lower(k)] = v
	}
	req := map[string]any{"method": rq.Method, "host": rq.Host, "path": rq.Path, "headers": headers, "scheme": "http", "protocol": "HTTP/1.1"}
	if u != nil {
		req["url_path"] = u.Path
		req["query"] = u.RawQuery
	}
	return map[string]any{"request": req, "source": map[string]any{}, "destination": map[string]any{}, "connection": map[string]any{}}
}

// allHold evaluates predicates (all must be true).
func allHold(preds []string, rq Request) (bool, error) {
	vars := attributes(rq)
	for _, p := range preds {
		prg, err := program(p)
		if err != nil {
			return false, fmt.Errorf("predicate %q: %w", p, err)
		}
		out, _, err := prg.Eval(vars)
		if err != nil {
			return false, fmt.Errorf("predicate %q: %w", p, err)
		}
		b, ok := out.Value().(bool)
		if !ok {
			return false, fmt.Errorf("predicate %q is not a bool", p)
		}
		if !b {
			return false, nil
		}
	}
	return true, nil
}
