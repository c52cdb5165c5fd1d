// Package model holds what agpol derives from one snapshot: the routing graph (with
// each Gateway's data plane), the Kuadrant AuthPolicy results (kuadrant.io/v1 and
// v1beta2) and the statuses get and graph print. Each part is built once, on first use,
// and every later stage (explain, whatif, describe, lint, get, graph) reads it here
// instead of building its own. A Model is safe for concurrent use.
package model

import (
	"sync"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Model is one snapshot and what is derived from it.
type Model struct {
	// Snapshot is the input every part is derived from; it is not changed.
	Snapshot *snapshot.Snapshot

	graph    once[*topology.Graph]
	kuadrant once[*authpolicy.Result]
	v1beta2  once[*authpolicy.V1beta2Result]
	statuses once[*effective.Statuses]
}

// New returns the model of s; nothing is computed until a part is asked for.
func New(s *snapshot.Snapshot) *Model {
	if s == nil {
		s = &snapshot.Snapshot{}
	}
	return &Model{Snapshot: s}
}

// Graph is the routing graph of the snapshot (topology.BuildGraph), with the data plane
// of each Gateway.
func (m *Model) Graph() *topology.Graph {
	return m.graph.get(func() *topology.Graph { return topology.BuildGraph(m.Snapshot) })
}

// AuthPolicy is the effective kuadrant.io/v1 AuthPolicy of every path and the status of
// every policy (authpolicy.Compute).
func (m *Model) AuthPolicy() *authpolicy.Result {
	return m.kuadrant.get(func() *authpolicy.Result { return authpolicy.Compute(m.Graph()) })
}

// V1beta2 is the kuadrant.io/v1beta2 AuthPolicies as kuadrant-operator v0.6.1 computed
// them (authpolicy.ComputeV1beta2).
func (m *Model) V1beta2() *authpolicy.V1beta2Result {
	return m.v1beta2.get(func() *authpolicy.V1beta2Result { return authpolicy.ComputeV1beta2(m.Graph()) })
}

// Statuses is what get and graph print of every policy: the admission and enforcement
// of each XAccessPolicy under the reference semantics, each AuthPolicy's enforcement and
// whether each ListenerSet is attached. A part whose kind is not in the snapshot is nil.
func (m *Model) Statuses() *effective.Statuses {
	return m.statuses.get(func() *effective.Statuses {
		s := m.Snapshot
		st := m.ListenerSetStatuses()
		if len(s.XAccessPolicies) > 0 {
			e := effective.NewEngineOn(m.Graph(), s, effective.Reference(), "")
			st.Admission, st.Enforcement = e.Admission, e.Enforcement(m.Graph())
		}
		if len(s.AuthPolicies) > 0 {
			st.AuthPolicy = m.AuthPolicy()
			for _, ap := range s.AuthPolicies {
				if ap.IsV1beta2() {
					st.V1beta2 = m.V1beta2()
					break
				}
			}
		}
		return st
	})
}

// ListenerSetStatuses is the ListenerSets part of Statuses only (a new value each call),
// for commands that print nothing else of it.
func (m *Model) ListenerSetStatuses() *effective.Statuses {
	st := &effective.Statuses{}
	if len(m.Snapshot.ListenerSets) > 0 {
		st.ListenerSets = map[*snapshot.ListenerSet]topology.ListenerSetStatus{}
		for _, ls := range m.Graph().ListenerSetStatuses() {
			st.ListenerSets[ls.ListenerSet] = ls
		}
	}
	return st
}

// once is a value computed on first use.
type once[T any] struct {
	once sync.Once
	v    T
}

func (o *once[T]) get(f func() T) T {
	o.once.Do(func() { o.v = f() })
	return o.v
}
