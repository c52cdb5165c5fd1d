package authpolicy

import (
	"sync"

	"github.com/agpol/agpol/internal/snapshot"
)

// Position is where a rule is written, resolved on first use: resolving a field path to
// file:line re-reads the object's file, and positions are only printed. The zero value is
// an unknown position. Copies share the resolution; it is safe for concurrent use.
type Position struct{ l *lazyPosition }

type lazyPosition struct {
	once   sync.Once
	snap   *snapshot.Snapshot
	origin snapshot.Source
	path   string
	pos    snapshot.Source
}

// fieldPosition resolves fieldPath of the object at origin through s on first use.
func fieldPosition(s *snapshot.Snapshot, origin snapshot.Source, fieldPath string) Position {
	return Position{&lazyPosition{snap: s, origin: origin, path: fieldPath}}
}

// Source resolves the position (once).
func (p Position) Source() snapshot.Source {
	if p.l == nil {
		return snapshot.Source{}
	}
	p.l.once.Do(func() { p.l.pos = p.l.snap.FieldPosition(p.l.origin, p.l.path) })
	return p.l.pos
}

// String is the resolved position as snapshot.Source prints it.
func (p Position) String() string { return p.Source().String() }

// Known reports whether the rule's origin is known (a file:line, or the cluster).
func (p Position) Known() bool { return p.l != nil }

// IsFile reports whether the rule was read from a file.
func (p Position) IsFile() bool { return p.l != nil && p.l.origin.IsFile() }
