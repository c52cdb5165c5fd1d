package cluster

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/snapshot"
)

// admit does to an object read from a file what the API server does before it stores
// it (crds.Validator.Admit: pruning of unknown fields and CRD defaults, at the object's
// version and at the storage version), so that every answer computes on the object a
// cluster would hold. It returns the fields dropped, nil when none was. Objects
// without an embedded CRD for their version (core kinds, the legacy agentic group, a
// version no CRD serves) are left as they are: their problems are reported elsewhere
// (AGP103, decoding errors).
func admit(u *unstructured.Unstructured) []snapshot.DroppedField {
	gvk := u.GroupVersionKind()
	if gvk.Group == "" || gvk.Group == agentic.LegacyGroupName {
		return nil
	}
	v, err := crds.Lookup(gvk)
	if err != nil {
		return nil
	}
	a, err := v.Admit(u)
	if err != nil {
		return nil // metadata the API server cannot read: typing reports it
	}
	if len(a.Dropped) == 0 && len(a.DroppedStored) == 0 {
		return nil
	}
	out := make([]snapshot.DroppedField, 0, len(a.Dropped)+len(a.DroppedStored))
	for _, p := range a.Dropped {
		out = append(out, snapshot.DroppedField{Kind: gvk.Kind, Path: p})
	}
	for _, p := range a.DroppedStored {
		out = append(out, snapshot.DroppedField{Kind: gvk.Kind, Path: p, StoredAt: a.StoredAt})
	}
	return out
}
