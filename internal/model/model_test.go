package model

import (
	"sync"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// TestBuiltOnce checks that every part is built once and shared, however many stages
// (here goroutines) ask for it at the same time.
func TestBuiltOnce(t *testing.T) {
	gw := &snapshot.Gateway{}
	gw.Namespace, gw.Name, gw.Spec.GatewayClassName = "infra", "edge", "unknown-class"
	m := New(&snapshot.Snapshot{Gateways: []*snapshot.Gateway{gw}, AuthPolicies: []*snapshot.AuthPolicy{}})
	var wg sync.WaitGroup
	graphs := make([]*topology.Graph, 8)
	for i := range graphs {
		wg.Add(1)
		go func() { defer wg.Done(); graphs[i] = m.Graph() }()
	}
	wg.Wait()
	for _, g := range graphs[1:] {
		if g != graphs[0] {
			t.Fatal("Graph built more than once")
		}
	}
	ap, v1b2, st := m.AuthPolicy(), m.V1beta2(), m.Statuses()
	if m.AuthPolicy() != ap || m.V1beta2() != v1b2 || m.Statuses() != st {
		t.Fatal("a part built more than once")
	}
	if graphs[0].Snapshot() != m.Snapshot {
		t.Fatal("the graph is not of the model's snapshot")
	}
	// The AuthPolicy topology reads the data planes the graph classified.
	if got, want := m.AuthPolicy().Topology.Gateway("infra/edge").DataPlane, graphs[0].DataPlane(gw); got != want {
		t.Fatalf("AuthPolicy topology's data plane %+v, graph's %+v", got, want)
	}
}

func TestNilSnapshot(t *testing.T) {
	m := New(nil)
	if m.Snapshot == nil || m.Graph() == nil || m.Statuses() == nil {
		t.Fatal("a model of no snapshot must still answer")
	}
}
