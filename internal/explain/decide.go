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
	// which builds no text). Route resolution and unread objects give it as text.
	Reason string `json:"reason"`
	// Cause is why, as data (nil from Decide).
	Cause    *Cause   `json:"cause,omitempty"`
	Branches []Branch `json:"branches,omitempty"`
	Trace    []Step   `json:"trace"`
}

// DenyKind is "explicit" or "implicit" for a deny by policy, "" otherwise (and for
// the data plane's own answer when no backend is reached).
func (d *Decision) DenyKind() string {
	if d.Verdict != Deny || d.DecidedBy == DecidedNoRoute || d.DecidedBy == DecidedNoBackend {
		return ""
	}
	if d.Explicit {
		return "explicit"
	}
	return "implicit"
}

type evaluator struct {
	chain *effective.Chain
	sem   *effective.Semantics
	c     *reqCtx
	ans   ExtAuth
	trace bool
	steps []Step
	// flat is the compiled chain and rq the request's symbols for an untraced decision
	// on a compiled chain (decideFlat); nil otherwise.
	flat *compiledChain
	rq   reqSyms
	// levels are chain.Levels() when not deciding on a compiled chain.
	levels []*effective.Level

	allowBy, allowLevel       string
	ruleLessBy, ruleLessLevel string
	extBy, extLevel           string
	consultedShared           bool

	done    bool
	d       Decision
	unknown effective.LevelName
}

func (ev *evaluator) step(s Step) {
	if ev.trace {
		ev.steps = append(ev.steps, s)
	}
}

// ruleStep records a rule's outcome; nothing is built unless tracing.
func (ev *evaluator) ruleStep(level effective.LevelName, phase string, r *effective.Rule, outcome, event string, mm *Mismatch) {
	if ev.trace {
		ev.steps = append(ev.steps, ruleStep(level, phase, r, outcome, event, mm))
	}
}

// ruleStep is the step of rule r; mm, when set, is copied.
func ruleStep(level effective.LevelName, phase string, r *effective.Rule, outcome, event string, mm *Mismatch) Step {
	pos := r.Position()
	st := Step{Level: string(level), Phase: phase, Policy: r.Policy.ID(), Rule: r.Name, Position: &pos, Outcome: outcome, Event: event}
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

// mismatch is where a traced match records why it failed; nil when not tracing.
func (ev *evaluator) mismatch() *Mismatch {
	if !ev.trace {
		return nil
	}
	return &Mismatch{}
}

// finish ends the evaluation; cause, built only when tracing, says why.
func (ev *evaluator) finish(verdict string, explicit bool, level, by string, cause func() *Cause) {
	ev.done = true
	ev.d = Decision{Verdict: verdict, Explicit: explicit, Level: level, DecidedBy: by}
	if ev.trace && cause != nil {
		ev.d.Cause = cause()
	}
}

// because is a cause of event alone.
func because(event string) func() *Cause {
	return func() *Cause { return &Cause{Event: event} }
}

// decide evaluates a chain, branching over unknown authorizers and CEL outcomes.
func decide(chain *effective.Chain, c *reqCtx, ans ExtAuth, trace bool, pre []Step) Decision {
	return decideCEL(c, trace, func() Decision { return evaluate(chain, nil, reqSyms{}, c, ans, trace, pre) })
}

// decideFlat is an untraced decide on a compiled chain, whose Allow rules it reads from
// their flat form (compiledChain): the same decision.
func decideFlat(cc *compiledChain, rq reqSyms, c *reqCtx, ans ExtAuth) Decision {
	return decideCEL(c, false, func() Decision {
		return evaluate(nil, cc, rq, c, ans, false, nil) // the program stands for the chain
	})
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

func evaluate(chain *effective.Chain, flat *compiledChain, rq reqSyms, c *reqCtx, ans ExtAuth, trace bool, pre []Step) Decision {
	var sem *effective.Semantics
	if flat != nil {
		sem = flat.sem // chain may be nil: the compiled chain's is read only when needed (level)
	} else {
		sem = &chain.Semantics
	}
	ev := &evaluator{chain: chain, sem: sem, c: c, ans: ans, trace: trace, flat: flat, rq: rq}
	if trace {
		ev.steps = append(ev.steps, pre...)
	}
	ev.run()
	if ev.unknown == "" {
		ev.d.Trace = ev.steps
		ev.d.Semantics = sem.Name
		return ev.d
	}
	lvl := ev.unknown
	pending := ev.d
	aAllow, aDeny := ans, ans
	aAllow.set(lvl, AnswerAllow)
	aDeny.set(lvl, AnswerDeny)
	dA := evaluate(chain, flat, rq, c, aAllow, trace, pre)
	dD := evaluate(chain, flat, rq, c, aDeny, trace, pre)
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
	pending.Semantics = sem.Name
	pending.Branches = branches
	pending.Trace = ev.steps
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
	any := false
	if ev.flat != nil {
		any = ev.flat.anyPolicies
	} else {
		ev.levels = ev.chain.Levels()
		for _, l := range ev.levels {
			if l.HasPolicies() {
				any = true
			}
		}
	}
	chain := ev.chain
	if ev.flat != nil {
		chain = ev.flat.chain
	}
	if chain != nil && chain.NotEnforced != "" {
		if ev.trace {
			ev.step(Step{Level: string(effective.LevelNone), Phase: "default", Outcome: OutcomeInfo, Reason: chain.NotEnforced})
		}
		ev.finish(Allow, false, string(effective.LevelNone), DecidedOtherDataPlane, func() *Cause {
			return &Cause{Event: CauseOtherDataPlane, Note: chain.NotEnforced}
		})
		return
	}
	if !any {
		if ev.trace {
			ev.step(Step{Level: string(effective.LevelNone), Phase: "default", Outcome: OutcomeInfo, Event: EventNoPolicy})
		}
		if ev.sem.NoPolicyDefault == effective.NoPolicyDeny {
			ev.finish(Deny, true, string(effective.LevelNone), DecidedNoPolicy, because(CauseNoPolicyDeny))
			return
		}
		ev.finish(Allow, false, string(effective.LevelNone), DecidedNoPolicy, because(CauseNoPolicyAllow))
		return
	}
	var steps []effective.ChainStep
	if ev.flat != nil {
		steps = ev.flat.chain.Steps()
	} else {
		steps = ev.chain.Steps()
	}
	for _, st := range steps {
		switch st.Kind {
		case effective.StepExtAuth:
			ev.extStepAt(st.Level)
		case effective.StepAllowEach:
			ev.allowPerPolicy(ev.level(st.Level))
		default:
			ev.allowStep(st.Level)
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

// level is the chain's level i.
func (ev *evaluator) level(i int) *effective.Level {
	if ev.flat != nil {
		return ev.flat.chain.Levels()[i] // the engine's chains keep their levels: no allocation
	}
	return ev.levels[i]
}

// extStepAt is extStep for level i, which a compiled chain runs from its program.
func (ev *evaluator) extStepAt(i int) {
	if ev.flat != nil {
		ev.extFlat(&ev.flat.levels[i])
		return
	}
	ev.extStep(ev.levels[i])
}

// extFlat is extStep, untraced, on a level of a compiled chain.
func (ev *evaluator) extFlat(fl *flatLevel) {
	cc := ev.flat
	if fl.extPolicy {
		by := fl.extBy // a rule-less ExternalAuth delegates every request
		for j := fl.extStart; j < fl.extEnd && by < 0; j++ {
			if cc.selects(j, &ev.rq) && cc.permits(j, &ev.rq, ev.c) {
				by = j
			}
		}
		if by >= 0 {
			if ev.consult(fl.name, cc.ids[by], !fl.extFilter, ""); ev.done || ev.unknown != "" {
				return
			}
		}
	}
	for j := fl.legStart; j < fl.legEnd; j++ {
		if cc.selects(j, &ev.rq) && cc.permits(j, &ev.rq, ev.c) {
			if ev.consult(fl.name, cc.ids[j], false, ""); ev.done || ev.unknown != "" {
				return
			}
		}
	}
}

// extStep runs the level's ExternalAuth (and, under legacy enforcement, its v0alpha0 ExternalAuth rules).
func (ev *evaluator) extStep(l *effective.Level) {
	if p := l.ExtAuth; p != nil {
		by := ""
		if p.RuleLess {
			by = p.ID()
			if ev.trace {
				ev.step(policyStep(l.Name, "extauth", p, OutcomeMatched, EventExtAuthRuleLess))
			}
		} else {
			mm := ev.mismatch()
			for _, r := range p.Rules {
				if matchRule(r, ev.c, mm) {
					by = r.ID()
					ev.ruleStep(l.Name, "extauth", r, OutcomeMatched, EventExtAuthSelects, nil)
					break
				}
				ev.ruleStep(l.Name, "extauth", r, OutcomeNotMatched, EventNotMatched, mm)
			}
			if by == "" {
				if ev.trace {
					ev.step(Step{Level: string(l.Name), Phase: "extauth", Policy: p.ID(), Outcome: OutcomeSkipped, Event: EventExtAuthNoRule})
				}
			}
		}
		if by != "" {
			ev.consult(l.Name, by, !l.ExtAuthFilter, l.ExtAuthNote)
			if ev.done || ev.unknown != "" {
				return
			}
		}
	}
	mm := ev.mismatch()
	for _, r := range l.LegacyExt {
		if !matchRule(r, ev.c, mm) {
			ev.ruleStep(l.Name, "extauth", r, OutcomeNotMatched, EventNotMatched, mm)
			continue
		}
		ev.ruleStep(l.Name, "extauth", r, OutcomeMatched, EventLegacyExtAuth, nil)
		ev.consult(l.Name, r.ID(), false, "")
		if ev.done || ev.unknown != "" {
			return
		}
	}
}

// consult calls the authorizer of level name for the policy or rule by.
func (ev *evaluator) consult(name effective.LevelName, by string, noFilter bool, note string) {
	if noFilter {
		if ev.trace {
			ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeSkipped, Event: EventNoFilter, Note: note})
		}
		return
	}
	if ev.sharedExtAuth() && ev.sem.ExtAuthPlacement == effective.ExtAuthFirst {
		if name == effective.LevelBackend && ev.consultedShared {
			if ev.trace {
				ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeInfo, Event: EventSharedExtAuth})
			}
			return
		}
		ev.consultedShared = true
	}
	switch ev.ans.get(name) {
	case AnswerDeny:
		if ev.trace {
			ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeConsulted, Event: EventAnswerDeny})
		}
		ev.finish(Deny, true, string(name), by, because(CauseExtAuthDenied))
	case AnswerAllow:
		if ev.trace {
			ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeConsulted, Event: EventAnswerAllow})
		}
		ev.extBy, ev.extLevel = by, string(name)
	default:
		if ev.trace {
			ev.step(Step{Level: string(name), Phase: "extauth", Policy: by, Outcome: OutcomeConsulted, Event: EventAnswerUnknown})
		}
		ev.unknown = name
		ev.d = Decision{Verdict: Indeterminate, Explicit: false, Level: string(name), DecidedBy: by}
		if ev.trace {
			ev.d.Cause = &Cause{Event: CauseExtAuthUnknown}
		}
	}
}

// sharedExtAuth is the chain's SharedExtAuth, read from the compiled chain when there
// is one.
func (ev *evaluator) sharedExtAuth() bool {
	if ev.flat != nil {
		return ev.flat.sharedExtAuth
	}
	return ev.chain.SharedExtAuth
}

// allowStep runs the merged Allow rules of level i of the chain (StepAllowAny).
func (ev *evaluator) allowStep(i int) {
	if ev.flat != nil {
		ev.allowFlat(&ev.flat.levels[i])
		return
	}
	l := ev.levels[i]
	if len(l.Merged) == 0 {
		if p := l.RuleLessAllow(); p != nil {
			ev.ruleLessBy, ev.ruleLessLevel = p.ID(), string(l.Name)
			if ev.trace {
				ev.step(policyStep(l.Name, "allow", p, OutcomeSkipped, EventRuleLessAllow))
			}
		} else {
			if ev.trace {
				ev.step(Step{Level: string(l.Name), Phase: "allow", Outcome: OutcomeSkipped, Event: EventNoAllow})
			}
		}
		return
	}
	if ev.trace {
		for _, col := range l.Collisions {
			if col.Replaced != "" {
				ev.step(Step{Level: string(l.Name), Phase: "allow", Policy: col.Replaced, Outcome: OutcomeSkipped,
					Event: EventReplaced, RuleName: col.Name, KeptBy: col.Kept})
			}
		}
	}
	selected := false
	var near, weak []Step
	mm := ev.mismatch()
	for _, r := range l.Merged {
		pm := matchPrincipal(&r.Principal, ev.c, mm)
		if pm && matchPermission(&r.Permission, ev.c, mm) {
			ev.ruleStep(l.Name, "allow", r, OutcomeMatched, EventAllows, nil)
			ev.allowBy, ev.allowLevel = r.ID(), string(l.Name)
			return
		}
		if pm {
			selected = true
			if ev.trace {
				n := ruleStep(l.Name, "allow", r, OutcomeNotMatched, EventNotMatched, mm)
				if len(r.Permission.Methods) > 0 || r.Permission.CEL != nil {
					near = append(near, n)
				} else {
					weak = append(weak, n)
				}
			}
		}
		ev.ruleStep(l.Name, "allow", r, OutcomeNotMatched, EventNotMatched, mm)
	}
	if ev.sem.AllowCombine == effective.CombinePR220 && !selected {
		if ev.trace {
			ev.step(Step{Level: string(l.Name), Phase: "allow", Outcome: OutcomeInfo, Event: EventLevelPassed})
		}
		return
	}
	ev.finish(Deny, false, string(l.Name), DecidedImplicitDeny, func() *Cause {
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

// allowFlat is allowStep, untraced, on a level of a compiled chain: the rules that do
// not select the caller are passed over on their principal symbol alone.
func (ev *evaluator) allowFlat(fl *flatLevel) {
	cc := ev.flat
	if fl.start == fl.end {
		if fl.ruleLess >= 0 {
			ev.ruleLessBy, ev.ruleLessLevel = cc.ids[fl.ruleLess], string(fl.name)
		}
		return
	}
	selected := false
	for j := fl.start; j < fl.end; j++ {
		if !cc.selects(j, &ev.rq) {
			continue
		}
		if cc.permits(j, &ev.rq, ev.c) {
			ev.allowBy, ev.allowLevel = cc.ids[j], string(fl.name)
			return
		}
		selected = true
	}
	if ev.sem.AllowCombine == effective.CombinePR220 && !selected {
		return
	}
	ev.finish(Deny, false, string(fl.name), DecidedImplicitDeny, nil)
}

// allowPerPolicy: every Allow policy of the level must allow (0059, legacy).
func (ev *evaluator) allowPerPolicy(l *effective.Level) {
	if len(l.Allow) == 0 {
		if ev.trace {
			ev.step(Step{Level: string(l.Name), Phase: "allow", Outcome: OutcomeSkipped, Event: EventNoAllow})
		}
		return
	}
	for _, p := range l.Allow {
		if p.RuleLess {
			ok := true
			if ev.sem.EmptyAuthorization == effective.EmptyAuthDenyTools {
				ok = !ev.c.toolsCall
			}
			if ok {
				if ev.trace {
					ev.step(policyStep(l.Name, "allow", p, OutcomeMatched, EventRuleLessAllows))
				}
				ev.allowBy, ev.allowLevel = p.ID(), string(l.Name)
				continue
			}
		}
		matched := false
		var near []Step
		mm := ev.mismatch()
		for _, r := range p.Rules {
			if matchRule(r, ev.c, mm) {
				ev.ruleStep(l.Name, "allow", r, OutcomeMatched, EventAllows, nil)
				ev.allowBy, ev.allowLevel = r.ID(), string(l.Name)
				matched = true
				break
			}
			if ev.trace && len(near) < 2 && matchPrincipal(&r.Principal, ev.c, nil) && !r.Builtin {
				near = append(near, ruleStep(l.Name, "allow", r, OutcomeNotMatched, EventNotMatched, mm))
			}
			ev.ruleStep(l.Name, "allow", r, OutcomeNotMatched, EventNotMatched, mm)
		}
		if !matched {
			ev.finish(Deny, false, string(l.Name), p.ID(), func() *Cause { return &Cause{Event: CausePolicyMatchesNothing, Near: near} })
			return
		}
	}
}
