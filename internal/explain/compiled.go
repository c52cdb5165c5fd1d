package explain

import (
	"sync"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// compiledChain is a chain with what untraced decisions read of it laid out flat, in a
// few contiguous arrays: each rule's principal and permission as symbols (exact
// stand-ins for the strings, see symbols), so that deciding a request reads a few cache
// lines of the chain instead of every level, policy, rule, permission and method
// matcher it points to. The permissions flat cannot hold (CEL, L7 matchers, legacy HTTP
// methods) are read from the rule itself, as the traced path does.
type compiledChain struct {
	chain *effective.Chain
	sem   *effective.Semantics // the engine's, shared by its chains
	// levels are chain.Levels(), with what deciding reads of each.
	levels      []flatLevel
	levelPtrs   []*effective.Level // chain.Levels()
	anyPolicies bool               // some level has a policy (Level.HasPolicies)
	// sharedExtAuth is chain.SharedExtAuth.
	sharedExtAuth bool
	rules         []flatRule
	methods       []flatMethod
	params        []uint32 // the symbols of methods' params.name values
}

type flatLevel struct {
	l    *effective.Level
	name effective.LevelName
	// rules[start:end] are l.Merged, in order.
	start, end int32
	// ruleLess is the ID of l.RuleLessAllow() ("" when none).
	ruleLess string

	// extPolicy is set when the level has an ExternalAuth policy (l.ExtAuth): extBy is
	// its ID when it has no rules, else rules[extStart:extEnd] are its rules; extFilter
	// is l.ExtAuthFilter.
	extPolicy        bool
	extFilter        bool
	extBy            string
	extStart, extEnd int32
	// rules[legStart:legEnd] are l.LegacyExt.
	legStart, legEnd int32
}

// Permission flags of a flat rule.
const (
	permAny uint8 = 1 << iota
	permNotToolsCall
	permBase
	permSessionClose
	// permComplex: the permission has CEL, L7 matchers or legacy HTTP methods, and is
	// matched by matchPermission on the rule itself.
	permComplex
)

type flatRule struct {
	// principal is the symbol of the SPIFFE ID the rule selects, or symAny or symNone.
	principal uint32
	perm      uint8
	// methods[mStart:mEnd] are the rule's method matchers.
	mStart, mEnd uint32
	id           string // rule.ID()
	rule         *effective.Rule
}

type flatMethod struct {
	name uint32 // the symbol of an exact method name; 0 for a prefix
	// prefix is the name of a prefix matcher (a method category), "" for an exact one.
	prefix string
	// params[pStart:pEnd] are the params.name values the method requires (none: any).
	pStart, pEnd uint32
}

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
	cc := &compiledChain{chain: c, sem: sem, levelPtrs: c.Levels(), sharedExtAuth: c.SharedExtAuth}
	for _, l := range cc.levelPtrs {
		fl := flatLevel{l: l, name: l.Name}
		if p := l.RuleLessAllow(); p != nil {
			fl.ruleLess = p.ID()
		}
		cc.anyPolicies = cc.anyPolicies || l.HasPolicies()
		fl.start, fl.end = cc.add(syms, l.Merged)
		if p := l.ExtAuth; p != nil {
			fl.extPolicy, fl.extFilter = true, l.ExtAuthFilter
			if p.RuleLess {
				fl.extBy = p.ID()
			} else {
				fl.extStart, fl.extEnd = cc.add(syms, p.Rules)
			}
		}
		fl.legStart, fl.legEnd = cc.add(syms, l.LegacyExt)
		cc.levels = append(cc.levels, fl)
	}
	return cc
}

// add flattens rules into cc.rules and returns where they are.
func (cc *compiledChain) add(syms *symbols, rules []*effective.Rule) (start, end int32) {
	start = int32(len(cc.rules))
	for _, r := range rules {
		cc.rules = append(cc.rules, cc.flatten(syms, r))
	}
	return start, int32(len(cc.rules))
}

func (cc *compiledChain) flatten(syms *symbols, r *effective.Rule) flatRule {
	fr := flatRule{id: r.ID(), rule: r}
	switch p := &r.Principal; {
	case p.None:
		fr.principal = symNone
	case p.Any:
		fr.principal = symAny
	default:
		fr.principal = syms.intern(p.Value)
	}
	p := &r.Permission
	if p.Any {
		fr.perm |= permAny
	}
	if p.NotToolsCall {
		fr.perm |= permNotToolsCall
	}
	if p.Base {
		fr.perm |= permBase
	}
	if p.SessionClose {
		fr.perm |= permSessionClose
	}
	if p.CEL != nil || p.L7 != nil || len(p.HTTPMethods) > 0 {
		fr.perm |= permComplex
	}
	fr.mStart = uint32(len(cc.methods))
	for i := range p.Methods {
		m := &p.Methods[i]
		fm := flatMethod{pStart: uint32(len(cc.params))}
		if m.Prefix {
			fm.prefix = m.Name
		} else {
			fm.name = syms.intern(m.Name)
		}
		for _, v := range m.Params {
			cc.params = append(cc.params, syms.intern(v))
		}
		fm.pEnd = uint32(len(cc.params))
		cc.methods = append(cc.methods, fm)
	}
	fr.mEnd = uint32(len(cc.methods))
	return fr
}

// selects reports whether rule fr selects the caller (matchPrincipal).
func (fr *flatRule) selects(rq *reqSyms) bool {
	return fr.principal == symAny || fr.principal == rq.caller
}

// permits is matchPermission for a flat rule of cc.
func (cc *compiledChain) permits(fr *flatRule, rq *reqSyms, c *reqCtx) bool {
	if fr.perm&permComplex != 0 {
		return matchPermission(&fr.rule.Permission, c, nil)
	}
	if fr.perm&permAny != 0 || (fr.perm&permNotToolsCall != 0 && !c.toolsCall) {
		return true
	}
	if c.hasMCP {
		for _, m := range cc.methods[fr.mStart:fr.mEnd] {
			if m.name == 0 {
				if len(c.mcpMethod) < len(m.prefix) || c.mcpMethod[:len(m.prefix)] != m.prefix {
					continue
				}
			} else if m.name != rq.method {
				continue
			}
			if m.pStart == m.pEnd {
				return true
			}
			if rq.tool == 0 {
				continue
			}
			for _, p := range cc.params[m.pStart:m.pEnd] {
				if p == rq.tool {
					return true
				}
			}
		}
	}
	if fr.perm&permBase != 0 && matchBase(c) {
		return true
	}
	if fr.perm&permSessionClose != 0 && c.httpMethod == "DELETE" {
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
	gw       *snapshot.Gateway
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

// chain returns the chain of a choice on gateway gw under Engines[i].
func (sim *Simulator) chain(i int, gw *snapshot.Gateway, ch *choice) *effective.Chain {
	if !sim.cached(i, ch) {
		return sim.engineChain(i, gw, ch)
	}
	return sim.compiled(i, gw, ch).chain
}

// decideUntraced decides a choice on gateway gw under Engines[i] without a trace; buf is
// scratch space for the caller's principal, returned for reuse.
func (sim *Simulator) decideUntraced(i int, gw *snapshot.Gateway, ch *choice, c *reqCtx, ans ExtAuth, buf []byte) (Decision, []byte) {
	if !sim.cached(i, ch) {
		return decide(sim.engineChain(i, gw, ch), c, ans, false, nil), buf
	}
	cc := sim.compiled(i, gw, ch)
	var rq reqSyms
	buf = sim.syms.lookup(c, buf, &rq) // after compiling: sees the chain's symbols
	return decideFlat(cc, rq, c, ans), buf
}

// compiled returns the compiled chain of a choice on gateway gw under Engines[i]; the
// choice's XBackend, if any, must be a routed one (ch.target set).
func (sim *Simulator) compiled(i int, gw *snapshot.Gateway, ch *choice) *compiledChain {
	k := chainSlot{gw: gw, listener: ch.info.Listener, target: ch.target}
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
	return sim.Engines[i].Chain(effective.GatewayRef(gw.Namespace, gw.Name), ch.info.Listener, be)
}
