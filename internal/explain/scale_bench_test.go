package explain

// Decision benchmarks on generated topologies (hack/gen) and their request files: one
// decision on a compiled chain, a batch of decisions as simulate makes them (routing,
// chain lookup, decision), untraced and traced. Small and medium by default; large with
// AGPOL_BENCH_LARGE=1. decisions/s is per core: run with -cpu 1.

import (
	"os"
	"testing"

	"github.com/agpol/agpol/bench/stages"
	"github.com/agpol/agpol/internal/effective"
)

func generatedSim(b *testing.B, size string) (*Simulator, []*Request) {
	b.Helper()
	f := stages.Generated(b, size)
	s, err := stages.Load(f.Files)
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(f.Requests)
	if err != nil {
		b.Fatal(err)
	}
	rf, err := ParseRequestFile(f.Requests, data, "default")
	if err != nil {
		b.Fatal(err)
	}
	sim := New(s, []effective.Semantics{effective.Reference()}, rf.TrustDomain)
	if _, err := sim.Simulate(rf.Requests); err != nil { // compile every chain the requests use
		b.Fatal(err)
	}
	return sim, rf.Requests
}

// prepared is a request routed to one backend, ready to decide.
type prepared struct {
	chain *effective.Chain
	ctx   *reqCtx
	ans   ExtAuth
}

// decideUntraced makes simulate's decisions without building traces: routing, chain
// lookup and the decision of each backend choice. It returns the number of decisions.
func decideUntraced(sim *Simulator, r *Request, e *effective.Engine, sink *int) int {
	choices, err := sim.resolve(r)
	if err != nil {
		panic(err)
	}
	principal := r.From.Principal(sim.TrustDomain)
	gw := effective.GatewayRef(r.Gateway.Namespace, r.Gateway.Name)
	for _, ch := range choices {
		p := principal
		if ch.info.Protocol == "HTTP" {
			p = ""
		}
		port := r.HTTP.Port
		if port == 0 {
			port = sim.listenerPort(r, ch.info)
		}
		d := decide(e.Chain(gw, ch.info.Listener, ch.backend), newCtx(r, p, port), r.ExtAuth, false, nil)
		if d.Verdict == Allow {
			*sink++
		}
	}
	return len(choices)
}

func BenchmarkDecideOne(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sim, reqs := generatedSim(b, size)
			var one *prepared
			for _, r := range reqs { // an allowed tool call that reaches the backend level: every level runs
				res, err := sim.Explain(r)
				if err != nil {
					b.Fatal(err)
				}
				if r.MCP != nil && r.MCP.Method == "tools/call" && res[0].Verdict == Allow && res[0].Path.BackendKind == "XBackend" {
					ch, _ := sim.resolve(r)
					gw := effective.GatewayRef(r.Gateway.Namespace, r.Gateway.Name)
					one = &prepared{chain: sim.Engines[0].Chain(gw, ch[0].info.Listener, ch[0].backend),
						ctx: newCtx(r, r.From.Principal(sim.TrustDomain), sim.listenerPort(r, ch[0].info)), ans: r.ExtAuth}
					break
				}
			}
			if one == nil {
				b.Fatal("no allowed tool call reaches an XBackend")
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if d := decide(one.chain, one.ctx, one.ans, false, nil); d.Verdict != Allow {
					b.Fatal(d.Verdict)
				}
			}
		})
	}
}

func BenchmarkDecideBatch(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sim, reqs := generatedSim(b, size)
			e := sim.Engines[0]
			allowed, n := 0, 0
			for _, r := range reqs {
				n += decideUntraced(sim, r, e, &allowed)
			}
			if allowed == 0 || allowed == n {
				b.Fatalf("%d of %d decisions allow: the batch does not exercise both verdicts", allowed, n)
			}
			n = 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n += decideUntraced(sim, reqs[i%len(reqs)], e, &allowed)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}

// BenchmarkSimulate is Simulator.Simulate as agpol simulate runs it: traced decisions.
func BenchmarkSimulate(b *testing.B) {
	for _, size := range stages.BenchSizes() {
		b.Run(size, func(b *testing.B) {
			sim, reqs := generatedSim(b, size)
			n := 0
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				res, err := sim.Simulate(reqs[i%len(reqs) : i%len(reqs)+1])
				if err != nil {
					b.Fatal(err)
				}
				n += len(res)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "decisions/s")
		})
	}
}
