package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
