package effective

import (
	"strconv"
	"sync"

	"github.com/agpol/agpol/internal/snapshot"
)

// RuleSource is where a rule is written. It is resolved on first use: resolving a field
// path to file:line re-reads the object's file, and positions are only printed (describe,
// traced decisions), so compiling a level does not pay for them. The zero value is an
// unknown position. Copies share the resolution; it is safe for concurrent use.
type RuleSource struct{ l *lazySource }

type lazySource struct {
	once   sync.Once
	snap   *snapshot.Snapshot
	origin snapshot.Source
	path   string
	pos    snapshot.Source
}

// fieldSource resolves fieldPath of the object at origin through s on first use.
func fieldSource(s *snapshot.Snapshot, origin snapshot.Source, fieldPath string) RuleSource {
	return RuleSource{&lazySource{snap: s, origin: origin, path: fieldPath}}
}

// fixedSource is a known position (built-in rules: the policy's origin).
func fixedSource(src snapshot.Source) RuleSource {
	return RuleSource{&lazySource{origin: src}}
}

// ruleField is the field path of spec.rules[i].
func ruleField(i int) string { return "spec.rules[" + strconv.Itoa(i) + "]" }

// Position resolves the position (once).
func (s RuleSource) Position() snapshot.Source {
	if s.l == nil {
		return snapshot.Source{}
	}
	s.l.once.Do(func() {
		s.l.pos = s.l.origin
		if s.l.path != "" {
			s.l.pos = s.l.snap.FieldPosition(s.l.origin, s.l.path)
		}
	})
	return s.l.pos
}

// String is the resolved position as snapshot.Source prints it (file:line, or the cluster).
func (s RuleSource) String() string { return s.Position().String() }

// IsFile reports whether the rule was read from a file.
func (s RuleSource) IsFile() bool { return s.l != nil && s.l.origin.IsFile() }

// Position is where the rule is written (file:line of spec.rules[i] for a file, the
// policy's origin otherwise), resolved on first use.
func (r *Rule) Position() snapshot.Source { return r.Source.Position() }
