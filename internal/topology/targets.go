// Package topology owns the attachment graph: which policies target which
// object, which routes hang under which Gateway listener, and which backends a
// route rule reaches. It resolves references; it does not know what a policy means.
package topology

import (
	"sort"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/snapshot"
)

// Ref names an object by group, kind, namespace and name: snapshot.Ref, the one object
// reference of every package.
type Ref = snapshot.Ref

// NormalizeGroup folds the legacy agentic group into the current one.
func NormalizeGroup(g string) string {
	if agentic.IsGroup(g) {
		return agentic.GroupName
	}
	return g
}

// Targets indexes policies by the object they target (sectionName ignored: the
// reference implementation ignores it for XAccessPolicy).
type Targets struct {
	AccessPolicies map[Ref][]*snapshot.XAccessPolicy
	AuthPolicies   map[Ref][]*snapshot.AuthPolicy
}

// IndexTargets builds the target index. Policy lists are sorted oldest first
// (creationTimestamp, then name), the seniority order controllers use.
func IndexTargets(s *snapshot.Snapshot) *Targets {
	t := &Targets{AccessPolicies: map[Ref][]*snapshot.XAccessPolicy{}, AuthPolicies: map[Ref][]*snapshot.AuthPolicy{}}
	for _, p := range s.XAccessPolicies {
		seen := map[Ref]bool{}
		for _, tr := range p.Spec.TargetRefs {
			r := Ref{Group: NormalizeGroup(string(tr.Group)), Kind: string(tr.Kind), Namespace: p.Namespace, Name: string(tr.Name)}
			if !seen[r] {
				seen[r] = true
				t.AccessPolicies[r] = append(t.AccessPolicies[r], p)
			}
		}
	}
	for _, p := range s.AuthPolicies {
		tr := p.Spec.TargetRef
		r := Ref{Group: string(tr.Group), Kind: string(tr.Kind), Namespace: p.Namespace, Name: string(tr.Name)}
		t.AuthPolicies[r] = append(t.AuthPolicies[r], p)
	}
	for _, l := range t.AccessPolicies {
		sort.SliceStable(l, func(i, j int) bool { return olderAccess(l[i], l[j]) })
	}
	for _, l := range t.AuthPolicies {
		sort.SliceStable(l, func(i, j int) bool {
			a, b := l[i].CreationTimestamp, l[j].CreationTimestamp
			if !a.Equal(&b) {
				return a.Before(&b)
			}
			return l[i].Namespace+"/"+l[i].Name < l[j].Namespace+"/"+l[j].Name
		})
	}
	return t
}

func olderAccess(a, b *snapshot.XAccessPolicy) bool {
	at, bt := a.CreationTimestamp, b.CreationTimestamp
	if !at.Equal(&bt) {
		return at.Before(&bt)
	}
	return a.Name < b.Name
}
