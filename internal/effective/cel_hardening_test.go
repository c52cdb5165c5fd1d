package effective

import (
	"fmt"
	"testing"
	"time"
	"unicode/utf8"
)

// nested10 nests n comprehensions over a 10-element list: 10^n iterations.
func nested10(n int) string {
	vars := "abcdefgh"
	expr := "true"
	for i := n - 1; i >= 0; i-- {
		expr = "[1,2,3,4,5,6,7,8,9,10].all(" + vars[i:i+1] + ", " + expr + ")"
	}
	return expr
}

// TestCELCostLimit: every expression the controller accepts compiles and runs; one
// whose evaluation runs past the runtime budget stops there, quickly, with an error
// CELOverBudget recognises (its outcome is unknown: Envoy has no budget). The estimated
// worst case (what lint warns on) is over the budget for those that can run past it.
func TestCELCostLimit(t *testing.T) {
	tests := []struct {
		expr        string
		overBudget  bool // on the request below
		estimateOut bool // estimated worst case over CELCostLimit
	}{
		{`request.mcp.tool_name == 'add'`, false, false},
		{`request.headers['x-tenant'] == 'a' && request.path.startsWith('/mcp')`, false, false},
		{`request.path.matches('^/m[a-z]+$') || request.host.endsWith(':10001')`, false, false},
		{`request.time.getFullYear() > 2000`, false, false},
		{nested10(3), false, false},
		{nested10(7), true, true}, // 10^7 iterations
		{`request.path.split('/').all(a, request.path.split('/').all(b, request.path.split('/').all(c, a + b + c != '')))`, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.expr[:min(len(tt.expr), 40)], func(t *testing.T) {
			prg, err := CompileCEL(tt.expr)
			if err != nil {
				t.Fatalf("does not compile: %v", err)
			}
			if est, ok := CELEstimatedCost(tt.expr); !ok || (est > CELCostLimit) != tt.estimateOut {
				t.Errorf("estimate %d (ok %v), want over the budget: %v", est, ok, tt.estimateOut)
			}
			act := map[string]any{
				"request": map[string]any{"path": "/mcp/a/b", "url_path": "/mcp/a/b", "method": "POST", "host": "h",
					"headers": map[string]string{"a": "x,y", "x-tenant": "a"}, "time": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
				"metadata": map[string]any{"filter_metadata": map[string]any{"mcp_proxy": map[string]any{"params": map[string]any{"name": "add"}}}},
			}
			start := time.Now()
			_, _, err = prg.Eval(act)
			if got := CELOverBudget(err); got != tt.overBudget {
				t.Fatalf("over budget: %v (%v), want %v", got, err, tt.overBudget)
			}
			if !tt.overBudget && err != nil {
				t.Fatalf("evaluation: %v", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("evaluation took %s: the budget must stop it", d)
			}
		})
	}
}

// FuzzCEL compiles arbitrary expressions and evaluates those that compile against
// arbitrary request attributes: nothing panics, evaluation is bounded by the cost limits,
// and the same input gives the same result twice.
func FuzzCEL(f *testing.F) {
	for _, s := range []string{
		`request.mcp.tool_name == 'add'`,
		`request.headers['x-tenant'] == 'a'`,
		`'x-tenant' in request.headers`,
		`request.path.matches('^/m[a-z]+$')`,
		`request.url_path.startsWith(request.host)`,
		`request.method.lowerAscii() == 'post'`,
		`request.time.getHours() < 12`,
		`request.headers['a'].split(',').exists(x, x == request.mcp.tool_name)`,
		`request.mcp.tool_name.replace('a', request.path)`,
		nested10(7),
		`request.nope`,
		`request.path.matches(request.headers['re'])`,
		`size(request.path) > 3 ? request.path.substring(1, 3) == 'mc' : false`,
		`request.path.charAt(1000)`,
		`request.headers['x'].indexOf(request.path) > -1`,
		`[1][request.path.size()]`,
		`request.mcp.tool_name.matches('(a+)+$')`,
	} {
		f.Add(s, "/mcp", "POST", "a.example.com:443", "x-tenant", "a", "add", int64(1767225600))
	}
	f.Add(`request.path.matches(request.headers['re'])`, "/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", "GET", "", "re", "(a+)+$", "", int64(0))
	f.Fuzz(func(t *testing.T, expr, path, method, host, hk, hv, tool string, unix int64) {
		if len(expr) > 4096 || len(path)+len(host)+len(hk)+len(hv)+len(tool) > 1<<16 {
			return
		}
		prg, err := CompileCEL(expr)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty compile error")
			}
			return
		}
		if !utf8.ValidString(path + method + host + hk + hv + tool) {
			return // Envoy hands CEL valid strings only
		}
		act := func() map[string]any {
			return map[string]any{
				"request": map[string]any{"path": path, "url_path": path, "method": method, "host": host,
					"headers": map[string]string{hk: hv}, "time": time.Unix(unix%(1<<40), 0).UTC()},
				"metadata": map[string]any{"filter_metadata": map[string]any{"mcp_proxy": map[string]any{"method": "tools/call", "params": map[string]any{"name": tool}}}},
			}
		}
		out1, _, err1 := prg.Eval(act())
		out2, _, err2 := prg.Eval(act())
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("%q: errors differ: %v / %v", expr, err1, err2)
		}
		if err1 != nil {
			if err1.Error() != err2.Error() {
				t.Fatalf("%q: errors differ: %v / %v", expr, err1, err2)
			}
			return
		}
		if a, b := fmt.Sprintf("%T %v", out1.Value(), out1.Value()), fmt.Sprintf("%T %v", out2.Value(), out2.Value()); a != b {
			t.Fatalf("%q: results differ: %v / %v", expr, out1, out2)
		}
	})
}
