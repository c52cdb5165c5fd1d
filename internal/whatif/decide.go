package whatif

import (
	"strings"
	"sync"

	"github.com/google/cel-go/interpreter"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/explain"
)

// This file is an untraced port of the decision procedure of package explain
// (decide.go, match.go), restricted to the requests the what-if space is made of: an
// MCP JSON-RPC call (POST /mcp, no headers) with a method and a tool name. explain
// always builds a trace, which costs tens of microseconds per decision; enumerating a
// large topology needs millions of decisions. TestFastMatchesExplain checks every cell
// of several topologies, under every preset, against explain.Simulator.Explain; chains
// the port does not cover (L7 fields enforced) are decided by Explain itself.

// Cell is the decision for one (identity, target, operation) under one semantics.
type Cell struct {
	Decision  string `json:"decision"`
	Level     string `json:"level"`
	DecidedBy string `json:"decidedBy"`
	// Explicit is true for a deny by an external authorizer or a default deny.
	Explicit bool `json:"explicit,omitempty"`
	// Branches are the outcomes per authorizer answer when the decision is
	// indeterminate (or when an unknown answer does not change it).
	Branches []explain.Branch `json:"branches,omitempty"`
}

// Same reports whether two cells have the same verdict, level and deciding rule.
func (c Cell) Same(o Cell) bool {
	return c.Decision == o.Decision && c.Level == o.Level && c.DecidedBy == o.DecidedBy
}

// call is a prepared request: what matching reads.
type call struct {
	principal string
	method    string
	tool      string
	toolsCall bool
	act       interpreter.Activation
	// cel caches CEL results for this (method, tool): they do not depend on the caller,
	// so calls of one operation by several callers share it (nil: no sharing).
	cel map[*effective.CELCondition]bool
}

func newCall(principal, method, tool string, cel map[*effective.CELCondition]bool) *call {
	if cel == nil {
		cel = map[*effective.CELCondition]bool{}
	}
	return &call{principal: principal, method: method, tool: tool, toolsCall: method == "tools/call", cel: cel}
}

// evalCEL evaluates a compiled condition once per operation; an error is a non-match.
func (c *call) evalCEL(cond *effective.CELCondition) bool {
	if v, ok := c.cel[cond]; ok {
		return v
	}
	v := false
	if out, _, err := cond.Program.Eval(c.activation()); err == nil {
		v, _ = out.Value().(bool)
	}
	c.cel[cond] = v
	return v
}

// activations caches the CEL activation of each (method, tool): it does not depend on
// the caller, and building it costs more than most decisions.
var activations sync.Map

// activation mirrors explain's CEL variables for POST /mcp without headers.
func (c *call) activation() interpreter.Activation {
	if c.act != nil {
		return c.act
	}
	key := c.method + "\x00" + c.tool
	if a, ok := activations.Load(key); ok {
		c.act = a.(interpreter.Activation)
		return c.act
	}
	params := map[string]any{}
	if c.tool != "" {
		params["name"] = c.tool
	}
	a, err := interpreter.NewActivation(map[string]any{
		"request": map[string]any{"path": "/mcp", "url_path": "/mcp", "method": "POST", "host": "", "headers": map[string]string{}},
		"metadata": map[string]any{"filter_metadata": map[string]any{
			"mcp_proxy": map[string]any{"method": c.method, "params": params}}},
	})
	if err != nil {
		panic(err) // a map is always a valid activation
	}
	activations.Store(key, a)
	c.act = a
	return a
}

func matchPrincipal(p *effective.Principal, c *call) bool {
	switch {
	case p.None:
		return false
	case p.Any:
		return true
	}
	return p.Value == c.principal
}

func matchMethod(m *effective.MethodMatcher, c *call) bool {
	if m.Prefix {
		if !strings.HasPrefix(c.method, m.Name) {
			return false
		}
	} else if c.method != m.Name {
		return false
	}
	if len(m.Params) == 0 {
		return true
	}
	for _, p := range m.Params {
		if p == c.tool && c.tool != "" {
			return true
		}
	}
	return false
}

// matchBase is explain's base protocol set for a POST with MCP metadata.
func matchBase(c *call) bool {
	switch c.method {
	case "initialize", "tools/list", "ping":
		return true
	}
	return strings.HasPrefix(c.method, "completion/") || strings.HasPrefix(c.method, "logging/") ||
		strings.HasPrefix(c.method, "notifications/")
}

func matchPermission(p *effective.Permission, c *call) bool {
	ok := p.Any || (p.NotToolsCall && !c.toolsCall)
	if !ok && p.CEL != nil {
		if p.ToolsCallOnly && !c.toolsCall {
			return false
		}
		if !c.evalCEL(p.CEL) {
			return false
		}
		ok = true
	}
	if !ok {
		for i := range p.Methods {
			if matchMethod(&p.Methods[i], c) {
				ok = true
				break
			}
		}
	}
	if !ok && p.Base && matchBase(c) {
		ok = true
	}
	// HTTPMethods (GET) and SessionClose (DELETE) never match a POST.
	return ok
}

func matchRule(r *effective.Rule, c *call) bool {
	return matchPrincipal(&r.Principal, c) && matchPermission(&r.Permission, c)
}

func answer(e explain.ExtAuth, l effective.LevelName) explain.Answer {
	if l == effective.LevelBackend {
		return e.Backend
	}
	return e.Gateway
}

func setAnswer(e *explain.ExtAuth, l effective.LevelName, a explain.Answer) {
	if l == effective.LevelBackend {
		e.Backend = a
	} else {
		e.Gateway = a
	}
}

type evaluator struct {
	chain *effective.Chain
	sem   *effective.Semantics
	c     *call
	ans   explain.ExtAuth

	allowBy, allowLevel       string
	ruleLessBy, ruleLessLevel string
	extBy, extLevel           string
	consultedShared           bool

	done    bool
	d       Cell
	unknown effective.LevelName
}

func (ev *evaluator) finish(verdict string, explicit bool, level, by string) {
	ev.done = true
	ev.d = Cell{Decision: verdict, Explicit: explicit, Level: level, DecidedBy: by}
}

// decide evaluates a chain, branching over unknown authorizers (explain.decide).
func decide(chain *effective.Chain, c *call, ans explain.ExtAuth) Cell {
	ev := &evaluator{chain: chain, sem: &chain.Semantics, c: c, ans: ans}
	ev.run()
	if ev.unknown == "" {
		return ev.d
	}
	lvl := ev.unknown
	pending := ev.d
	aAllow, aDeny := ans, ans
	setAnswer(&aAllow, lvl, explain.AnswerAllow)
	setAnswer(&aDeny, lvl, explain.AnswerDeny)
	dA := decide(chain, c, aAllow)
	dD := decide(chain, c, aDeny)
	branches := append(leafBranches(dA, aAllow), leafBranches(dD, aDeny)...)
	if dA.Decision == dD.Decision && dA.Decision != explain.Indeterminate {
		dA.Branches = branches
		return dA
	}
	pending.Decision = explain.Indeterminate
	pending.Branches = branches
	return pending
}

func leafBranches(d Cell, assumed explain.ExtAuth) []explain.Branch {
	if len(d.Branches) > 0 {
		return d.Branches
	}
	return []explain.Branch{{Assume: assumed, Decision: d.Decision, Level: d.Level, DecidedBy: d.DecidedBy}}
}

func (ev *evaluator) run() {
	levels := ev.chain.Levels()
	any := false
	for _, l := range levels {
		if l.HasPolicies() {
			any = true
		}
	}
	if !any {
		if ev.sem.NoPolicyDefault == effective.NoPolicyDeny {
			ev.finish(explain.Deny, true, string(effective.LevelNone), explain.DecidedNoPolicy)
			return
		}
		ev.finish(explain.Allow, false, string(effective.LevelNone), explain.DecidedNoPolicy)
		return
	}
	switch ev.sem.ExtAuthPlacement {
	case effective.ExtAuthPerLevel:
		for _, l := range levels {
			if ev.extStep(l); ev.done || ev.unknown != "" {
				return
			}
			if ev.allowStep(l); ev.done {
				return
			}
		}
	case effective.ExtAuthLast:
		for _, l := range levels {
			if ev.allowStep(l); ev.done {
				return
			}
		}
		for _, l := range levels {
			if ev.extStep(l); ev.done || ev.unknown != "" {
				return
			}
		}
	default:
		for _, l := range levels {
			if ev.extStep(l); ev.done || ev.unknown != "" {
				return
			}
		}
		for _, l := range levels {
			if ev.allowStep(l); ev.done {
				return
			}
		}
	}
	switch {
	case ev.allowBy != "":
		ev.finish(explain.Allow, false, ev.allowLevel, ev.allowBy)
	case ev.ruleLessBy != "":
		ev.finish(explain.Allow, false, ev.ruleLessLevel, ev.ruleLessBy)
	case ev.extBy != "":
		ev.finish(explain.Allow, false, ev.extLevel, ev.extBy)
	default:
		ev.finish(explain.Allow, false, string(effective.LevelNone), explain.DecidedNoPolicy)
	}
}

func (ev *evaluator) extStep(l *effective.Level) {
	if p := l.ExtAuth; p != nil {
		by := ""
		if p.RuleLess {
			by = p.ID()
		} else {
			for _, r := range p.Rules {
				if matchRule(r, ev.c) {
					by = r.ID()
					break
				}
			}
		}
		if by != "" {
			ev.consult(l, by, !l.ExtAuthFilter)
			if ev.done || ev.unknown != "" {
				return
			}
		}
	}
	for _, r := range l.LegacyExt {
		if !matchRule(r, ev.c) {
			continue
		}
		ev.consult(l, r.ID(), false)
		if ev.done || ev.unknown != "" {
			return
		}
	}
}

func (ev *evaluator) consult(l *effective.Level, by string, noFilter bool) {
	if noFilter {
		return
	}
	if ev.chain.SharedExtAuth && ev.sem.ExtAuthPlacement == effective.ExtAuthFirst {
		if l.Name == effective.LevelBackend && ev.consultedShared {
			return
		}
		ev.consultedShared = true
	}
	switch answer(ev.ans, l.Name) {
	case explain.AnswerDeny:
		ev.finish(explain.Deny, true, string(l.Name), by)
	case explain.AnswerAllow:
		ev.extBy, ev.extLevel = by, string(l.Name)
	default:
		ev.unknown = l.Name
		ev.d = Cell{Decision: explain.Indeterminate, Level: string(l.Name), DecidedBy: by}
	}
}

func (ev *evaluator) allowStep(l *effective.Level) {
	if ev.sem.AllowCombine == effective.CombineAllPolicies {
		ev.allowPerPolicy(l)
		return
	}
	if len(l.Merged) == 0 {
		if p := l.RuleLessAllow(); p != nil {
			ev.ruleLessBy, ev.ruleLessLevel = p.ID(), string(l.Name)
		}
		return
	}
	selected := false
	for _, r := range l.Merged {
		pm := matchPrincipal(&r.Principal, ev.c)
		if pm && matchPermission(&r.Permission, ev.c) {
			ev.allowBy, ev.allowLevel = r.ID(), string(l.Name)
			return
		}
		if pm {
			selected = true
		}
	}
	if ev.sem.AllowCombine == effective.CombinePR220 && !selected {
		return
	}
	ev.finish(explain.Deny, false, string(l.Name), explain.DecidedImplicitDeny)
}

func (ev *evaluator) allowPerPolicy(l *effective.Level) {
	for _, p := range l.Allow {
		if p.RuleLess {
			ok := true
			if ev.sem.EmptyAuthorization == effective.EmptyAuthDenyTools {
				ok = !ev.c.toolsCall
			}
			if ok {
				ev.allowBy, ev.allowLevel = p.ID(), string(l.Name)
				continue
			}
		}
		matched := false
		for _, r := range p.Rules {
			if matchRule(r, ev.c) {
				ev.allowBy, ev.allowLevel = r.ID(), string(l.Name)
				matched = true
				break
			}
		}
		if !matched {
			ev.finish(explain.Deny, false, string(l.Name), p.ID())
			return
		}
	}
}

// portable reports whether the fast port decides this chain exactly: it does not
// implement the L7 matchers (enforced only by a semantics that enforces L7 fields).
func portable(chain *effective.Chain) bool {
	for _, l := range chain.Levels() {
		rules := append([]*effective.Rule(nil), l.Merged...)
		rules = append(rules, l.LegacyExt...)
		if l.ExtAuth != nil {
			rules = append(rules, l.ExtAuth.Rules...)
		}
		for _, p := range l.Allow {
			rules = append(rules, p.Rules...)
		}
		for _, r := range rules {
			if r.Permission.L7 != nil {
				return false
			}
		}
	}
	return true
}
