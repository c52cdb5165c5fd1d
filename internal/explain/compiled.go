package explain

import (
	"hash/maphash"
	"sync"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// compiledChain is a chain with what untraced decisions read of it laid out flat: the
// principal each Allow rule selects, as a key, so that the rules a caller cannot
// match are passed over without reading them (see evaluator.allowStep).
type compiledChain struct {
	chain *effective.Chain
	// principals[i][j] is the key of levels[i].Merged[j].Principal (principalKey).
	principals [][]uint64
}

// Principal keys: a hash of the SPIFFE ID a rule selects, or one of these.
const (
	keyAny  uint64 = 0 // selects every caller
	keyNone uint64 = 1 // selects no caller
)

// principalKey is the key of a rule's principal under seed: equal principals have equal
// keys; a caller's principal hashes to hashPrincipal's key, never to keyAny or keyNone.
func principalKey(seed maphash.Seed, p *effective.Principal) uint64 {
	switch {
	case p.None:
		return keyNone
	case p.Any:
		return keyAny
	}
	return fixKey(maphash.String(seed, p.Value))
}

func fixKey(h uint64) uint64 {
	if h <= keyNone {
		h += 2
	}
	return h
}

// callerKey is the key of the caller's principal, hashed from its pieces (no string is
// built): maphash gives the same hash however the bytes are split across writes.
func (c *reqCtx) callerKey(seed maphash.Seed) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	if c.saNS == "" {
		h.WriteString(c.principal)
	} else {
		h.WriteString("spiffe://")
		h.WriteString(c.td)
		h.WriteString("/ns/")
		h.WriteString(c.saNS)
		h.WriteString("/sa/")
		h.WriteString(c.saName)
	}
	return fixKey(h.Sum64())
}

func compileChain(seed maphash.Seed, c *effective.Chain) *compiledChain {
	cc := &compiledChain{chain: c}
	for _, l := range c.Levels() {
		keys := make([]uint64, len(l.Merged))
		for j, r := range l.Merged {
			keys[j] = principalKey(seed, &r.Principal)
		}
		cc.principals = append(cc.principals, keys)
	}
	return cc
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

// decideUntraced decides a choice on gateway gw under Engines[i] without a trace.
func (sim *Simulator) decideUntraced(i int, gw *snapshot.Gateway, ch *choice, c *reqCtx, ans ExtAuth) Decision {
	if !sim.cached(i, ch) {
		return decide(sim.engineChain(i, gw, ch), c, ans, false, nil)
	}
	return decideCompiled(sim.compiled(i, gw, ch), c.callerKey(sim.seed), c, ans)
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
	c = compileChain(sim.seed, sim.engineChain(i, gw, ch))
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
