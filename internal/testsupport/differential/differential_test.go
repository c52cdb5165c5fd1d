package differential

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// generated runs the generated scenarios first..first+n-1 (seed = index) on
// GOMAXPROCS workers, each with its own upstream controller.
func generated(t testing.TB, first, n, reqs int) *Report {
	return generatedUnder(t, first, n, reqs, nil)
}

func generatedUnder(t testing.TB, first, n, reqs int, sem *effective.Semantics) *Report {
	t.Helper()
	reports, err := difftest.Seeds(first, n, NewUpstream, func(up *Upstream, i int) (*Report, error) {
		g := NewGenerator(uint64(i))
		sc := g.Scenario(fmt.Sprintf("seed-%d", i))
		sc.StoredToAgpol = i%2 == 1
		sc.Semantics = sem
		sc.Sample = func(o *UpstreamObjects) []Request { return g.Requests(o, reqs) }
		return Run(up, sc)
	})
	if err != nil {
		t.Fatal(err)
	}
	total := &Report{}
	for _, r := range reports {
		total.Add(r)
	}
	return total
}

func logReport(t *testing.T, r *Report) {
	t.Helper()
	t.Logf("scenarios %d, requests %d, compared paths %d (data plane verdicts %v), policies %d (admission compared %d), skipped %v, disagreements %d",
		r.Scenarios, r.Requests, r.Compared, r.Verdicts, r.Policies, r.Admissions, r.Skipped, len(r.Disagreements))
}

// TestGenerated is the fixed seed set `make test` runs.
func TestGenerated(t *testing.T) {
	n := difftest.EnvInt("DIFFERENTIAL_SCENARIOS", 1000)
	if testing.Short() {
		n = 100
	}
	rep := generated(t, 0, n, 20)
	logReport(t, rep)
	for i, d := range rep.Disagreements {
		if i == 20 {
			t.Errorf("... and %d more", len(rep.Disagreements)-20)
			break
		}
		t.Error(d)
	}
}

// TestLong is `make differential N=...`: N generated scenarios from DIFFERENTIAL_FIRST
// (default 1,000,000, after the fixed set), in chunks, printing the rate.
func TestLong(t *testing.T) {
	n := difftest.EnvInt("DIFFERENTIAL_N", 0)
	if n == 0 {
		t.Skip("set DIFFERENTIAL_N (make differential N=...)")
	}
	first := difftest.EnvInt("DIFFERENTIAL_FIRST", 1_000_000)
	if os.Getenv("DIFFERENTIAL_VALIDATE") == "" {
		SkipValidation = true
		defer func() { SkipValidation = false }()
	}
	total := &Report{}
	start := time.Now()
	const chunk = 2000
	for done := 0; done < n; done += chunk {
		k := min(chunk, n-done)
		total.Add(generated(t, first+done, k, 20))
		el := time.Since(start).Seconds()
		fmt.Printf("differential: %d scenarios, %d requests, %d disagreements, %.1f scenarios/s\n",
			total.Scenarios, total.Requests, len(total.Disagreements), float64(total.Scenarios)/el)
	}
	logReport(t, total)
	for i, d := range total.Disagreements {
		if i == 50 {
			t.Errorf("... and %d more", len(total.Disagreements)-50)
			break
		}
		t.Error(d)
	}
}

// TestHarnessTellsSemanticsApart checks that the harness can fail: agpol's other
// presets differ from the reference on generated scenarios, and the harness must
// see it.
func TestHarnessTellsSemanticsApart(t *testing.T) {
	for _, name := range []string{effective.PresetProposal, effective.PresetPR220, effective.PresetLegacy} {
		sem, err := effective.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		rep := generatedUnder(t, 0, 60, 20, &sem)
		if len(rep.Disagreements) == 0 {
			t.Errorf("semantics %s: no disagreement with the data plane in %d requests", name, rep.Requests)
		} else {
			t.Logf("semantics %s: %d disagreements, e.g. %s", name, len(rep.Disagreements), rep.Disagreements[0])
		}
	}
}

// TestShrink shrinks the first disagreement of generated scenario
// DIFFERENTIAL_SHRINK (a seed) and writes it as a regression case to
// testdata/differential/seed-N.
func TestShrink(t *testing.T) {
	i := difftest.SeedFromEnv(t, "DIFFERENTIAL_SHRINK")
	up, err := NewUpstream()
	if err != nil {
		t.Fatal(err)
	}
	g := NewGenerator(uint64(i))
	sc := g.Scenario(fmt.Sprintf("seed-%d", i))
	sc.StoredToAgpol = i%2 == 1
	sc.Sample = func(o *UpstreamObjects) []Request { return g.Requests(o, 20) }
	rep, err := Run(up, sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Disagreements) == 0 {
		t.Skip("no disagreement")
	}
	d := rep.Disagreements[0]
	small, err := Shrink(up, sc, d)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "..", "testdata", "differential", sc.Name)
	if err := WriteCase(dir, small, d); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d objects): %s", dir, len(small.Objects), d)
}
