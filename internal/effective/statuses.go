package effective

import (
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Statuses is what agpol computes about every policy of a snapshot, for get's ACCEPTED
// and ENFORCED columns and the graph's labels: the admission and enforcement of each
// XAccessPolicy under the reference semantics, and the enforcement of each Kuadrant
// AuthPolicy (kuadrant.io/v1, and v1beta2 as kuadrant-operator v0.6.1 computed it).
// A part whose kind is not in the snapshot is nil.
type Statuses struct {
	Admission   map[*snapshot.XAccessPolicy]Admission
	Enforcement map[*snapshot.XAccessPolicy]PolicyEnforcement
	AuthPolicy  *authpolicy.Result
	V1beta2     *authpolicy.V1beta2Result
	// ListenerSets is whether each ListenerSet is attached to its Gateway (topology's
	// ListenerSetStatuses), for get listenersets' ACCEPTED column.
	ListenerSets map[*snapshot.ListenerSet]topology.ListenerSetStatus
}

// ComputeStatuses computes the Statuses of s.
func ComputeStatuses(s *snapshot.Snapshot) *Statuses {
	st := &Statuses{}
	if len(s.XAccessPolicies) > 0 {
		e := NewEngine(s, Reference(), "")
		st.Admission, st.Enforcement = e.Admission, e.Enforcement(nil)
	}
	if len(s.AuthPolicies) > 0 {
		st.AuthPolicy = authpolicy.Compute(s)
		for _, ap := range s.AuthPolicies {
			if ap.IsV1beta2() {
				st.V1beta2 = authpolicy.ComputeV1beta2(s)
				break
			}
		}
	}
	st.ListenerSets = ComputeListenerSetStatuses(s).ListenerSets
	return st
}

// ComputeListenerSetStatuses computes the ListenerSets part of the Statuses of s only.
func ComputeListenerSetStatuses(s *snapshot.Snapshot) *Statuses {
	st := &Statuses{}
	if len(s.ListenerSets) > 0 {
		st.ListenerSets = map[*snapshot.ListenerSet]topology.ListenerSetStatus{}
		for _, ls := range topology.BuildGraph(s).ListenerSetStatuses() {
			st.ListenerSets[ls.ListenerSet] = ls
		}
	}
	return st
}
