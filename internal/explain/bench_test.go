package explain

import (
	"fmt"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/topology"
)

// BenchmarkDecide measures one untraced decision on a precompiled chain with ten rules
// per level (the hot path a batch of requests takes).
func BenchmarkDecide(b *testing.B) {
	var rs []string
	for i := 0; i < 10; i++ {
		rs = append(rs, saTools(fmt.Sprintf("r%02d", i), fmt.Sprintf("agent-%d", i), "a, b, c"))
	}
	s := loadYAML(b, baseTopology, policy("g", "gw", "Allow", "", rules(rs...)), policy("x", "xb", "Allow", "", rules(rs...)))
	e := effective.NewEngine(s, effective.Reference(), "cluster.local")
	chain := e.Chain(topology.GatewayRef("gw", "gw"), "", ptr(topology.XBackendRef("app", "xb")))
	r := call("agent-9", "c")
	r.Normalize()
	c := newCtx(r, r.From.Principal("cluster.local"), 443)
	var syms symbols
	cc := compileChain(&syms, &chain.Semantics, chain)
	var rq reqSyms
	syms.lookup(c, nil, &rq)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := decide(cc, rq, c, ExtAuth{}, false, nil)
		if d.Verdict != Allow {
			b.Fatal(d.Verdict)
		}
	}
}

func ptr[T any](v T) *T { return &v }
