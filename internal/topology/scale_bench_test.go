package topology_test

// The routing graph of generated topologies (hack/gen). Small and medium by default;
// large with AGPOL_BENCH_LARGE=1.

import (
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/topology"
)

func BenchmarkBuildGraphGenerated(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			_, s := stages.GeneratedSnapshot(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if g := topology.BuildGraph(s); len(g.Gateways()) != len(s.Gateways) {
					b.Fatal("gateways missing from the graph")
				}
			}
		})
	}
}
