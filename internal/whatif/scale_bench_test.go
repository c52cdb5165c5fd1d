package whatif_test

// The what-if matrix and diff on generated topologies (hack/gen). Small and medium by
// default; large with AGPOL_BENCH_LARGE=1. Diff compares the topology with itself minus
// one XAccessPolicy in ten (a pull request that removes policies).

import (
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/whatif"
)

var reference = []effective.Semantics{effective.Reference()}

func BenchmarkMatrix(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			_, s := stages.GeneratedSnapshot(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m := whatif.New(model.New(s), reference, whatif.Options{}).Matrix(whatif.Filter{})
				if len(m.Rows(false)) == 0 {
					b.Fatal("empty matrix")
				}
			}
		})
	}
}

func BenchmarkDiff(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			_, before := stages.GeneratedSnapshot(b, size)
			after := *before
			after.XAccessPolicies = nil
			for i, p := range before.XAccessPolicies {
				if i%10 != 3 {
					after.XAccessPolicies = append(after.XAccessPolicies, p)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d := whatif.Diff(whatif.New(model.New(before), reference, whatif.Options{}), whatif.New(model.New(&after), reference, whatif.Options{}), whatif.Filter{})
				if d.Count() == 0 {
					b.Fatal("removing policies changed nothing")
				}
			}
		})
	}
}
