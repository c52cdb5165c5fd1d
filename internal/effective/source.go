package effective

import (
	"strconv"
	"sync"

	"github.com/agpol/agpol/internal/snapshot"
)

// RuleSource is where a rule is written. It is resolved on first use: resolving a field
// path to file:line re-reads the object's file, and positions are only printed (describe,
// traced decisions), so compiling a level does not pay for them. The rules of one policy
// are resolved together, when the first of them is asked for: each resolution parses the
// policy's document again unless it is among the few parsed last
// (cluster.FilePositions), so one parse serves every rule of the policy instead of one
// parse a rule. The zero value is an unknown position. Copies share the resolution; it
// is safe for concurrent use.
type RuleSource struct {
	g *sourceGroup
	i int
}

// sourceGroup is the positions of one policy's rules (paths), or a fixed position
// (paths nil: the policy's origin).
type sourceGroup struct {
	once   sync.Once
	snap   *snapshot.Snapshot
	origin snapshot.Source
	paths  []string
	pos    []snapshot.Source
}

// ruleSources are the sources of the rules of one policy, resolved together.
type ruleSources struct{ g *sourceGroup }

// policyRuleSources returns the sources of the n rules (spec.rules[i]) of the object
// at origin, resolved through s when the first is asked for.
func policyRuleSources(s *snapshot.Snapshot, origin snapshot.Source, n int) ruleSources {
	paths := make([]string, n)
	for i := range paths {
		paths[i] = ruleField(i)
	}
	return ruleSources{&sourceGroup{snap: s, origin: origin, paths: paths}}
}

// rule is the source of rule i.
func (rs ruleSources) rule(i int) RuleSource { return RuleSource{g: rs.g, i: i} }

// fixedSource is a known position (built-in rules: the policy's origin).
func fixedSource(src snapshot.Source) RuleSource {
	return RuleSource{g: &sourceGroup{origin: src}}
}

// ruleField is the field path of spec.rules[i].
func ruleField(i int) string { return "spec.rules[" + strconv.Itoa(i) + "]" }

// resolve resolves every path of g, one after another, so that the document the first
// parses serves the others.
func (g *sourceGroup) resolve() {
	g.pos = make([]snapshot.Source, len(g.paths))
	for i, p := range g.paths {
		g.pos[i] = g.snap.FieldPosition(g.origin, p)
	}
}

// At resolves the position (with the other rules of its policy, once) and returns it;
// it is shared by every copy of s and must not be modified.
func (s RuleSource) At() *snapshot.Source {
	if s.g == nil {
		return &snapshot.Source{}
	}
	g := s.g
	if g.paths == nil {
		return &g.origin
	}
	g.once.Do(g.resolve)
	return &g.pos[s.i]
}

// Position resolves the position (with the other rules of its policy, once).
func (s RuleSource) Position() snapshot.Source {
	if s.g == nil {
		return snapshot.Source{}
	}
	return *s.At()
}

// String is the resolved position as snapshot.Source prints it (file:line, or the cluster).
func (s RuleSource) String() string { return s.Position().String() }

// IsFile reports whether the rule was read from a file.
func (s RuleSource) IsFile() bool { return s.g != nil && s.g.origin.IsFile() }

// Position is where the rule is written (file:line of spec.rules[i] for a file, the
// policy's origin otherwise), resolved on first use.
func (r *Rule) Position() snapshot.Source { return r.Source.Position() }
