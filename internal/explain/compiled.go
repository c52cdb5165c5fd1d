package explain

import (
	"fmt"
	"strings"
	"sync"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// compiledChain is a chain with what decisions read of it laid out as one program: a contiguous []uint32 (code) holding every rule's principal and permission as
// symbols (exact stand-ins for the strings, see symbols), so that deciding a request
// reads a few consecutive cache lines instead of every level, policy, rule, permission
// and method matcher the chain points to. The layout of code, for the chain's n rules
// numbered in level order (each level's merged Allow rules, its ExternalAuth rules, its
// legacy ExternalAuth rules, then, when the semantics runs Allow policies one by one,
// the rules of each of its Allow policies):
//
//	code[0:n]          the principal column: rule j's principal symbol (or symAny, symNone)
//	code[n+3j : n+3j+3] rule j: permission flags, then where its method matchers start and end
//	then, rule by rule, its method matchers (methodWords each: the name's symbol, or
//	prefixBit|i for the prefix prefixes[i]; where its params start and end) followed by
//	their params' symbols.
//
// A level is scanned on its principal column alone; only a rule that selects the caller
// has its permission read. What the program cannot hold (CEL, L7 matchers, legacy HTTP
// methods: permComplex) is matched on the rule itself. The rule IDs are read only for the
// rule that decides. The evaluator (evaluator) runs this program alone, traced or not: a
// trace maps rule j back to rules[j] and a level to chain's.
type compiledChain struct {
	// What every decision reads comes first, in the first 64 bytes.
	code []uint32
	ids  []string             // ids[j] is rule j's ID; policy IDs follow the rules' (read for the deciding rule)
	sem  *effective.Semantics // the engine's, shared by its chains
	// anyPolicies: some level has a policy (Level.HasPolicies); sharedExtAuth is
	// chain.SharedExtAuth; n is the number of levels.
	anyPolicies   bool
	sharedExtAuth bool
	n             uint8
	// nRules is the number of rules: where their entries start in code.
	nRules int32
	levels [maxLevels]flatLevel
	// policies are the levels' Allow policies, for semantics that run them one by one.
	policies []flatPolicy
	// allow is what the Allow step of a level means under sem.
	allow effective.AllowMeaning

	// Read only for a complex permission, a prefix matcher, or a trace.
	rules    []*effective.Rule // rules[j] is rule j
	prefixes []string
	chain    *effective.Chain
}

// flatPolicy is one Allow policy of a level, run on its own (effective.StepAllowEach).
type flatPolicy struct {
	// ruleLess: the policy has no rules (effective.Policy.RuleLess); id is the index
	// in ids of its ID; rules start:end are its rules (built-ins included).
	ruleLess   bool
	id         int32
	start, end int32
}

// maxLevels is the most levels a chain has: the gateway's and the backend's.
const maxLevels = 2

type flatLevel struct {
	name effective.LevelName
	// idx is the level's index in the chain's Levels.
	idx int
	// rules start:end are l.Merged, in order.
	start, end int32
	// ruleLess is the index in ids of the ID of l.RuleLessAllow(), -1 when none.
	ruleLess int32
	// extPolicy is set when the level has an ExternalAuth policy (l.ExtAuth): extBy is
	// the index in ids of its ID when it has no rules (else -1), and rules
	// extStart:extEnd are its rules; extFilter is l.ExtAuthFilter.
	extPolicy        bool
	extFilter        bool
	extBy            int32
	extStart, extEnd int32
	// rules legStart:legEnd are l.LegacyExt.
	legStart, legEnd int32
	// policies polStart:polEnd are l.Allow, laid out when the semantics runs them one
	// by one (effective.CombineAllPolicies).
	polStart, polEnd int32
}

// Permission flags of a rule.
const (
	permAny uint32 = 1 << iota
	permNotToolsCall
	permBase
	permSessionClose
	// permComplex: the permission has CEL, L7 matchers or legacy HTTP methods, and is
	// matched by matchPermission on the rule itself.
	permComplex
)

// ruleWords and methodWords are the sizes of a rule's and a method matcher's entries.
const (
	ruleWords   = 3
	methodWords = 3
	// prefixBit marks a method matcher's first word as the index of a prefix.
	prefixBit = uint32(1) << 31
)

// Principal symbols a rule can hold besides an interned SPIFFE ID.
const (
	symAny  = ^uint32(0)     // selects every caller
	symNone = ^uint32(0) - 1 // selects no caller
)

// symbols interns the strings compiled chains compare (principals, MCP method names and
// tool names) as small integers: two strings are equal exactly when their symbols are.
// Symbol 0 is never given, so a request's string that no chain holds (symbol 0) matches
// nothing. Symbols are only added, so a request looked up after its chain was compiled
// sees every symbol of that chain.
type symbols struct {
	mu sync.RWMutex
	m  map[string]uint32
}

func (s *symbols) intern(v string) uint32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.m[v]; ok {
		return id
	}
	if s.m == nil {
		s.m = map[string]uint32{}
	}
	id := uint32(len(s.m) + 1)
	s.m[v] = id
	return id
}

// reqSyms are the symbols of what a request is matched on.
type reqSyms struct {
	caller uint32 // the caller's principal
	method uint32 // the MCP method; 0 without MCP metadata
	tool   uint32 // params.name; 0 without one
}

// lookup fills the symbols of c (0 for a string no compiled chain holds), building the
// caller's SPIFFE ID in buf rather than as a new string.
func (s *symbols) lookup(c *reqCtx, buf []byte, out *reqSyms) []byte {
	*out = reqSyms{}
	s.mu.RLock()
	if c.saNS == "" {
		out.caller = s.m[c.principal]
	} else {
		buf = append(buf[:0], "spiffe://"...)
		buf = append(buf, c.td...)
		buf = append(buf, "/ns/"...)
		buf = append(buf, c.saNS...)
		buf = append(buf, "/sa/"...)
		buf = append(buf, c.saName...)
		out.caller = s.m[string(buf)] // no allocation for a map index
	}
	if c.hasMCP {
		out.method = s.m[c.mcpMethod]
		if c.tool != "" {
			out.tool = s.m[c.tool]
		}
	}
	s.mu.RUnlock()
	return buf
}

func compileChain(syms *symbols, sem *effective.Semantics, c *effective.Chain) *compiledChain {
	levels := c.Levels()
	if len(levels) > maxLevels {
		panic(fmt.Sprintf("explain: a chain of %d levels (at most %d: gateway and backend)", len(levels), maxLevels))
	}
	cc := &compiledChain{chain: c, sem: sem, sharedExtAuth: c.SharedExtAuth, n: uint8(len(levels))}
	// Number the rules level by level, then lay out the program.
	add := func(rules []*effective.Rule) (start, end int32) {
		start = int32(len(cc.rules))
		cc.rules = append(cc.rules, rules...)
		return start, int32(len(cc.rules))
	}
	var policyIDs []string
	policyID := func(id string) int32 {
		policyIDs = append(policyIDs, id)
		return int32(len(policyIDs) - 1) // made absolute below
	}
	cc.allow = effective.AllowMeaningOf(sem)
	each := cc.allow.Kind == effective.StepAllowEach
	for i, l := range levels {
		fl := &cc.levels[i]
		*fl = flatLevel{name: l.Name, idx: i, ruleLess: -1, extBy: -1}
		if p := l.RuleLessAllow(); p != nil {
			fl.ruleLess = policyID(p.ID())
		}
		cc.anyPolicies = cc.anyPolicies || l.HasPolicies()
		fl.start, fl.end = add(l.Merged)
		if p := l.ExtAuth; p != nil {
			fl.extPolicy, fl.extFilter = true, l.ExtAuthFilter
			if p.RuleLess {
				fl.extBy = policyID(p.ID())
			} else {
				fl.extStart, fl.extEnd = add(p.Rules)
			}
		}
		fl.legStart, fl.legEnd = add(l.LegacyExt)
		fl.polStart = int32(len(cc.policies))
		if each {
			for _, p := range l.Allow {
				fp := flatPolicy{ruleLess: p.RuleLess, id: policyID(p.ID())}
				fp.start, fp.end = add(p.Rules)
				cc.policies = append(cc.policies, fp)
			}
		}
		fl.polEnd = int32(len(cc.policies))
	}
	n := len(cc.rules)
	cc.nRules = int32(n)
	for i := range cc.levels[:cc.n] {
		fl := &cc.levels[i]
		if fl.ruleLess >= 0 {
			fl.ruleLess += int32(n)
		}
		if fl.extBy >= 0 {
			fl.extBy += int32(n)
		}
	}
	for k := range cc.policies {
		cc.policies[k].id += int32(n)
	}
	cc.ids = make([]string, n, n+len(policyIDs))
	for j, r := range cc.rules {
		cc.ids[j] = r.ID()
	}
	cc.ids = append(cc.ids, policyIDs...)
	code := make([]uint32, n+ruleWords*n, n+ruleWords*n+methodWords*n)
	for j, r := range cc.rules {
		code[j] = principalSymbol(syms, &r.Principal)
		code = cc.appendPermission(syms, code, n+ruleWords*j, &r.Permission)
	}
	cc.code = code
	return cc
}

func principalSymbol(syms *symbols, p *effective.Principal) uint32 {
	switch {
	case p.None:
		return symNone
	case p.Any:
		return symAny
	}
	return syms.intern(p.Value)
}

// appendPermission fills the rule entry at code[at:] with permission p and appends its
// method matchers and their params to code.
func (cc *compiledChain) appendPermission(syms *symbols, code []uint32, at int, p *effective.Permission) []uint32 {
	var perm uint32
	if p.Any {
		perm |= permAny
	}
	if p.NotToolsCall {
		perm |= permNotToolsCall
	}
	if p.Base {
		perm |= permBase
	}
	if p.SessionClose {
		perm |= permSessionClose
	}
	if p.CEL != nil || p.L7 != nil || len(p.HTTPMethods) > 0 {
		perm |= permComplex
	}
	code[at] = perm
	code[at+1] = uint32(len(code))
	for i := range p.Methods {
		m := &p.Methods[i]
		k := len(code)
		code = append(code, 0, 0, 0)
		if m.Prefix {
			code[k] = prefixBit | uint32(len(cc.prefixes))
			cc.prefixes = append(cc.prefixes, m.Name)
		} else {
			code[k] = syms.intern(m.Name)
		}
		code[k+1] = uint32(len(code))
		for _, v := range m.Params {
			code = append(code, syms.intern(v))
		}
		code[k+2] = uint32(len(code))
	}
	code[at+2] = uint32(len(code))
	return code
}

// selects reports whether rule j selects the caller (matchPrincipal).
func (cc *compiledChain) selects(j int32, rq *reqSyms) bool {
	p := cc.code[j]
	return p == symAny || p == rq.caller
}

// permits is matchPermission for rule j.
func (cc *compiledChain) permits(j int32, rq *reqSyms, c *reqCtx) bool {
	code := cc.code
	at := int(cc.nRules) + ruleWords*int(j)
	perm := code[at]
	if perm&permComplex != 0 {
		return matchPermission(&cc.rules[j].Permission, c, nil)
	}
	if perm&permAny != 0 || (perm&permNotToolsCall != 0 && !c.toolsCall) {
		return true
	}
	if c.hasMCP {
		for k, end := code[at+1], code[at+2]; k < end; {
			name, pStart, pEnd := code[k], code[k+1], code[k+2]
			k = pEnd // the next matcher follows this one's params
			if name&prefixBit != 0 {
				prefix := cc.prefixes[name&^prefixBit]
				if !strings.HasPrefix(c.mcpMethod, prefix) {
					continue
				}
			} else if name != rq.method {
				continue
			}
			if pStart == pEnd {
				return true
			}
			if rq.tool == 0 {
				continue
			}
			for _, p := range code[pStart:pEnd] {
				if p == rq.tool {
					return true
				}
			}
		}
	}
	if perm&permBase != 0 && matchBase(c) {
		return true
	}
	if perm&permSessionClose != 0 && c.httpMethod == "DELETE" {
		_, ok := c.headers["mcp-session-id"]
		return ok
	}
	return false
}

// chainCache maps a routed path to its compiled chain under one engine. Its key is made
// of pointers into the graph and the listener name, so a lookup hashes a few words
// instead of the names of a gateway and an XBackend (effective.Engine.Chain's key), and
// takes a shared lock only: chains are compiled once, then read by every request.
type chainCache struct {
	mu sync.RWMutex
	m  map[chainSlot]*compiledChain
}

type chainSlot struct {
	gw *snapshot.Gateway
	// listener is the listener's name when the semantics enforces sectionName, else "".
	listener string
	// target is the routed XBackend backendRef, nil for a path without an XBackend.
	target *topology.BackendTarget
}

// cached reports whether the chain of a choice under Engines[i] is kept in sim.chains:
// not for an XBackend the request named, which no pointer into the graph identifies
// (nor in a Simulator not made by New, without chain caches).
func (sim *Simulator) cached(i int, ch *choice) bool {
	return (!ch.hasBackend || ch.target != nil) && i < len(sim.chains)
}

// program returns the compiled chain of a choice on gateway gw under Engines[i].
func (sim *Simulator) program(i int, gw *snapshot.Gateway, ch *choice) *compiledChain {
	if !sim.cached(i, ch) {
		return sim.programOf(sim.engineChain(i, gw, ch))
	}
	return sim.compiled(i, gw, ch)
}

// programOf returns the compiled form of a chain an engine made, compiling it once.
func (sim *Simulator) programOf(c *effective.Chain) *compiledChain {
	pc := &sim.programs
	pc.mu.RLock()
	cc, ok := pc.m[c]
	pc.mu.RUnlock()
	if ok {
		return cc
	}
	cc = compileChain(&sim.syms, &c.Semantics, c)
	pc.mu.Lock()
	if pc.m == nil {
		pc.m = map[*effective.Chain]*compiledChain{}
	}
	pc.m[c] = cc
	pc.mu.Unlock()
	return cc
}

// programCache keeps the compiled form of chains no routed path keys (chainCache): those
// of a backend a request named, and those the decision space decides on (Decide).
type programCache struct {
	mu sync.RWMutex
	m  map[*effective.Chain]*compiledChain
}

// decideOn decides a choice on gateway gw under Engines[i], traced when trace (the trace
// starting with pre); buf is scratch space for the caller's principal, returned for
// reuse.
func (sim *Simulator) decideOn(i int, gw *snapshot.Gateway, ch *choice, c *reqCtx, ans ExtAuth, trace bool, pre []Step, buf []byte) (Decision, []byte) {
	cc := sim.program(i, gw, ch)
	var rq reqSyms
	buf = sim.syms.lookup(c, buf, &rq) // after compiling: sees the chain's symbols
	return decide(cc, rq, c, ans, trace, pre), buf
}

// compiled returns the compiled chain of a choice on gateway gw under Engines[i]; the
// choice's XBackend, if any, must be a routed one (ch.target set).
func (sim *Simulator) compiled(i int, gw *snapshot.Gateway, ch *choice) *compiledChain {
	k := chainSlot{gw: gw, target: ch.target}
	if sim.Engines[i].Semantics.SectionName == effective.Enforced {
		k.listener = ch.info.Listener // else the chain is the same on every listener (Engine.Chain)
	}
	cc := &sim.chains[i]
	cc.mu.RLock()
	c, ok := cc.m[k]
	cc.mu.RUnlock()
	if ok {
		return c
	}
	c = compileChain(&sim.syms, &sim.Engines[i].Semantics, sim.engineChain(i, gw, ch))
	cc.mu.Lock()
	if cc.m == nil {
		cc.m = map[chainSlot]*compiledChain{}
	}
	cc.m[k] = c
	cc.mu.Unlock()
	return c
}

func (sim *Simulator) engineChain(i int, gw *snapshot.Gateway, ch *choice) *effective.Chain {
	var be *topology.Ref
	if ch.hasBackend {
		be = &ch.backend
	}
	return sim.Engines[i].Chain(topology.GatewayRef(gw.Namespace, gw.Name), ch.info.Listener, be)
}
