package kuadrantdiff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// authConfigSections maps the sections of an Authorino v1beta3 AuthConfig spec that
// kuadrant-operator fills from the effective rules (internal/controller/
// authconfigs_reconciler.go buildDesiredAuthConfig) to the rule key prefixes of
// api/v1/authpolicy_types.go Rules().
var authConfigSections = []struct {
	path   []string
	prefix string
}{
	{[]string{"patterns"}, "patterns#"},
	{[]string{"authentication"}, "authentication#"},
	{[]string{"metadata"}, "metadata#"},
	{[]string{"authorization"}, "authorization#"},
	{[]string{"callbacks"}, "callbacks#"},
	{[]string{"response", "success", "headers"}, "response.success.headers#"},
	{[]string{"response", "success", "dynamicMetadata"}, "response.success.metadata#"},
}

// authConfigRules reads the operator's AuthConfig spec as rule key → body.
func authConfigRules(spec json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(spec, &m); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, s := range authConfigSections {
		var cur any = m
		for _, p := range s.path {
			cm, _ := cur.(map[string]any)
			cur = cm[p]
		}
		section, _ := cur.(map[string]any)
		for name, body := range section {
			out[s.prefix+name] = normal(body)
		}
	}
	resp, _ := m["response"].(map[string]any)
	for _, k := range []string{"unauthenticated", "unauthorized"} {
		if b, ok := resp[k]; ok && b != nil {
			out["response."+k+"#"] = normal(b)
		}
	}
	return out, nil
}

// impliedRules is the AuthConfig agpol's effective policy implies: every effective
// rule but the top-level `when` (conditions#, which the wasm-shim evaluates), with its
// body as written.
func impliedRules(rules map[string]authpolicy.Rule) (map[string]any, error) {
	out := map[string]any{}
	for k, r := range rules {
		if k == "conditions#" {
			continue
		}
		var body any
		if err := json.Unmarshal(r.Spec, &body); err != nil {
			return nil, fmt.Errorf("rule %s: %w", k, err)
		}
		if strings.HasPrefix(k, "patterns#") {
			// The AuthPolicy writes a named pattern as {allOf: [...]}; the AuthConfig's
			// patterns are the list (buildDesiredAuthConfig: v.PatternExpressions).
			if m, ok := body.(map[string]any); ok {
				body = m["allOf"]
			}
		}
		out[k] = normal(body)
	}
	return out, nil
}

// normal drops what encodes nothing (false, 0, "", null, empty objects and lists),
// since the operator's typed structs write zero values the user omits and omit some
// the user writes.
func normal(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if n := normal(e); n != nil {
				out[k] = n
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			out = append(out, normal(e))
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case bool:
		if !x {
			return nil
		}
	case float64:
		if x == 0 {
			return nil
		}
	case string:
		if x == "" {
			return nil
		}
	case nil:
		return nil
	}
	return v
}

// compareAuthConfig lists the differences between the operator's AuthConfig rules and
// agpol's implied ones.
func compareAuthConfig(up, mine map[string]any) []string {
	var diffs []string
	keys := map[string]bool{}
	for k := range up {
		keys[k] = true
	}
	for k := range mine {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		u, uok := up[k]
		m, mok := mine[k]
		switch {
		case !mok:
			diffs = append(diffs, k+" only in the operator's AuthConfig")
		case !uok:
			diffs = append(diffs, k+" only in agpol's")
		case !reflect.DeepEqual(u, m):
			ub, _ := json.Marshal(u)
			mb, _ := json.Marshal(m)
			diffs = append(diffs, fmt.Sprintf("%s: operator %s, agpol %s", k, ub, mb))
		}
	}
	return diffs
}

func joinDiffs(d []string) string { return strings.Join(d, "; ") }
