package effective

import (
	"errors"
	"fmt"
	"strings"
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

// TestCELCostLimit: an expression whose estimated worst case is over the limit compiles
// (the controller accepts it) but is refused, never evaluated; cheap expressions over
// the request attributes, as the upstream e2e tests write them, run.
func TestCELCostLimit(t *testing.T) {
	tests := []struct {
		expr    string
		refused bool
	}{
		{`request.mcp.tool_name == 'add'`, false},
		{`request.headers['x-tenant'] == 'a' && request.path.startsWith('/mcp')`, false},
		{`request.path.matches('^/m[a-z]+$') || request.host.endsWith(':10001')`, false},
		{`request.time.getFullYear() > 2000`, false},
		{`request.headers['a'].split(',').all(x, x.size() > 0)`, false},
		{nested10(3), false},
		{nested10(7), true}, // 10^7 iterations: the API server's estimate refuses it
		{`request.path.split('/').all(a, request.path.split('/').all(b, request.path.split('/').all(c, a + b + c != '')))`, true},
	}
	for _, tt := range tests {
		t.Run(tt.expr[:min(len(tt.expr), 40)], func(t *testing.T) {
			prg, err := CompileCEL(tt.expr)
			if err != nil {
				t.Fatalf("does not compile: %v", err)
			}
			refusal := CELTooExpensive(prg)
			if (refusal != nil) != tt.refused {
				t.Fatalf("refused: %v, want %v", refusal, tt.refused)
			}
			act := map[string]any{
				"request": map[string]any{"path": "/mcp/a/b", "url_path": "/mcp/a/b", "method": "POST", "host": "h",
					"headers": map[string]string{"a": "x,y", "x-tenant": "a"}, "time": time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
				"metadata": map[string]any{"filter_metadata": map[string]any{"mcp_proxy": map[string]any{"params": map[string]any{"name": "add"}}}},
			}
			start := time.Now()
			out, _, err := prg.Eval(act)
			if tt.refused {
				if out != nil || !errors.Is(err, ErrCELTooExpensive) {
					t.Fatalf("refused expression evaluated: %v, %v", out, err)
				}
				for _, want := range []string{"refused, not evaluated", "estimated worst-case cost", "exceeds the limit of 10000000"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("message %q lacks %q", err, want)
					}
				}
				if d := time.Since(start); d > time.Second {
					t.Errorf("a refusal took %s", d) // it must not run the expression
				}
				return
			}
			if err != nil {
				t.Fatalf("evaluation: %v", err)
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
