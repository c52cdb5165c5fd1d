package differential

import (
	"fmt"
	"os"
	"strconv"
	"testing"
)

// envInt reads a positive integer from the environment.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// generated runs the generated scenarios first..first+n-1 (seed = index).
func generated(t *testing.T, first, n, reqs int) *Report {
	t.Helper()
	up, err := NewUpstream()
	if err != nil {
		t.Fatal(err)
	}
	total := &Report{}
	for i := first; i < first+n; i++ {
		g := NewGenerator(uint64(i))
		sc := g.Scenario(fmt.Sprintf("seed-%d", i))
		sc.StoredToAgpol = i%2 == 1
		sc.Sample = func(o *UpstreamObjects) []Request { return g.Requests(o, reqs) }
		rep, err := Run(up, sc)
		if err != nil {
			t.Fatalf("seed %d: %v", i, err)
		}
		total.Add(rep)
	}
	return total
}

func logReport(t *testing.T, r *Report) {
	t.Helper()
	t.Logf("scenarios %d, requests %d, compared paths %d, policies %d (admission compared %d), skipped %v, disagreements %d",
		r.Scenarios, r.Requests, r.Compared, r.Policies, r.Admissions, r.Skipped, len(r.Disagreements))
}

// TestGenerated is the fixed seed set `make test` runs.
func TestGenerated(t *testing.T) {
	n := envInt("DIFFERENTIAL_SCENARIOS", 1000)
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
