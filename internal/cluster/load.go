package cluster

import (
	"errors"

	"github.com/agpol/agpol/internal/snapshot"
)

// Build types raw objects into a snapshot. A decoding error names the object's file and line.
func Build(objs []RawObject, positions snapshot.PositionResolver, origins ...string) (*snapshot.Snapshot, error) {
	s := &snapshot.Snapshot{Origins: origins, Positions: positions}
	for _, o := range objs {
		if err := o.typeInto(s); err != nil {
			return nil, typingError(o, positions, err)
		}
	}
	return s, nil
}

// typingError is the error of an object that does not type: for a file's object, an
// *InputError naming the file and the line of the field at fault when it can be found.
func typingError(o RawObject, positions snapshot.PositionResolver, err error) error {
	if !o.Source.IsFile() {
		return err
	}
	line := o.Source.Line
	// A field of the wrong type: point at the field's own line when it can be found.
	var fe *snapshot.FieldError
	if errors.As(err, &fe) && positions != nil {
		if l, _, ok := positions.Position(o.Source, fe.Path); ok {
			line = l
		}
	}
	return &InputError{File: o.Source.File, Line: line, Err: err}
}

// LoadFiles reads the named files into a snapshot.
func LoadFiles(opts FileOptions) (*snapshot.Snapshot, error) {
	objs, pos, err := ReadFiles(opts)
	if err != nil {
		return nil, err
	}
	return Build(objs, pos, "files")
}

// Overlay lays top over base: an object of top replaces the object of base with the same
// identity (group, kind, namespace, name; agentic group aliases folded) in place, and
// objects new in top are appended. This is the offline "what if I apply these files" view.
func Overlay(base, top []RawObject) []RawObject {
	index := make(map[snapshot.Ref]int, len(base))
	out := make([]RawObject, len(base), len(base)+len(top))
	copy(out, base)
	for i, o := range out {
		index[o.Ref()] = i
	}
	for _, o := range top {
		id := o.Ref()
		if i, ok := index[id]; ok {
			out[i] = o
			continue
		}
		index[id] = len(out)
		out = append(out, o)
	}
	return out
}

// DefaultNamespace gives namespaced objects without a namespace the one kubectl apply
// would use (-n, else "default").
func DefaultNamespace(objs []RawObject, ns string) {
	for _, o := range objs {
		o.defaultNamespace(ns)
	}
}
