package cluster_test

// Stage benchmarks on generated topologies (hack/gen): decode and typing (ReadFiles),
// snapshot (Build) and, for comparison, the decode floor (sigs.k8s.io/yaml into unstructured).
// Small and medium by default; large with AGPOL_BENCH_LARGE=1.

import (
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/cluster"
)

// benchRead times read on the files of each size; read must return every object.
func benchRead[T any](b *testing.B, read func(files []string) ([]T, error)) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			f := stages.Generated(b, size)
			b.SetBytes(f.Stats.Bytes)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				objs, err := read(f.Files)
				if err != nil || len(objs) != f.Stats.Total() {
					b.Fatalf("%d objects, want %d: %v", len(objs), f.Stats.Total(), err)
				}
			}
		})
	}
}

func BenchmarkDecodeFloor(b *testing.B) { benchRead(b, stages.DecodeFloor) }

func BenchmarkReadFiles(b *testing.B) {
	benchRead(b, func(files []string) ([]cluster.RawObject, error) {
		objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: files})
		return objs, err
	})
}

// BenchmarkBuild is Build on what ReadFiles returns. Objects read from files are typed
// as they are read, so Build only collects them; each iteration reads the files again
// (untimed), since Build types again, from the file bytes, objects a previous Build used.
func BenchmarkBuild(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			f := stages.Generated(b, size)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				objs, pos, err := cluster.ReadFiles(cluster.FileOptions{Filenames: f.Files})
				if err != nil {
					b.Fatal(err)
				}
				cluster.DefaultNamespace(objs, "default")
				b.StartTimer()
				s, err := cluster.Build(objs, pos, "files")
				if err != nil || s.Len() != f.Stats.Total() {
					b.Fatalf("%v", err)
				}
			}
		})
	}
}

// BenchmarkPipeline is load + routing graph + admission + every chain: the figure the
// budget compares with BenchmarkDecodeFloor (bench/run.sh measures it in fresh processes).
func BenchmarkPipeline(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			f := stages.Generated(b, size)
			b.SetBytes(f.Stats.Bytes)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := stages.Pipeline(f.Files)
				if err != nil || r.Paths == 0 {
					b.Fatalf("%v (%d paths)", err, r.Paths)
				}
			}
		})
	}
}
