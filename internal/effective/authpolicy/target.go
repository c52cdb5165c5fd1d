package authpolicy

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// TargetView is what `agpol effective authpolicy` answers for one target: the paths
// under it with their effective policy, and the v1beta2 policies on it.
type TargetView struct {
	Result  *Result
	Paths   []*PathResult
	V1beta2 []V1beta2TargetPolicy
}

// ForTarget resolves q against g's snapshot and computes its view. target is the --target text
// (for errors); a q without Kind takes the kind of the only Gateway or HTTPRoute of
// that name; gateway (--gateway NS/NAME, or a NAME: the only Gateway of that name in
// s, else the one in the target's namespace) and listener narrow an HTTPRoute's paths.
// Every error is a mistake in the question.
func ForTarget(g *topology.Graph, q Query, target, gateway, listener string) (*TargetView, error) {
	s := g.Snapshot()
	q, err := resolveTargetKind(q, target, s)
	if err != nil {
		return nil, err
	}
	if gateway != "" {
		q.Gateway = resolveGateway(gateway, q.Namespace, s)
	}
	q.Listener = listener
	if q.Kind == "Gateway" && q.Listener != "" && q.Section == "" {
		return nil, fmt.Errorf("--listener narrows httproute targets; for a listener of a gateway use --target gateway/%s/%s#%s", q.Namespace, q.Name, q.Listener)
	}
	v := &TargetView{Result: Compute(g)}
	if v.Paths, err = v.Result.Query(q); err != nil {
		return nil, err
	}
	for _, p := range s.AuthPolicies {
		if p.IsV1beta2() {
			v.V1beta2 = ComputeV1beta2(g).ForTarget(q.Kind, q.Namespace+"/"+q.Name)
			break
		}
	}
	return v, nil
}

// resolveTargetKind gives a --target NAME the kind of the only Gateway or HTTPRoute of
// that name in its namespace.
func resolveTargetKind(q Query, target string, s *snapshot.Snapshot) (Query, error) {
	if q.Kind == "" {
		var kinds []string
		for _, g := range s.Gateways {
			if g.Namespace == q.Namespace && g.Name == q.Name {
				kinds = append(kinds, "Gateway")
				break
			}
		}
		for _, r := range s.HTTPRoutes {
			if r.Namespace == q.Namespace && r.Name == q.Name {
				kinds = append(kinds, "HTTPRoute")
				break
			}
		}
		switch len(kinds) {
		case 0:
			return q, fmt.Errorf("--target %q: no gateway or httproute %s/%s in the input", target, q.Namespace, q.Name)
		case 2:
			return q, fmt.Errorf("--target %q: both a gateway and an httproute are named %s/%s: write gateway/%s/%s or httproute/%s/%s",
				target, q.Namespace, q.Name, q.Namespace, q.Name, q.Namespace, q.Name)
		}
		q.Kind = kinds[0]
	}
	return q, nil
}

// resolveGateway reads --gateway NS/NAME, or NAME: the only Gateway of that name in the
// input, else the one in the target's namespace.
func resolveGateway(v, targetNS string, s *snapshot.Snapshot) string {
	if strings.Contains(v, "/") {
		return v
	}
	var found []string
	for _, g := range s.Gateways {
		if g.Name == v {
			found = append(found, g.Namespace+"/"+g.Name)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return targetNS + "/" + v
}
