package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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

// selectActionSet is the wasm-shim's choice of action set for a request.
func selectActionSet(c *wasm.Config, rq Request) (*wasm.ActionSet, error) {
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
	for _, as := range candidates {
		ok, err := allHold(as.RouteRuleConditions.Predicates, rq)
		if err != nil {
			return nil, err
		}
		if ok {
			return as, nil
		}
	}
	return nil, nil
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
