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
// A part whose kind is not in the snapshot is nil. model.Model.Statuses computes it once.
type Statuses struct {
	Admission   map[*snapshot.XAccessPolicy]Admission
	Enforcement map[*snapshot.XAccessPolicy]PolicyEnforcement
	AuthPolicy  *authpolicy.Result
	V1beta2     *authpolicy.V1beta2Result
	// ListenerSets is whether each ListenerSet is attached to its Gateway (topology's
	// ListenerSetStatuses), for get listenersets' ACCEPTED column.
	ListenerSets map[*snapshot.ListenerSet]topology.ListenerSetStatus
}
