package explain

import (
	"github.com/agpol/agpol/internal/parallel"
)

// batchChunk is how many requests one goroutine decides at a time in ExplainBatch:
// enough that handing a chunk over costs little beside deciding it, few enough that
// the chunks in flight hold little (a variable so that tests can make chunks of one).
var batchChunk = 128

// Sink receives the results of one chunk of a batch's requests, in order, on the
// goroutine that decides them (see ExplainBatch).
type Sink interface {
	Add(*Result) error
}

// batchWorker is what one goroutine of ExplainBatch reuses from one request to the next.
type batchWorker struct {
	rt  routing
	out []*Result
}

// chunkDone is a decided chunk: its sink, the expectations its results passed and
// failed, or the error that stopped it.
type chunkDone struct {
	sink  Sink
	tally Tally
	err   error
}

// ExplainBatch decides reqs as Explain does with o (whose Emit it does not use), on
// every core: the requests are split into chunks, each decided on one goroutine into
// the sink newSink makes for it (on that goroutine), and done receives the sinks on the
// calling goroutine, in request order, each as soon as the chunks before it are done.
// Only a few chunks are decided ahead of done (parallel.Ordered), so memory does not grow
// with the number of requests. Every request is routed first, so a request that names
// missing objects is an error (the first in the file's order) before any sink is made.
// The tally counts the expectations of the results done received.
func (sim *Simulator) ExplainBatch(o Options, reqs []*Request, newSink func() Sink, done func(Sink) error) (Tally, error) {
	o.Emit = nil
	chunks := (len(reqs) + batchChunk - 1) / batchChunk
	chunk := func(c int) []*Request { return reqs[c*batchChunk : min((c+1)*batchChunk, len(reqs))] }
	workers := make([]batchWorker, parallel.Workers(chunks))
	if len(reqs) > 1 {
		errs := make([]error, chunks)
		parallel.For(chunks, func(c int) {
			var rt routing
			for _, r := range chunk(c) {
				r.Normalize()
				if err := sim.resolve(r, &rt, false); err != nil {
					errs[c] = requestError(r, err, true)
					return
				}
			}
		})
		for _, err := range errs {
			if err != nil {
				return Tally{}, err
			}
		}
	}
	var tally Tally
	err := parallel.Ordered(chunks, func(w, c int) chunkDone {
		b := &workers[w]
		d := chunkDone{sink: newSink()}
		for _, r := range chunk(c) {
			var err error
			if b.out, err = sim.explain(r, &b.rt, o, b.out[:0]); err != nil {
				d.err = requestError(r, err, len(reqs) > 1)
				return d
			}
			for _, res := range b.out {
				d.tally.count(res)
				if d.err = d.sink.Add(res); d.err != nil {
					return d
				}
			}
			clear(b.out)
		}
		return d
	}, func(d chunkDone) error {
		tally.Passed += d.tally.Passed
		tally.Failed += d.tally.Failed
		if d.err != nil {
			return d.err
		}
		return done(d.sink)
	})
	return tally, err
}
