package explain

// Tally counts the results whose expectation passed and failed.
type Tally struct {
	Passed, Failed int
}

// Checked is true when some result had an expectation.
func (t Tally) Checked() bool { return t.Passed+t.Failed > 0 }

// SimulateTally is SimulateEach counting, as it emits them, the expectations of the
// results: what simulate reports as "N passed, M failed" and exits on.
func (sim *Simulator) SimulateTally(reqs []*Request, o Options, emit func(*Result) error) (Tally, error) {
	var t Tally
	err := sim.SimulateEach(reqs, o, func(r *Result) error {
		if r.Expect != nil {
			if r.Expect.Passed {
				t.Passed++
			} else {
				t.Failed++
			}
		}
		return emit(r)
	})
	return t, err
}

// Overall is the verdict of results under the primary semantics: Deny when any is
// denied, else Indeterminate when any is indeterminate, else Allow.
func Overall(results []*Result) string {
	v := Allow
	for _, r := range results {
		if !r.Primary {
			continue
		}
		switch r.Verdict {
		case Deny:
			return Deny
		case Indeterminate:
			v = Indeterminate
		}
	}
	return v
}
