package whatif

import (
	"fmt"

	"github.com/agpol/agpol/internal/explain"
)

// Entry is one decision of a list: a target, an operation and its outcome.
type Entry struct {
	Target  *Target `json:"-"`
	Op      Op      `json:"op"`
	Outcome Outcome `json:"outcome"`
}

// CanIList is every (target, operation) of the space for one identity.
type CanIList struct {
	Semantics []string `json:"semantics"`
	Identity  *Caller  `json:"identity"`
	// PlainHTTP notes that on plain-HTTP listeners the identity is seen as anonymous.
	Entries []Entry `json:"entries"`
	Counts  Counts  `json:"counts"`
}

// CanIList decides every operation of every (filtered) target for one identity.
func (e *Engine) CanIList(id *Caller, f Filter) *CanIList {
	out := &CanIList{Identity: id}
	for _, s := range e.Semantics {
		out.Semantics = append(out.Semantics, s.Name)
	}
	for _, t := range e.Targets {
		if !f.target(t) {
			continue
		}
		for _, op := range t.Ops {
			o := e.Decide(t, id, op)
			out.Entries = append(out.Entries, Entry{Target: t, Op: op, Outcome: o})
			out.Counts.add(o)
		}
	}
	return out
}

// Answer is the outcome of one question on one target.
type Answer struct {
	Target  *Target `json:"-"`
	Outcome Outcome `json:"outcome"`
}

// CanI answers whether an identity may call op through the targets the filter selects.
// For a tools/call, when some of them offer the tool (the inventory lists it for their
// backend, or else their backend-level policies name it), only those are asked: a path
// to a backend that does not offer the tool answers nothing a person means to ask.
// Skipped lists the selected targets left out so.
func (e *Engine) CanI(id *Caller, op Op, f Filter) ([]Answer, error) {
	var out []Answer
	asked := e.offering(op, f)
	for _, t := range e.Targets {
		if f.target(t) && (asked == nil || asked[t]) {
			out = append(out, Answer{Target: t, Outcome: e.Decide(t, id, op)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w", e.noTarget(f))
	}
	return out, nil
}

// Skipped are the targets f selects that CanI leaves out for op: their backend does
// not offer the tool while another selected backend does.
func (e *Engine) Skipped(op Op, f Filter) []*Target {
	asked := e.offering(op, f)
	if asked == nil {
		return nil
	}
	var out []*Target
	for _, t := range e.Targets {
		if f.target(t) && !asked[t] {
			out = append(out, t)
		}
	}
	return out
}

// offering is the set of targets f selects whose backend offers op's tool, nil when
// op is no tools/call or none offers it (then every selected target is asked).
func (e *Engine) offering(op Op, f Filter) map[*Target]bool {
	if op.Method != "tools/call" || op.Tool == "" || op.Other {
		return nil
	}
	var asked map[*Target]bool
	for _, t := range e.Targets {
		if f.target(t) && t.Offers(op.Tool) {
			if asked == nil {
				asked = map[*Target]bool{}
			}
			asked[t] = true
		}
	}
	return asked
}

// ErrNoTarget is wrapped by errors for a gateway/backend combination no route connects.
var ErrNoTarget = fmt.Errorf("no path")

func (e *Engine) noTarget(f Filter) error {
	gw := "any gateway"
	if f.Gateway != "" {
		gw = "gateway " + f.Gateway
	}
	if f.Listener != "" {
		gw += " (listener " + f.Listener + ")"
	}
	switch {
	case f.Backend != "":
		return fmt.Errorf("%w: no accepted route of %s reaches backend %s", ErrNoTarget, gw, f.Backend)
	case f.Gateway != "" || f.Listener != "":
		return fmt.Errorf("%w: %s reaches no backend", ErrNoTarget, gw)
	}
	return fmt.Errorf("%w: the topology has no gateway → backend path", ErrNoTarget)
}

// Verdict folds answers on several targets: allow only when every target allows (a
// script doing "can-i && deploy" must not read a yes that holds on one path of five),
// else deny when some target denies, else indeterminate.
func Verdict(as []Answer) string {
	v := explain.Allow
	for _, a := range as {
		switch a.Outcome.Primary().Decision {
		case explain.Deny:
			return explain.Deny
		case explain.Indeterminate:
			v = explain.Indeterminate
		}
	}
	return v
}

// Count is how many answers have each primary decision.
func Count(as []Answer) map[string]int {
	n := map[string]int{}
	for _, a := range as {
		n[a.Outcome.Primary().Decision]++
	}
	return n
}

// WhoCanTarget is the answer of who-can on one target.
type WhoCanTarget struct {
	Target *Target `json:"-"`
	// Allowed and Indeterminate list the identities with that verdict (primary semantics).
	Allowed       []WhoCanEntry `json:"allowed"`
	Indeterminate []WhoCanEntry `json:"indeterminate"`
	// Anyone is set when every caller no rule names is allowed (a rule matches any caller);
	// AnyoneAnonymous when unauthenticated callers are allowed too.
	Anyone          *Outcome `json:"anyone,omitempty"`
	AnyoneAnonymous bool     `json:"anyoneAnonymous,omitempty"`
	// Differs lists identities whose access differs between semantics.
	Differs []string `json:"differs,omitempty"`
}

// WhoCanEntry is one identity's outcome.
type WhoCanEntry struct {
	Identity *Caller `json:"identity"`
	Outcome  Outcome `json:"outcome"`
}

// WhoCan lists, per (filtered) target, every identity that may perform op, those whose
// access is indeterminate, and whether anyone may.
func (e *Engine) WhoCan(op Op, f Filter) ([]*WhoCanTarget, error) {
	var out []*WhoCanTarget
	// Without a backend, a tool is asked of every backend that offers it.
	var offering map[*Target]bool
	if f.Backend == "" {
		if offering = e.offering(op, f); offering == nil {
			return nil, fmt.Errorf("no backend offers tool %q (no tools inventory entry and no backend-level policy names it): give --backend", op.Tool)
		}
	}
	for _, t := range e.Targets {
		if !f.target(t) || (offering != nil && !offering[t]) {
			continue
		}
		w := &WhoCanTarget{Target: t}
		for _, id := range e.Identities {
			o := e.Decide(t, id, op)
			if o.Differs {
				w.Differs = append(w.Differs, id.ID)
			}
			en := WhoCanEntry{Identity: id, Outcome: o}
			switch o.Primary().Decision {
			case explain.Allow:
				w.Allowed = append(w.Allowed, en)
				if id.Other {
					oc := o
					w.Anyone = &oc
				}
				if id.Kind == explain.CallerAnonymous {
					w.AnyoneAnonymous = true
				}
			case explain.Indeterminate:
				w.Indeterminate = append(w.Indeterminate, en)
			}
		}
		if w.Anyone == nil {
			w.AnyoneAnonymous = false
		}
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, e.noTarget(f)
	}
	return out, nil
}
