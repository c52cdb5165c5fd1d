package effective

import (
	"sync"
	"testing"
)

// CompileCEL memoises by text: the same program (or the same error)
// for every call, from concurrent callers too.
func TestCompileCELCache(t *testing.T) {
	cases := []struct {
		name, expr string
		wantErr    bool
	}{
		{"compiles", `request.mcp.tool_name == "cache-test-add"`, false},
		{"unsupported variable", `request.nope.x == "cache-test"`, true},
		{"syntax error", `request.mcp.tool_name == == "cache-test"`, true},
		{"expensive, compiled all the same", `request.path.split('/').all(a, request.path.split('/').all(b, request.path.split('/').all(c, a + b + c != 'cache-test')))`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first, firstErr := CompileCEL(tc.expr)
			if (firstErr != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", firstErr, tc.wantErr)
			}
			if _, ok := CELEstimatedCost(tc.expr); ok == tc.wantErr {
				t.Fatalf("estimate ok %v for an expression that compiles: %v", ok, !tc.wantErr)
			}
			var wg sync.WaitGroup
			errs := make(chan string, 8)
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p, err := CompileCEL(tc.expr)
					if p != first || err != firstErr {
						errs <- "a second compile returned another program or error"
					}
				}()
			}
			wg.Wait()
			close(errs)
			for e := range errs {
				t.Error(e)
			}
			if _, ok := celCache.Load(tc.expr); !ok {
				t.Error("not cached")
			}
		})
	}
	// A cached program still evaluates per request.
	p, err := CompileCEL(cases[0].expr)
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]bool{"cache-test-add": true, "other": false} {
		act := map[string]any{"request": map[string]any{}, "metadata": map[string]any{"filter_metadata": map[string]any{
			"mcp_proxy": map[string]any{"params": map[string]any{"name": tool}}}}}
		v, _, err := p.Eval(act)
		if err != nil {
			t.Fatalf("eval: %v", err)
		}
		if v.Value() != want {
			t.Errorf("tool %s: %v, want %v", tool, v.Value(), want)
		}
	}
}
