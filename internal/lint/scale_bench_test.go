package lint_test

// Stage benchmarks of lint on generated topologies (hack/gen): every check, and the
// schema checks alone. Small and medium by default; large with AGPOL_BENCH_LARGE=1.
// Each iteration lints a freshly loaded snapshot (loading is not timed), so source
// positions are resolved again; validators are built once per process, as in agpol.
// Run with -cpu 1 for the cost, and -cpu 2 to see the parallel schema validation.

import (
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/lint"
)

func benchLint(b *testing.B, only []string) {
	checks, err := lint.Selector{Only: only}.Select()
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			f := stages.Generated(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := stages.Load(f.Files)
				if err != nil {
					b.Fatal(err)
				}
				ctx := lint.NewContext(s)
				b.StartTimer()
				if r := lint.Run(ctx, lint.Options{Checks: checks}); len(r.Checks) == 0 {
					b.Fatal("no checks ran")
				}
			}
		})
	}
}

func BenchmarkLint(b *testing.B) { benchLint(b, nil) }

func BenchmarkLintSchema(b *testing.B) { benchLint(b, []string{"schema"}) }
