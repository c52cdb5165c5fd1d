package whatif

import (
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/model"
)

// BenchmarkDecision measures the decisions of a matrix alone, on an engine whose chains
// are compiled: every class of every target times every op, under every preset. It
// reports the cost of one decision.
func BenchmarkDecision(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sems := allPresets(b)
			e := New(model.New(load(b, stages.Generated(b, size).Files...)), sems, Options{})
			all := make([][]int, len(e.state))
			n := 0
			for i, st := range e.state {
				for c := range st.classes {
					all[i] = append(all[i], c)
				}
				n += len(st.classes) * len(e.Targets[i].Ops) * len(sems)
			}
			if n == 0 {
				b.Fatal("no decision to make")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for it := 0; it < b.N; it++ {
				for i, st := range e.state {
					st.cells, st.queries = make([][]Outcome, len(st.classes)), nil
					e.rows(e.Targets[i], st, all[i])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/decision")
		})
	}
}
