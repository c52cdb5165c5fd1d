package cluster

import (
	"github.com/agpol/agpol/internal/snapshot"
)

// Build types raw objects into a snapshot. A decoding error names the object's file and line.
func Build(objs []RawObject, positions snapshot.PositionResolver, origins ...string) (*snapshot.Snapshot, error) {
	s := &snapshot.Snapshot{Origins: origins, Positions: positions}
	for _, o := range objs {
		if err := s.Add(o.Object, o.Source); err != nil {
			if o.Source.IsFile() {
				return nil, &InputError{File: o.Source.File, Line: o.Source.Line, Err: err}
			}
			return nil, err
		}
	}
	return s, nil
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
	index := make(map[snapshot.Identity]int, len(base))
	out := make([]RawObject, len(base), len(base)+len(top))
	copy(out, base)
	for i, o := range out {
		index[snapshot.IdentityOf(o.Object)] = i
	}
	for _, o := range top {
		id := snapshot.IdentityOf(o.Object)
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
		if o.Object.GetNamespace() != "" {
			continue
		}
		gvk := o.Object.GroupVersionKind()
		if k, ok := snapshot.LookupKind(gvk.Group, gvk.Kind); ok && !k.Namespaced {
			continue
		}
		if gvk.Kind == "Namespace" || gvk.Kind == "GatewayClass" {
			continue
		}
		o.Object.SetNamespace(ns)
	}
}
