package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/snapshot"
)

// admit does to an object read from a file what the API server does before it stores
// it (crds.Validator.Admit: pruning of unknown fields and CRD defaults, at the object's
// version and at the storage version), so that every answer computes on the object a
// cluster would hold. It returns the fields dropped, and the lists over their CRD's
// maxItems, for which the API server would refuse the object; nil when none. Objects
// without an embedded CRD for their version (core kinds, the legacy agentic group, a
// version no CRD serves) are left as they are: their problems are reported elsewhere
// (AGP103, decoding errors).
//
// atVersion, when set, sees the object as decoded at its own version (crds.AdmitWith).
func admit(u *unstructured.Unstructured, atVersion func(*crds.Validator, crds.Decoding)) []snapshot.DroppedField {
	gvk := u.GroupVersionKind()
	v := crds.ForAdmission(gvk)
	if v == nil {
		return nil
	}
	tools := legacyTools(u)
	var hook func(crds.Decoding)
	if atVersion != nil {
		hook = func(d crds.Decoding) { atVersion(v, d) }
	}
	a, err := v.AdmitWith(u, hook)
	if err != nil {
		return nil // metadata the API server cannot read: typing reports it
	}
	restoreLegacyTools(u, tools)
	if len(a.Dropped) == 0 && len(a.DroppedStored) == 0 && len(a.LongLists) == 0 {
		return nil
	}
	out := make([]snapshot.DroppedField, 0, len(a.Dropped)+len(a.DroppedStored)+len(a.LongLists))
	for _, p := range a.Dropped {
		out = append(out, snapshot.DroppedField{Kind: gvk.Kind, Path: p})
	}
	for _, p := range a.DroppedStored {
		out = append(out, snapshot.DroppedField{Kind: gvk.Kind, Path: p, StoredAt: a.StoredAt})
	}
	for _, l := range a.LongLists {
		out = append(out, snapshot.DroppedField{Kind: gvk.Kind, Path: l.Path, Rejected: l.String()})
	}
	return out
}

// AdmitKinds names the kinds whose objects read from files are admitted (admit), by
// group (agentic group aliases folded) and kind; nil admits every kind. A command that
// neither prints nor decides a kind leaves its objects as written: typing them is all
// it needs (their metadata, to select them), and pruning and defaulting them would be
// work whose result nothing reads.
type AdmitKinds map[schema.GroupKind]bool

// admits reports whether objects of the kind of id are admitted.
func (a AdmitKinds) admits(id snapshot.Ref) bool {
	return a == nil || a[schema.GroupKind{Group: id.Group, Kind: id.Kind}]
}

// skips reports whether a leaves out an object of u's kind that admission would change:
// a kind agpol reads with a CRD (not a core kind, nor the legacy agentic group, which
// is never admitted), counted in snapshot.Snapshot.Unadmitted.
func (a AdmitKinds) skips(u *unstructured.Unstructured, id snapshot.Ref) bool {
	if a.admits(id) {
		return false
	}
	gvk := u.GroupVersionKind()
	k, ok := snapshot.LookupKind(gvk.Group, gvk.Kind)
	return ok && k.Group != "" && k.Group == gvk.Group
}

// legacyTools are the spec.rules[i].authorization.tools of an XAccessPolicy written at
// v0alpha0, by rule index (nil for another object). Storing at v1alpha1 prunes them
// (upstream #271), yet the legacy translator (semantics v0alpha0-legacy) read objects
// stored at v0alpha0, tools included: its view (snapshot.XAccessPolicy.Legacy) keeps
// them, while the v1alpha1 view, which has no such field, never reads them and every
// other preset leaves v0alpha0 objects unenforced. lint still reports the pruning (AGP102).
func legacyTools(u *unstructured.Unstructured) map[int][]any {
	gvk := u.GroupVersionKind()
	if gvk.Kind != agentic.KindXAccessPolicy || gvk.Version != v0alpha0.Version {
		return nil
	}
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	var out map[int][]any
	for i, r := range rules {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		if t, found, _ := unstructured.NestedSlice(m, "authorization", "tools"); found {
			if out == nil {
				out = map[int][]any{}
			}
			out[i] = t
		}
	}
	return out
}

// restoreLegacyTools puts the tools legacyTools kept back into the admitted object.
func restoreLegacyTools(u *unstructured.Unstructured, tools map[int][]any) {
	if len(tools) == 0 {
		return
	}
	rules, found, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	if !found {
		return
	}
	for i, t := range tools {
		if i >= len(rules) {
			continue
		}
		m, ok := rules[i].(map[string]any)
		if !ok {
			continue
		}
		if auth, ok := m["authorization"].(map[string]any); ok {
			auth["tools"] = t
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, rules, "spec", "rules")
}
