package whatif

import (
	"sort"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
)

var (
	parseEnvOnce sync.Once
	parseEnv     *cel.Env

	celToolsMu    sync.Mutex
	celToolsCache = map[string][]string{}
)

// celToolLiterals returns the string literals of a CEL expression that mentions
// request.mcp.tool_name: the tool names it most likely compares against ('add' in
// `request.mcp.tool_name in ['add', 'multiply']`). It is a heuristic to name columns
// when no inventory is given; decisions never depend on it.
func celToolLiterals(expr string) []string {
	if !strings.Contains(expr, "request.mcp.tool_name") {
		return nil
	}
	celToolsMu.Lock()
	defer celToolsMu.Unlock()
	if v, ok := celToolsCache[expr]; ok {
		return v
	}
	parseEnvOnce.Do(func() { parseEnv, _ = cel.NewEnv() })
	var out []string
	if parseEnv != nil {
		if a, iss := parseEnv.Parse(expr); iss == nil || iss.Err() == nil {
			seen := map[string]bool{}
			celast.PreOrderVisit(a.NativeRep().Expr(), celast.NewExprVisitor(func(e celast.Expr) {
				if e.Kind() != celast.LiteralKind {
					return
				}
				if s, ok := e.AsLiteral().Value().(string); ok && s != "" && !seen[s] {
					seen[s] = true
					out = append(out, s)
				}
			}))
		}
	}
	sort.Strings(out)
	celToolsCache[expr] = out
	return out
}
