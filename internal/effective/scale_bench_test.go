package effective_test

// Stage benchmarks on generated topologies (hack/gen): admission, and the compilation
// of every chain of every path. Small and medium by default; large with AGPOL_BENCH_LARGE=1.
// Both include what NewEngine does (admission, the gateways' levels): the CEL programs
// compiled there are compiled once per process, so later rounds may find them cached.

import (
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/topology"
)

func BenchmarkAdmit(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			_, s := stages.GeneratedSnapshot(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				adm := effective.Admit(s, effective.Reference())
				if len(adm) != len(s.XAccessPolicies) {
					b.Fatalf("%d admissions for %d policies", len(adm), len(s.XAccessPolicies))
				}
			}
		})
	}
}

func BenchmarkChains(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			_, s := stages.GeneratedSnapshot(b, size)
			g := topology.BuildGraph(s)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				e := effective.NewEngine(s, effective.Reference(), "cluster.local")
				if n := stages.Chains(g, e); n == 0 {
					b.Fatal("no paths")
				}
			}
		})
	}
}
