package kuadrantdiff

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/testsupport/difftest"
)

// The oracle is a separate Go module; building it from a cold cache takes minutes.
// The harness's tests run when KUADRANT_ORACLE names a built oracle (`make test`,
// `make test-kuadrant` and `make differential-kuadrant` build it into bin/), or when
// KUADRANT_DIFF=1 asks the test to build it; a plain `go test ./...` skips them.
func needOracle(t testing.TB) {
	t.Helper()
	if os.Getenv("KUADRANT_DIFF") == "" && os.Getenv("KUADRANT_ORACLE") == "" {
		t.Skip("set KUADRANT_ORACLE=bin/kuadrant-oracle (make kuadrant-oracle) or KUADRANT_DIFF=1 to run the kuadrant-operator/Authorino oracle")
	}
}

// generated runs scenarios first..first+n-1 (seed = index) on GOMAXPROCS workers, each
// with its own oracle process.
func generated(t testing.TB, first, n, reqs int, mutate func(*Scenario)) *Report {
	t.Helper()
	reports, err := difftest.Seeds(first, n, StartOracle, func(o *Oracle, seed int) (*Report, error) {
		sc := Generate(uint64(seed), reqs)
		if mutate != nil {
			mutate(sc)
		}
		return Run(o, sc)
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

func logReport(t testing.TB, r *Report) {
	t.Helper()
	t.Logf("scenarios %d, requests %d, compared %v, verdicts (agpol → upstream) %v, skipped %v, disagreements %d",
		r.Scenarios, r.Requests, sorted(r.Compared), sorted(r.Verdicts), sorted(r.Skipped), len(r.Disagreements))
}

func sorted(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := "{"
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s: %d", k, m[k])
	}
	return s + "}"
}

// reportDisagreements fails on every disagreement but those of the wasm-shim
// stand-in's selection (KindSelection), which are logged with their count: the
// stand-in reproduces upstream's written order and hostnames, not Envoy's routing,
// and where they part is upstream behaviour to report, not agpol's to copy.
func reportDisagreements(t testing.TB, r *Report, max int) {
	t.Helper()
	var failing []Disagreement
	selection := 0
	for _, d := range r.Disagreements {
		if d.Kind == KindSelection {
			if selection < 5 {
				t.Logf("wasm-shim stand-in: %s", d)
			}
			selection++
			continue
		}
		failing = append(failing, d)
	}
	if selection > 0 {
		t.Logf("wasm-shim stand-in: %d requests select another path's action than agpol's routing", selection)
	}
	for i, d := range failing {
		if i == max {
			t.Errorf("... and %d more", len(failing)-max)
			break
		}
		t.Error(d)
	}
}

// TestGenerated is the fixed seed set.
func TestGenerated(t *testing.T) {
	needOracle(t)
	n := difftest.EnvInt("KUADRANT_DIFF_SCENARIOS", 500)
	if testing.Short() {
		n = 50
	}
	rep := generated(t, 0, n, 10, nil)
	logReport(t, rep)
	reportDisagreements(t, rep, 30)
}

// TestLong is `make differential-kuadrant N=...`: N generated scenarios from
// KUADRANT_DIFF_FIRST (default 1,000,000, after the fixed set), in chunks, printing
// the rate.
func TestLong(t *testing.T) {
	n := difftest.EnvInt("KUADRANT_DIFF_N", 0)
	if n == 0 {
		t.Skip("set KUADRANT_DIFF_N (make differential-kuadrant N=...)")
	}
	first := difftest.EnvInt("KUADRANT_DIFF_FIRST", 1_000_000)
	total := &Report{}
	start := time.Now()
	const chunk = 500
	printed := 0
	for done := 0; done < n; done += chunk {
		k := min(chunk, n-done)
		total.Add(generated(t, first+done, k, 10, nil))
		el := time.Since(start).Seconds()
		byKind := map[string]int{}
		for _, d := range total.Disagreements {
			byKind[d.Kind]++
		}
		fmt.Printf("differential-kuadrant: %d scenarios, %d requests, disagreements %s, %.1f scenarios/s\n",
			total.Scenarios, total.Requests, sorted(byKind), float64(total.Scenarios)/el)
		for _, d := range total.Disagreements[printed:] {
			if d.Kind != KindSelection {
				fmt.Printf("  %s\n", d)
			}
		}
		printed = len(total.Disagreements)
	}
	logReport(t, total)
	reportDisagreements(t, total, 50)
}

// TestDeterministic runs one seed range twice, each time with fresh oracle processes,
// and wants the same report: the same requests compared, skipped and disagreeing.
// Seeds 0-59 hold requests for which the action sets of two paths tie in
// kuadrant-operator's order (seeds 1, 10, 12 among them).
func TestDeterministic(t *testing.T) {
	needOracle(t)
	first := generated(t, 0, 60, 10, nil)
	second := generated(t, 0, 60, 10, nil)
	if first.Compared[KindVerdict] == 0 || first.Compared[KindTied] == 0 {
		t.Fatalf("the seed range compares no verdict or has no tied selection: %v, %v", sorted(first.Compared), sorted(first.Skipped))
	}
	for _, m := range []struct {
		name string
		a, b map[string]int
	}{{"compared", first.Compared, second.Compared}, {"verdicts", first.Verdicts, second.Verdicts}, {"skipped", first.Skipped, second.Skipped}} {
		if x, y := sorted(m.a), sorted(m.b); x != y {
			t.Errorf("%s differ between two runs of the same seeds:\n%s\n%s", m.name, x, y)
		}
	}
	var a, b []string
	for _, d := range first.Disagreements {
		a = append(a, d.String())
	}
	for _, d := range second.Disagreements {
		b = append(b, d.String())
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("disagreements differ between two runs of the same seeds:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// TestHarnessCanFail checks that the harness sees a difference: agpol is given every
// AuthPolicy with its defaults' strategy flipped (atomic ↔ merge) while the oracle
// gets the scenario as generated.
func TestHarnessCanFail(t *testing.T) {
	needOracle(t)
	o, err := StartOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	found := map[string]bool{}
	for i := 0; i < 200 && !(found[KindPath] && found[KindAuthSpec]); i++ {
		sc := Generate(uint64(i), 10)
		flipped := sc.clone()
		changed := false
		for _, x := range flipped.Objects {
			if x.GetKind() != "AuthPolicy" {
				continue
			}
			for _, k := range []string{"defaults", "overrides"} {
				if s, ok := x.Object["spec"].(map[string]any)[k].(map[string]any); ok {
					if s["strategy"] == "merge" {
						s["strategy"] = "atomic"
					} else {
						s["strategy"] = "merge"
					}
					changed = true
				}
			}
		}
		if !changed {
			continue
		}
		sc.AgpolObjects = flipped.Objects
		rep, err := Run(o, sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rep.Disagreements {
			found[d.Kind] = true
		}
	}
	for _, k := range []string{KindPath, KindAuthSpec} {
		if !found[k] {
			t.Errorf("flipping strategies gave no %s disagreement (found %v)", k, found)
		}
	}
}

// TestShrink shrinks the first disagreement of generated scenario KUADRANT_DIFF_SHRINK
// (a seed) and writes it as a regression case to testdata/kuadrantdiff/seed-N.
func TestShrink(t *testing.T) {
	i := difftest.SeedFromEnv(t, "KUADRANT_DIFF_SHRINK")
	o, err := StartOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	sc := Generate(uint64(i), 10)
	rep, err := Run(o, sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Disagreements) == 0 {
		t.Skip("no disagreement")
	}
	d := rep.Disagreements[0]
	for _, x := range rep.Disagreements {
		if x.Kind != KindSelection { // the stand-in's selections are logged, not failing
			d = x
			break
		}
	}
	small, err := Shrink(o, sc, d)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "..", "testdata", "kuadrantdiff", sc.Name)
	if err := WriteCase(dir, small, d); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d objects): %s", dir, len(small.Objects), d)
}

// TestTestdata runs the regression cases of testdata/kuadrantdiff.
func TestTestdata(t *testing.T) {
	needOracle(t)
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "kuadrantdiff", "*"))
	if len(dirs) == 0 {
		t.Fatal("no regression cases found under testdata/kuadrantdiff: the path is wrong")
	}
	o, err := StartOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	total := &Report{}
	for _, d := range dirs {
		sc, err := ReadCase(d)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Run(o, sc)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		// A regression case decides its requests: indeterminate compares nothing.
		for k, n := range rep.Verdicts {
			if strings.Contains(k, explain.Indeterminate) {
				t.Errorf("%s: %d requests %s", d, n, k)
			}
		}
		total.Add(rep)
	}
	logReport(t, total)
	reportDisagreements(t, total, 50)
}

// TestDump prints the scenario of seed KUADRANT_DIFF_DUMP and the oracle's answer.
func TestDump(t *testing.T) {
	i := difftest.SeedFromEnv(t, "KUADRANT_DIFF_DUMP")
	o, err := StartOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	sc := Generate(uint64(i), 10)
	for _, x := range sc.Objects {
		b, _ := yaml.Marshal(x.Object)
		fmt.Printf("---\n%s", b)
	}
	res, err := o.Ask(sc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(b))
}

// TestHarnessSeesIdentities checks that the per-request comparison reads the identity:
// agpol is given every request with alice and bob (and the groups admin and dev)
// swapped (jwt sub, TokenReview username, certificate commonName) and the API key
// Secrets' tiers and owners swapped, while the oracle verifies the requests as
// generated; each identity kind must then give a disagreement (all four within the
// first 601 seeds of this generator: the search is deterministic, TestDeterministic).
func TestHarnessSeesIdentities(t *testing.T) {
	needOracle(t)
	o, err := StartOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	swap := map[any]any{"alice": "bob", "bob": "alice", "system:serviceaccount:ns1:alice": "bob", "admin": "dev", "dev": "admin"}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				out[k] = walk(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = walk(e)
			}
			return out
		case string:
			if r, found := swap[x]; found {
				return r
			}
		}
		return v
	}
	found := map[string]bool{}
	total := &Report{}
	for i := 0; i < 601 && len(found) < 4; i++ { // the four kinds' first disagreements are at seeds 41, 128, 253 and 600
		sc := Generate(uint64(i), 10)
		for _, rq := range sc.Requests {
			if rq.Identity != nil {
				rq.Identity = walk(rq.Identity).(map[string]any)
			}
			sc.AgpolRequests = append(sc.AgpolRequests, rq)
		}
		// An API key's identity is its Secret: agpol reads the Secrets with the tiers
		// swapped too.
		swapped := sc.clone()
		for _, x := range swapped.Objects {
			if x.GetKind() == "Secret" {
				l := x.GetLabels()
				switch l["tier"] {
				case "gold":
					l["tier"] = "silver"
				case "silver":
					l["tier"] = "gold"
				}
				x.SetLabels(l)
				if a := x.GetAnnotations(); a != nil {
					if r, ok := swap[a["owner"]].(string); ok {
						a["owner"] = r
						x.SetAnnotations(a)
					}
				}
			}
		}
		sc.AgpolObjects = swapped.Objects
		rep, err := Run(o, sc)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range rep.Disagreements {
			if d.Kind == KindVerdict || d.Kind == KindStatus {
				for k := range d.Req.Identity {
					if !found[k] {
						t.Logf("seed %d: first %s disagreement", i, k)
					}
					found[k] = true
				}
			}
		}
		total.Add(rep)
	}
	logReport(t, total)
	for _, k := range []string{"apiKey", "jwt", "kubernetes", "x509"} {
		if !found[k] {
			t.Errorf("swapping alice and bob gave no disagreement for %s identities (found %v)", k, found)
		}
	}
}
