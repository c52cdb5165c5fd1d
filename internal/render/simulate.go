package render

import (
	"fmt"
	"io"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/snapshot"
)

// DecisionList is the -o json|yaml document of explain and simulate.
type DecisionList struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Completeness
	Results []*explain.Result `json:"results"`
	Summary *Summary          `json:"summary,omitempty"`
}

// Summary is the count of simulate's expectations.
type Summary struct {
	Passed int `json:"passed"`
	Failed int `json:"failed"`
}

// NewDecisionList is the document of results decided on s, their sentences written
// (into copies: the results are left as they are).
func NewDecisionList(s *snapshot.Snapshot, results []*explain.Result) *DecisionList {
	views := make([]*explain.Result, len(results))
	for i, r := range results {
		views[i] = Sentences(r)
	}
	return &DecisionList{APIVersion: ReportAPIVersion, Kind: "DecisionList", Completeness: CompletenessOf(s), Results: views}
}

// SimulateDetail is what an output format prints beside each verdict: json and yaml
// everything (traces, the AuthPolicy view), junit each decision's reason, text only
// the reasons of failed expectations (which Explain traces anyway). What is not
// printed is not built: decisions are made untraced where no reason is printed.
func SimulateDetail(format Format) explain.Options {
	switch {
	case format.Document():
		return explain.Full
	case format == FormatJUnit:
		return explain.Options{Trace: true}
	}
	return explain.Options{}
}

// SimulateOutput is where and how simulate's results are written.
type SimulateOutput struct {
	Out, ErrOut io.Writer
	Format      Format // text, json, yaml or junit
	Color       ColorMode
	Requests    string // the request file's name
	Snapshot    *snapshot.Snapshot
}

// SimulateWriter writes simulate's results as they are decided, never holding them all.
// The results of a chunk of requests are rendered into memory by a SimulateChunk (on
// the goroutine that decides them), and the chunks written in order by WriteChunk.
type SimulateWriter struct {
	o      SimulateOutput
	chunk  func() *SimulateChunk
	finish func(*Summary) error
}

// SimulateChunk renders the results of one chunk of requests into memory, for its
// SimulateWriter's WriteChunk; written, it is spent.
type SimulateChunk struct {
	add   func(*explain.Result) error
	write func() error
}

// Add renders one result after those before it in the chunk.
func (c *SimulateChunk) Add(r *explain.Result) error { return c.add(r) }

// NewSimulateWriter starts the output of n requests' results: "nothing was simulated"
// when n is 0 (on stdout for text, stderr for the documents, which still follow), and
// the head of a json or yaml document.
func NewSimulateWriter(o SimulateOutput, n int) (*SimulateWriter, error) {
	w := o.Out
	if n == 0 {
		// Nothing is decided: say so rather than succeed silently.
		out := w
		if o.Format != FormatText {
			out = o.ErrOut
		}
		fmt.Fprintf(out, "0 requests in %s: nothing was simulated\n", o.Requests)
	}
	sw := &SimulateWriter{o: o}
	switch {
	case o.Format.Document():
		doc := NewDecisionList(o.Snapshot, nil)
		lw, err := NewListWriter(w, o.Format, "results", doc)
		if err != nil {
			return nil, err
		}
		sw.chunk = func() *SimulateChunk {
			items := lw.Items()
			// Each result's view is encoded at once and dropped: one view and its
			// steps' storage serve the chunk's results one after another.
			var (
				view  explain.Result
				steps []explain.Step
			)
			return &SimulateChunk{
				add: func(r *explain.Result) error {
					steps = sentencesInto(&view, r, steps[:0])
					err := items.Add(&view)
					clear(steps) // the steps of a spent result
					return err
				},
				write: func() error { return lw.WriteItems(items) },
			}
		}
		sw.finish = func(sum *Summary) error { doc.Summary = sum; return lw.Close(doc) }
	case o.Format == FormatJUnit:
		j := NewJUnitSuite(o.Requests)
		sw.chunk = func() *SimulateChunk {
			cases := NewJUnitSuite(o.Requests)
			return &SimulateChunk{
				add:   func(r *explain.Result) error { cases.Add(r); return nil },
				write: func() error { j.addCases(cases); return nil },
			}
		}
		sw.finish = func(*Summary) error { return j.Write(w) }
	default:
		st := Styler{Color: UseColor(o.Color, w)}
		sw.chunk = func() *SimulateChunk {
			b := chunkBuffer()
			tw := st.Writer(b)
			return &SimulateChunk{
				add: func(r *explain.Result) error { return SimulateTextResult(tw, r, st) },
				write: func() error {
					defer releaseBuffer(b)
					if b.Len() == 0 {
						return nil
					}
					_, err := w.Write(b.Bytes())
					return err
				},
			}
		}
		sw.finish = func(*Summary) error { return nil }
	}
	return sw, nil
}

// Chunk returns an empty chunk of sw's results (a *SimulateChunk), to be filled on
// any goroutine: the sink of explain's ExplainBatch.
func (sw *SimulateWriter) Chunk() explain.Sink { return sw.chunk() }

// WriteChunk writes the results of c (from sw.Chunk) after those written before.
func (sw *SimulateWriter) WriteChunk(c explain.Sink) error { return c.(*SimulateChunk).write() }

// Close ends the output: the summary of the expectations t counted (in the document,
// and "N passed, M failed" on stdout for text, stderr otherwise) when there were any.
func (sw *SimulateWriter) Close(t explain.Tally) error {
	var sum *Summary
	if t.Checked() {
		sum = &Summary{Passed: t.Passed, Failed: t.Failed}
	}
	if err := sw.finish(sum); err != nil {
		return err
	}
	if t.Checked() {
		out := sw.o.Out
		if sw.o.Format != FormatText {
			out = sw.o.ErrOut
		}
		fmt.Fprintf(out, "%d passed, %d failed\n", t.Passed, t.Failed)
	}
	return nil
}

// Decisions writes explain's results: a DecisionList document for json and yaml, else
// the text of each decision.
func Decisions(w io.Writer, format Format, color ColorMode, s *snapshot.Snapshot, results []*explain.Result) error {
	if format.Document() {
		return format.Encode(w, NewDecisionList(s, results))
	}
	return ExplainText(w, results, Styler{Color: UseColor(color, w)})
}
