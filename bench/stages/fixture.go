package stages

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agpol/agpol/hack/gen/topogen"
	"github.com/agpol/agpol/internal/snapshot"
)

// Seed is the generator seed of every benchmark topology.
const Seed = 1

// Requests is the number of requests of a benchmark topology's request file.
const Requests = 2000

// LargeEnv enables the large size in Go benchmarks (setting up 10k policies takes seconds).
const LargeEnv = "AGPOL_BENCH_LARGE"

// BenchSizes are the sizes Go benchmarks run: small and medium, and large when
// AGPOL_BENCH_LARGE=1.
func BenchSizes() []string {
	if os.Getenv(LargeEnv) == "1" {
		return []string{"small", "medium", "large"}
	}
	return []string{"small", "medium"}
}

var (
	genMu  sync.Mutex
	genned = map[string]*topogen.Topology{}
)

// Fixture is a generated topology written to a test's temporary directory.
type Fixture struct {
	Dir      string   // manifests
	Files    []string // the manifest files, sorted
	Requests string   // request file (outside Dir)
	Stats    topogen.Stats
}

// Generated writes the topology of a named size (generated once per process) into
// tb.TempDir(). Call it from a benchmark's setup, before b.ResetTimer.
func Generated(tb testing.TB, size string) *Fixture {
	tb.Helper()
	genMu.Lock()
	t, ok := genned[size]
	if !ok {
		sz, err := topogen.SizeByName(size)
		if err != nil {
			genMu.Unlock()
			tb.Fatal(err)
		}
		if t, err = topogen.Generate(topogen.Options{Size: sz, Seed: Seed, Requests: Requests}); err != nil {
			genMu.Unlock()
			tb.Fatal(err)
		}
		genned[size] = t
	}
	genMu.Unlock()
	root := tb.TempDir()
	f := &Fixture{Dir: filepath.Join(root, size), Requests: filepath.Join(root, "requests-"+size+".yaml"), Stats: t.Stats}
	if _, err := os.Stat(f.Requests); err != nil { // a benchmark's setup runs once per b.N round
		if err := os.MkdirAll(f.Dir, 0o755); err != nil {
			tb.Fatal(err)
		}
		for _, file := range t.Files {
			if err := os.WriteFile(filepath.Join(f.Dir, file.Name), file.Data, 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		if err := os.WriteFile(f.Requests, t.Requests, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	files, err := ManifestFiles(f.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) != t.Stats.Files {
		tb.Fatalf("%d files in %s, generated %d", len(files), f.Dir, t.Stats.Files)
	}
	f.Files = files
	return f
}

// GeneratedSnapshot is Generated followed by Load: the fixture of a named size and its
// snapshot. Call it from a benchmark's setup, before b.ResetTimer.
func GeneratedSnapshot(tb testing.TB, size string) (*Fixture, *snapshot.Snapshot) {
	tb.Helper()
	f := Generated(tb, size)
	s, err := Load(f.Files)
	if err != nil {
		tb.Fatal(err)
	}
	return f, s
}
