package explain

// Tally counts the results whose expectation passed and failed.
type Tally struct {
	Passed, Failed int
}

// Checked is true when some result had an expectation.
func (t Tally) Checked() bool { return t.Passed+t.Failed > 0 }

// Counted is o with its Emit counting, before it emits each result, the expectations of
// the results in t: what simulate reports as "N passed, M failed" and exits on.
func (t *Tally) Counted(o Options) Options {
	emit := o.Emit
	o.Emit = func(r *Result) error {
		t.count(r)
		if emit == nil {
			return nil
		}
		return emit(r)
	}
	return o
}

// count counts the expectation of r, if it has one.
func (t *Tally) count(r *Result) {
	if r.Expect != nil {
		if r.Expect.Passed {
			t.Passed++
		} else {
			t.Failed++
		}
	}
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
