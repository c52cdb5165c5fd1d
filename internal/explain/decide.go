package explain

import (
	"slices"
	"sort"
	"strings"

	"github.com/agpol/agpol/internal/effective"
)

// Verdicts.
const (
	Allow         = "allow"
	Deny          = "deny"
	Indeterminate = "indeterminate"
)

// decidedBy values that are not policy names.
const (
	DecidedImplicitDeny = "implicit-deny"
	DecidedNoPolicy     = "no-policy"
	// DecidedOtherDataPlane: a data plane other than kube-agentic-networking serves the
	// gateway, so no XAccessPolicy is enforced (Kuadrant's AuthPolicy may still be).
	DecidedOtherDataPlane = "other-data-plane"
	// DecidedNoRoute: no route takes the request; the data plane answers 404.
	DecidedNoRoute = "no-route"
	// DecidedNoBackend: the route rule reaches no backend (a broken backendRef or
	// filter, no backendRefs, a redirect): the data plane answers 500 or redirects.
	DecidedNoBackend = "no-backend"
)

// Step outcomes.
const (
	OutcomeMatched    = "matched"
	OutcomeNotMatched = "not-matched"
	OutcomeSkipped    = "skipped"
	OutcomeConsulted  = "consulted"
	OutcomeInfo       = "info"
)

// Branch is the outcome under one assumption about the unknown authorizers.
type Branch struct {
	Assume    ExtAuth `json:"assume"`
	Decision  string  `json:"decision"`
	Level     string  `json:"level"`
	DecidedBy string  `json:"decidedBy"`
}

// Decision is the verdict for one request on one path under one semantics.
type Decision struct {
	Verdict string `json:"decision"`
	// Explicit is true for a deny by an external authorizer (or an explicit default deny).
	Explicit  bool   `json:"explicit"`
	Level     string `json:"level"`
	DecidedBy string `json:"decidedBy"`
	Semantics string `json:"semantics"`
	// Reason is the one-line why, written by render from Cause (empty from Decide,
	// which builds no text). Kuadrant's AuthPolicy gives it as text.
	Reason string `json:"reason"`
	// Cause is why, as data (nil from Decide but for unread objects).
	Cause    *Cause   `json:"cause,omitempty"`
	Branches []Branch `json:"branches,omitempty"`
	Trace    []Step   `json:"trace"`
}

// DenyKind is "explicit" or "implicit" for a deny by policy, "" otherwise (and for
// the data plane's own answer when no backend is reached or the TLS handshake fails).
func (d *Decision) DenyKind() string {
	if d.Verdict != Deny || d.DecidedBy == DecidedNoRoute || d.DecidedBy == DecidedNoBackend || d.DecidedBy == DecidedTLSHandshake {
		return ""
	}
	if d.Explicit {
		return "explicit"
	}
	return "implicit"
}

// evaluator runs one compiled chain (compiledChain) on one request: the only evaluator.
// An untraced decision (tr nil) reads the chain's program alone; a traced one (Explain)
// runs the same steps and has tr record each, mapped back to the rules and policies
// the program was compiled from (see tracer).
type evaluator struct {
	cc  *compiledChain
	rq  reqSyms
	sem *effective.Semantics
	c   *reqCtx
	ans ExtAuth
	tr  *tracer

	allowBy, allowLevel       string
	ruleLessBy, ruleLessLevel string
	extBy, extLevel           string
	consultedShared           bool

	done    bool
	d       Decision
	unknown effective.LevelName
}

// tracer records the steps of a traced evaluation, as OPA's topdown hands its events to
// a QueryTracer: the evaluator calls it only when tracing, and it rebuilds what the
// program does not keep (why a rule did not match, the policy of a step) from the
// chain's rules.
type tracer struct {
	steps []Step
	mm    Mismatch
}

func (ev *evaluator) step(s Step) {
	if ev.tr != nil {
		ev.tr.steps = append(ev.tr.steps, s)
	}
}

// level is the chain's level of fl, read for a trace.
func (ev *evaluator) level(fl *flatLevel) *effective.Level { return ev.cc.chain.Levels()[fl.idx] }

// matched traces rule j's match.
func (ev *evaluator) matched(fl *flatLevel, phase string, j int32, event string) {
	if ev.tr != nil {
		ev.tr.steps = append(ev.tr.steps, ruleStep(fl.name, phase, ev.cc.rules[j], OutcomeMatched, event, nil))
	}
}

// notMatched traces that rule j does not match, with why, and returns that step (the
// zero Step when untraced).
func (ev *evaluator) notMatched(fl *flatLevel, phase string, j int32) Step {
	if ev.tr == nil {
		return Step{}
	}
	r := ev.cc.rules[j]
	ev.tr.mm = Mismatch{}
	matchRule(r, ev.c, &ev.tr.mm) // CEL results are kept: the same outcome, now with why
	st := ruleStep(fl.name, phase, r, OutcomeNotMatched, EventNotMatched, &ev.tr.mm)
	ev.tr.steps = append(ev.tr.steps, st)
	return st
}

// ruleStep is the step of rule r; mm, when set, is copied.
func ruleStep(level effective.LevelName, phase string, r *effective.Rule, outcome, event string, mm *Mismatch) Step {
	st := Step{Level: string(level), Phase: phase, Policy: r.Policy.ID(), Rule: r.Name, Position: r.Source.At(), Outcome: outcome, Event: event}
	if mm != nil {
		m := *mm
		st.Mismatch = &m
	}
	if event == EventAllows {
		st.Allows = &r.Permission
	}
	return st
}

// policyStep is a step about policy p as a whole.
func policyStep(level effective.LevelName, phase string, p *effective.Policy, outcome, event string) Step {
	pos := p.Source
	return Step{Level: string(level), Phase: phase, Policy: p.ID(), Position: &pos, Outcome: outcome, Event: event}
}

// finish ends the evaluation; cause, built only when tracing, says why.
func (ev *evaluator) finish(verdict string, explicit bool, level, by string, cause func() *Cause) {
	ev.done = true
	ev.d = Decision{Verdict: verdict, Explicit: explicit, Level: level, DecidedBy: by}
	if ev.tr != nil && cause != nil {
		ev.d.Cause = cause()
	}
}

// because is a cause of event alone.
func because(event string) func() *Cause {
	return func() *Cause { return &Cause{Event: event} }
}

// decide evaluates compiled chain cc for the request c with symbols rq, branching over
// unknown authorizers and CEL outcomes; traced, its trace starts with pre.
func decide(cc *compiledChain, rq reqSyms, c *reqCtx, ans ExtAuth, trace bool, pre []Step) Decision {
	return decideCEL(c, trace, func() Decision { return evaluate(cc, rq, c, ans, trace, pre) })
}

// maxUnknownCEL bounds the CEL conditions decideCEL decides every outcome of (2^n runs).
const maxUnknownCEL = 4

// decideCEL runs a decision. When it read a CEL condition whose evaluation ran past the
// runtime cost budget, that condition's outcome is unknown (Envoy evaluates without a
// budget): it decides again under every outcome of those conditions and returns the
// verdict they share, or indeterminate when they differ.
func decideCEL(c *reqCtx, trace bool, run func() Decision) Decision {
	c.cel.overBudget = c.cel.overBudget[:0]
	d := run()
	if len(c.cel.overBudget) == 0 {
		return d
	}
	conds := slices.Clone(c.cel.overBudget)
	var exprs []string
	for _, cond := range conds {
		if !slices.Contains(exprs, cond.Expression) {
			exprs = append(exprs, cond.Expression)
		}
	}
	sort.Strings(exprs)
	same, by := len(conds) <= maxUnknownCEL, []string{d.DecidedBy}
	if same {
		saved := make([]celResult, len(conds))
		for i, cond := range conds {
			saved[i] = c.cel.results[cond]
		}
		for mask := 1; mask < 1<<len(conds) && same; mask++ {
			for i, cond := range conds {
				c.cel.results[cond] = celResult{v: mask&(1<<i) != 0}
			}
			o := run()
			same = o.Verdict == d.Verdict
			if !slices.Contains(by, o.DecidedBy) {
				by = append(by, o.DecidedBy)
			}
		}
		for i, cond := range conds {
			c.cel.results[cond] = saved[i]
		}
	}
	if same {
		if trace {
			st := Step{Level: d.Level, Phase: "default", Outcome: OutcomeInfo, Event: EventCELSame, CEL: exprs}
			if len(by) > 1 {
				st.DecidedByEither = by
			}
			d.Trace = append(d.Trace, st)
		}
		return d
	}
	d.Verdict, d.Explicit, d.Branches = Indeterminate, false, nil
	if trace {
		d.Reason, d.Cause = "", &Cause{Event: CauseCELUnknown, CEL: exprs}
		d.Trace = append(d.Trace, Step{Level: d.Level, Phase: "default", Outcome: OutcomeInfo, Event: EventCELDepends, CEL: exprs})
	}
	return d
}

func evaluate(cc *compiledChain, rq reqSyms, c *reqCtx, ans ExtAuth, trace bool, pre []Step) Decision {
	ev := &evaluator{cc: cc, rq: rq, sem: cc.sem, c: c, ans: ans}
	if trace {
		ev.tr = &tracer{steps: append(c.steps[:0], pre...)}
	}
	ev.run()
	var steps []Step
	if ev.tr != nil {
		// The steps are recorded in c's buffer, kept from one decision to the next, and
		// the trace is their copy at its length: growing each trace step by step made
		// twice its size in garbage.
		if len(ev.tr.steps) > 0 {
			steps = append(make([]Step, 0, len(ev.tr.steps)), ev.tr.steps...)
		}
		clear(ev.tr.steps) // what the steps point to is the trace's, not the buffer's
		c.steps = ev.tr.steps[:0]
	}
	if ev.unknown == "" {
		ev.d.Trace = steps
		ev.d.Semantics = ev.sem.Name
		return ev.d
	}
	lvl := ev.unknown
	pending := ev.d
	aAllow, aDeny := ans, ans
	aAllow.set(lvl, AnswerAllow)
	aDeny.set(lvl, AnswerDeny)
	dA := evaluate(cc, rq, c, aAllow, trace, pre)
	dD := evaluate(cc, rq, c, aDeny, trace, pre)
	branches := append(leafBranches(dA, aAllow), leafBranches(dD, aDeny)...)
	if dA.Verdict == dD.Verdict && dA.Verdict != Indeterminate {
		dA.Branches = branches
		if trace {
			// The trace is the allow branch's: say that the answer was assumed, not given.
			for i := range dA.Trace {
				st := &dA.Trace[i]
				if st.Phase == "extauth" && st.Level == string(lvl) && st.Outcome == OutcomeConsulted && st.Event == EventAnswerAllow {
					st.Event = EventAnswerAssumed
				}
			}
			dA.Trace = append(dA.Trace, Step{Level: string(lvl), Phase: "extauth", Outcome: OutcomeInfo, Event: EventAnswerMoot, Verdict: dA.Verdict})
		}
		return dA
	}
	pending.Verdict = Indeterminate
	pending.Semantics = ev.sem.Name
	pending.Branches = branches
	pending.Trace = steps
	return pending
}

func leafBranches(d Decision, assumed ExtAuth) []Branch {
	if len(d.Branches) > 0 {
		return d.Branches
	}
	return []Branch{{Assume: assumed, Decision: d.Verdict, Level: d.Level, DecidedBy: d.DecidedBy}}
}

// String is e.g. "gateway=allow, backend=deny".
func (e ExtAuth) String() string {
	var p []string
	if e.Gateway != "" {
		p = append(p, "gateway authorizer "+string(e.Gateway))
	}
	if e.Backend != "" {
		p = append(p, "backend authorizer "+string(e.Backend))
	}
	if len(p) == 0 {
		return "no authorizer answer"
	}
	return strings.Join(p, ", ")
}

func (ev *evaluator) run() {
	cc := ev.cc
	if o := cc.chain.OtherDataPlane; o != nil {
		ev.step(Step{Level: string(effective.LevelNone), Phase: "default", Outcome: OutcomeInfo, Event: EventOtherDataPlane, OtherDataPlane: o})
		ev.finish(Allow, false, string(effective.LevelNone), DecidedOtherDataPlane, func() *Cause {
			return &Cause{Event: CauseOtherDataPlane, OtherDataPlane: o}
		})
		return
	}
	if !cc.anyPolicies {
		ev.step(Step{Level: string(effective.LevelNone), Phase: "default", Outcome: OutcomeInfo, Event: EventNoPolicy})
		if ev.sem.NoPolicyDefault == effective.NoPolicyDeny {
			ev.finish(Deny, true, string(effective.LevelNone), DecidedNoPolicy, because(CauseNoPolicyDeny))
			return
		}
		ev.finish(Allow, false, string(effective.LevelNone), DecidedNoPolicy, because(CauseNoPolicyAllow))
		return
	}
	for _, st := range cc.chain.Steps() {
		fl := &cc.levels[st.Level]
		switch st.Kind {
		case effective.StepExtAuth:
			ev.extAuth(fl)
		case effective.StepAllowEach:
			ev.allowEach(fl)
		default:
			ev.allowAny(fl)
		}
		if ev.done || ev.unknown != "" {
			return
		}
	}
	switch {
	case ev.extLast():
		ev.finish(Allow, false, ev.extLevel, ev.extBy, because(CauseExtAuthLast))
	case ev.allowBy != "":
		ev.finish(Allow, false, ev.allowLevel, ev.allowBy, because(CauseAllowedBy))
	case ev.ruleLessBy != "":
		ev.finish(Allow, false, ev.ruleLessLevel, ev.ruleLessBy, because(CauseRuleLessOnly))
	case ev.extBy != "":
		ev.finish(Allow, false, ev.extLevel, ev.extBy, because(CauseExtAuthOnly))
	default:
		ev.finish(Allow, false, string(effective.LevelNone), DecidedNoPolicy, because(CauseNothingEnforces))
	}
}

// extLast reports whether, with authorizers run level by level, an allowing authorizer
// was the last step that allowed: it ran at a later level than every Allow policy that
// allowed. The deciding step of an allow is the last one evaluated.
func (ev *evaluator) extLast() bool {
	if ev.sem.ExtAuthPlacement != effective.ExtAuthPerLevel || ev.extBy == "" {
		return false
	}
	later := func(a, b string) bool {
		return a == string(effective.LevelBackend) && b == string(effective.LevelGateway)
	}
	return (ev.allowBy == "" || later(ev.extLevel, ev.allowLevel)) && (ev.ruleLessBy == "" || later(ev.extLevel, ev.ruleLessLevel))
}

// admits reports whether rule j selects the caller and permits the request.
func (ev *evaluator) admits(j int32) bool {
	return ev.cc.selects(j, &ev.rq) && ev.cc.permits(j, &ev.rq, ev.c)
}

// extAuth runs the level's ExternalAuth policy (StepExtAuth), then, under legacy
// enforcement, its v0alpha0 ExternalAuth rules.
func (ev *evaluator) extAuth(fl *flatLevel) {
	cc := ev.cc
	if fl.extPolicy {
		by := fl.extBy // a rule-less ExternalAuth delegates every request
		if by >= 0 {
			if ev.tr != nil {
				ev.step(policyStep(fl.name, "extauth", ev.level(fl).ExtAuth, OutcomeMatched, EventExtAuthRuleLess))
			}
		} else {
			for j := fl.extStart; j < fl.extEnd; j++ {
				if ev.admits(j) {
					by = j
					ev.matched(fl, "extauth", j, EventExtAuthSelects)
					break
				}
				ev.notMatched(fl, "extauth", j)
			}
			if by < 0 && ev.tr != nil {
				ev.step(Step{Level: string(fl.name), Phase: "extauth", Policy: ev.level(fl).ExtAuth.ID(), Outcome: OutcomeSkipped, Event: EventExtAuthNoRule})
			}
		}
		if by >= 0 {
			if ev.consult(fl, cc.ids[by], !fl.extFilter, true); ev.done || ev.unknown != "" {
				return
			}
		}
	}
	for j := fl.legStart; j < fl.legEnd; j++ {
		if !ev.admits(j) {
			ev.notMatched(fl, "extauth", j)
			continue
		}
		ev.matched(fl, "extauth", j, EventLegacyExtAuth)
		if ev.consult(fl, cc.ids[j], false, false); ev.done || ev.unknown != "" {
			return
		}
	}
}

// consult calls the authorizer of level fl for the policy or rule by; noFilter: the data
// plane has no ext_authz filter for it (the level's NoFilter says why when note).
func (ev *evaluator) consult(fl *flatLevel, by string, noFilter, note bool) {
	name := fl.name
	if noFilter {
		if ev.tr != nil {
			st := Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeSkipped, Event: EventNoFilter}
			if note {
				st.NoFilter = ev.level(fl).NoFilter
			}
			ev.step(st)
		}
		return
	}
	if ev.cc.sharedExtAuth && ev.sem.ExtAuthPlacement == effective.ExtAuthFirst {
		if name == effective.LevelBackend && ev.consultedShared {
			ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeInfo, Event: EventSharedExtAuth})
			return
		}
		ev.consultedShared = true
	}
	switch ev.ans.get(name) {
	case AnswerDeny:
		ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeConsulted, Event: EventAnswerDeny})
		ev.finish(Deny, true, string(name), by, because(CauseExtAuthDenied))
	case AnswerAllow:
		ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeConsulted, Event: EventAnswerAllow})
		ev.extBy, ev.extLevel = by, string(name)
	default:
		ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeConsulted, Event: EventAnswerUnknown})
		ev.unknown = name
		ev.d = Decision{Verdict: Indeterminate, Explicit: false, Level: string(name), DecidedBy: by}
		if ev.tr != nil {
			ev.d.Cause = &Cause{Event: CauseExtAuthUnknown}
		}
	}
}

// allowAny runs the merged Allow rules of a level (StepAllowAny): the rules that do not
// select the caller are passed over on their principal symbol alone.
func (ev *evaluator) allowAny(fl *flatLevel) {
	cc := ev.cc
	if fl.start == fl.end {
		if fl.ruleLess >= 0 {
			ev.ruleLessBy, ev.ruleLessLevel = cc.ids[fl.ruleLess], string(fl.name)
			if ev.tr != nil {
				ev.step(policyStep(fl.name, "allow", ev.level(fl).RuleLessAllow(), OutcomeSkipped, EventRuleLessAllow))
			}
		} else {
			ev.step(Step{Level: string(fl.name), Phase: "allow", Outcome: OutcomeSkipped, Event: EventNoAllow})
		}
		return
	}
	if ev.tr != nil {
		for _, col := range ev.level(fl).Collisions {
			if col.Replaced != "" {
				ev.step(Step{Level: string(fl.name), Phase: "allow", Policy: col.Replaced, Outcome: OutcomeSkipped,
					Event: EventReplaced, RuleName: col.Name, KeptBy: col.Kept})
			}
		}
	}
	selected := false
	// Near misses, ranked by what a person would fix: first the rules that name the
	// call and miss only on the caller (fix, a wrong or defaulted namespace), then the
	// rules that select the caller and name other calls (near), then those that name
	// no call (weak).
	var fix, near, weak []Step
	for j := fl.start; j < fl.end; j++ {
		sel := cc.selects(j, &ev.rq)
		if sel && cc.permits(j, &ev.rq, ev.c) {
			ev.matched(fl, "allow", j, EventAllows)
			ev.allowBy, ev.allowLevel = cc.ids[j], string(fl.name)
			return
		}
		if sel {
			selected = true
		}
		st := ev.notMatched(fl, "allow", j)
		if ev.tr == nil {
			continue
		}
		p := &cc.rules[j].Permission
		names := len(p.Methods) > 0 || p.CEL != nil
		switch {
		case sel && names:
			near = append(near, st)
		case sel:
			weak = append(weak, st)
		case names && !cc.rules[j].Builtin && st.Mismatch != nil && st.Mismatch.Field == "source" && st.Mismatch.Test != "nobody" && cc.permits(j, &ev.rq, ev.c):
			fix = append(fix, st)
		}
	}
	near = append(fix, near...)
	if cc.allow.Unselected == effective.UnselectedPass && !selected {
		ev.step(Step{Level: string(fl.name), Phase: "allow", Outcome: OutcomeInfo, Event: EventLevelPassed})
		return
	}
	ev.finish(Deny, false, string(fl.name), DecidedImplicitDeny, func() *Cause {
		if len(near) == 0 {
			near = weak
		}
		if len(near) > 2 {
			near = near[:2]
		}
		c := &Cause{Event: CauseNoRuleMatches, Near: near}
		if len(near) == 0 {
			c.Caller = ev.c.principalString()
		}
		return c
	})
}

// allowEach runs a level's Allow policies one by one (StepAllowEach): every one must
// allow (0059, legacy).
func (ev *evaluator) allowEach(fl *flatLevel) {
	cc := ev.cc
	if fl.polStart == fl.polEnd {
		ev.step(Step{Level: string(fl.name), Phase: "allow", Outcome: OutcomeSkipped, Event: EventNoAllow})
		return
	}
	for k := fl.polStart; k < fl.polEnd; k++ {
		fp := &cc.policies[k]
		if fp.ruleLess && (cc.allow.RuleLess == effective.RuleLessAllows || !ev.c.toolsCall) {
			if ev.tr != nil {
				ev.step(policyStep(fl.name, "allow", ev.level(fl).Allow[k-fl.polStart], OutcomeMatched, EventRuleLessAllows))
			}
			ev.allowBy, ev.allowLevel = cc.ids[fp.id], string(fl.name)
			continue
		}
		matched := false
		var near []Step
		for j := fp.start; j < fp.end; j++ {
			if ev.admits(j) {
				ev.matched(fl, "allow", j, EventAllows)
				ev.allowBy, ev.allowLevel = cc.ids[j], string(fl.name)
				matched = true
				break
			}
			st := ev.notMatched(fl, "allow", j)
			if ev.tr != nil && len(near) < 2 && cc.selects(j, &ev.rq) && !cc.rules[j].Builtin {
				near = append(near, st)
			}
		}
		if !matched {
			ev.finish(Deny, false, string(fl.name), cc.ids[fp.id], func() *Cause { return &Cause{Event: CausePolicyMatchesNothing, Near: near} })
			return
		}
	}
}
