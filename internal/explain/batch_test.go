package explain

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
)

// collect is a Sink keeping its chunk's results.
type collect struct{ results []*Result }

func (c *collect) Add(r *Result) error { c.results = append(c.results, r); return nil }

// batchResults decides reqs with ExplainBatch and returns the results in the order done
// received them.
func batchResults(t *testing.T, sim *Simulator, o Options, reqs []*Request) ([]*Result, Tally) {
	t.Helper()
	var out []*Result
	tally, err := sim.ExplainBatch(o, reqs, func() Sink { return &collect{} }, func(s Sink) error {
		out = append(out, s.(*collect).results...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, tally
}

// resultsJSON is what a comparison of results reads: each result as -o json has it, and
// the fields it leaves out.
func resultsJSON(t *testing.T, results []*Result) string {
	t.Helper()
	var b strings.Builder
	for _, r := range results {
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		data, _ = json.Marshal([]any{r.Primary, r.Path.NoBackend, r.Path.ListenerChoice, r.Path.BackendAssumption})
		b.Write(data)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestExplainBatchAsExplain: ExplainBatch, on several goroutines and in chunks of one
// and of three requests, gives the results Explain gives, in the same order, with the
// same tally, on every scenario's request file under every semantics, traced or not.
func TestExplainBatchAsExplain(t *testing.T) {
	prevChunk, prevProcs := batchChunk, runtime.GOMAXPROCS(4)
	t.Cleanup(func() { batchChunk = prevChunk; runtime.GOMAXPROCS(prevProcs) })
	sems, err := effective.ParsePresets("all")
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{"../../testdata/examples"}
	m, _ := filepath.Glob("../../testdata/simulate/*")
	dirs = append(dirs, m...)
	for _, d := range dirs {
		if filepath.Base(d) == "cel-runtime-budget" {
			continue // each evaluation runs to the CEL budget: too slow here
		}
		t.Run(filepath.Base(d), func(t *testing.T) {
			files, _ := filepath.Glob(filepath.Join(d, "*.yaml"))
			var manifests []string
			for _, f := range files {
				if filepath.Base(f) != "requests.yaml" {
					manifests = append(manifests, f)
				}
			}
			s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: manifests})
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(requestsOf(d))
			if err != nil {
				t.Fatal(err)
			}
			parse := func() []*Request {
				rf, err := ParseRequestFile("requests.yaml", data, "default")
				if err != nil {
					t.Fatal(err)
				}
				return rf.Requests
			}
			for _, o := range []Options{{}, {Trace: true}, Full} {
				var want Tally
				var results []*Result
				emit := o
				emit.Emit = func(r *Result) error { results = append(results, r); return nil }
				if _, err := New(model.New(s), sems, "").Explain(want.Counted(emit), parse()...); err != nil {
					t.Fatal(err)
				}
				if len(results) == 0 {
					t.Fatal("no result")
				}
				for _, chunk := range []int{1, 3} {
					batchChunk = chunk
					got, tally := batchResults(t, New(model.New(s), sems, ""), o, parse())
					if g, w := resultsJSON(t, got), resultsJSON(t, results); g != w {
						t.Errorf("trace %v, chunks of %d: ExplainBatch's results differ from Explain's:\n%s\nwant\n%s", o.Trace, chunk, g, w)
					}
					if tally != want {
						t.Errorf("trace %v, chunks of %d: tally %+v, want %+v", o.Trace, chunk, tally, want)
					}
				}
			}
		})
	}
}

// TestExplainBatchInputError: a request naming a missing Gateway is an error naming it,
// the first such request of the file, before any chunk is decided.
func TestExplainBatchInputError(t *testing.T) {
	prevChunk, prevProcs := batchChunk, runtime.GOMAXPROCS(4)
	t.Cleanup(func() { batchChunk = prevChunk; runtime.GOMAXPROCS(prevProcs) })
	batchChunk = 2
	s := loadYAML(t, baseTopology)
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	var reqs []*Request
	for i := range 20 {
		r := call("app/agent", "t")
		r.Name = "ok"
		if i == 13 || i == 17 {
			r.Gateway = &NamespacedName{"gw", "missing"}
			r.Name = "missing-" + string(rune('a'+i))
		}
		reqs = append(reqs, r)
	}
	_, err := sim.ExplainBatch(Options{}, reqs, func() Sink { t.Error("a chunk was decided"); return &collect{} },
		func(Sink) error { return nil })
	if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), `"missing-n"`) {
		t.Fatalf("err %v, want the input error of request missing-n", err)
	}
}
