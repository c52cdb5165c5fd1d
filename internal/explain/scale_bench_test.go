package explain

// Decision benchmarks on generated topologies (hack/gen) and their request files: one
// decision on a compiled chain, a batch of decisions as simulate makes them (routing,
// chain lookup, decision), untraced and traced. Small and medium by default; large with
// AGPOL_BENCH_LARGE=1. decisions/s is per core: run with -cpu 1.

import (
	"os"
	"runtime"
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
)

func generatedSim(b *testing.B, size string) (*Simulator, []*Request) {
	b.Helper()
	f, s := stages.GeneratedSnapshot(b, size)
	data, err := os.ReadFile(f.Requests)
	if err != nil {
		b.Fatal(err)
	}
	rf, err := ParseRequestFile(f.Requests, data, "default")
	if err != nil {
		b.Fatal(err)
	}
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, rf.TrustDomain)
	if _, err := sim.Explain(Full, rf.Requests...); err != nil { // compile every chain the requests use
		b.Fatal(err)
	}
	return sim, rf.Requests
}

// prepared is a request routed to one backend, ready to decide.
type prepared struct {
	chain *compiledChain
	rq    reqSyms
	ctx   *reqCtx
	ans   ExtAuth
}

// decideUntraced makes simulate's decisions without building traces or results:
// routing, chain lookup and the decision of each backend choice (Decider.Decide). It
// returns the number of decisions.
func decideUntraced(b *Decider, r *Request, sink *int) int {
	ds, err := b.Decide(r)
	if err != nil {
		panic(err)
	}
	for i := range ds {
		if ds[i].Verdict == Allow {
			*sink++
		}
	}
	return len(ds)
}

func BenchmarkDecideOne(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sim, reqs := generatedSim(b, size)
			var one *prepared
			for _, r := range reqs { // an allowed tool call that reaches the backend level: every level runs
				res, err := sim.Explain(Full, r)
				if err != nil {
					b.Fatal(err)
				}
				if r.MCP != nil && r.MCP.Method == "tools/call" && res[0].Verdict == Allow && res[0].Path.BackendKind == "XBackend" {
					var rt routing
					if err := sim.resolve(r, &rt, false); err != nil {
						b.Fatal(err)
					}
					ch := &rt.choices[0]
					one = &prepared{chain: sim.program(0, rt.gw, ch),
						ctx: newCtx(r, r.From.Principal(sim.TrustDomain), listenerPort(rt.gw, ch.info.Listener)), ans: r.ExtAuth}
					sim.syms.lookup(one.ctx, nil, &one.rq)
					break
				}
			}
			if one == nil {
				b.Fatal("no allowed tool call reaches an XBackend")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if d := decide(one.chain, one.rq, one.ctx, one.ans, false, nil); d.Verdict != Allow {
					b.Fatal(d.Verdict)
				}
			}
		})
	}
}

// batchLoop decides n requests of reqs, cycling, and returns the number of decisions.
// It is the timed loop of BenchmarkDecideBatch, kept out of line so that bench/cachesim.sh
// can count the instructions and cache misses of exactly this loop.
//
//go:noinline
func batchLoop(batch *Decider, reqs []*Request, n int, allowed *int) int {
	d := 0
	for i := 0; i < n; i++ {
		d += decideUntraced(batch, reqs[i%len(reqs)], allowed)
	}
	return d
}

func BenchmarkDecideBatch(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sim, reqs := generatedSim(b, size)
			batch := sim.Decider()
			allowed, n := 0, 0
			for _, r := range reqs {
				n += decideUntraced(batch, r, &allowed)
			}
			if allowed == 0 || allowed == n {
				b.Fatalf("%d of %d decisions allow: the batch does not exercise both verdicts", allowed, n)
			}
			timeBatch(b, batch, reqs)
		})
	}
}

// timeBatch times b.N requests of reqs, cycled, decided by batch, and reports the
// decisions per second.
func timeBatch(b *testing.B, batch *Decider, reqs []*Request) {
	allowed := 0
	runtime.GC() // the collection loading started ends before the timer does
	b.ReportAllocs()
	b.ResetTimer()
	n := batchLoop(batch, reqs, b.N, &allowed)
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
}

// BenchmarkDecideHot is BenchmarkDecideBatch on the request file's first 200 requests
// only: what they read of the topology (some hundreds of KB on large) stays in the
// core's own cache, so this is the decision path's cost without the waits on memory
// that the whole file's working set, larger than a core's cache, adds to
// BenchmarkDecideBatch. The gap between the two is the price of those misses.
func BenchmarkDecideHot(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sim, reqs := generatedSim(b, size)
			timeBatch(b, sim.Decider(), reqs[:min(len(reqs), 200)])
		})
	}
}

// BenchmarkSimulateText is Explain as agpol simulate decides for its text output:
// results with their paths and expectations, decisions untraced.
func BenchmarkSimulateText(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sim, reqs := generatedSim(b, size)
			runtime.GC()
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += len(reqs) { // a batch at a time, as the command decides its file
				batch := reqs[:min(len(reqs), b.N-i)]
				res, err := sim.Explain(Options{}, batch...)
				if err != nil {
					b.Fatal(err)
				}
				n += len(res)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// BenchmarkSimulate is Simulator.Explain as agpol simulate -o json runs it: traced decisions.
func BenchmarkSimulate(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sim, reqs := generatedSim(b, size)
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := sim.Explain(Full, reqs[i%len(reqs)])
				if err != nil {
					b.Fatal(err)
				}
				n += len(res)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// BenchmarkParseRequestFile parses a topology's request file (stages.Requests requests),
// as agpol simulate --requests does before deciding them.
func BenchmarkParseRequestFile(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			f := stages.Generated(b, size)
			data, err := os.ReadFile(f.Requests)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rf, err := ParseRequestFile(f.Requests, data, "default")
				if err != nil {
					b.Fatal(err)
				}
				if len(rf.Requests) != stages.Requests {
					b.Fatalf("%d requests, want %d", len(rf.Requests), stages.Requests)
				}
			}
		})
	}
}
