package authpolicy_test

// The AuthPolicy defaults/overrides fold of every full path on generated topologies
// (hack/gen). Small and medium by default; large with AGPOL_BENCH_LARGE=1.

import (
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/topology"
)

func BenchmarkCompute(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			_, s := stages.GeneratedSnapshot(b, size)
			g := topology.BuildGraph(s) // built once per model (internal/model)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r := authpolicy.Compute(g)
				if len(r.Policies) != len(s.AuthPolicies) || len(r.Paths) == 0 {
					b.Fatalf("%d policies, %d paths", len(r.Policies), len(r.Paths))
				}
			}
		})
	}
}
