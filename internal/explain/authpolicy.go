package explain

import (
	"sync"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// AuthPolicyInfo is what Kuadrant's effective AuthPolicy on the request's path asks of the
// request. It is reported beside the decision and is not part of it: the decision is the
// access policies' (XAccessPolicy); Kuadrant's authentication and authorization run as
// well, and whether the request's credentials satisfy them cannot be known offline.
type AuthPolicyInfo struct {
	// Path is the Kuadrant path (gateway|listener|route|rule).
	Path string `json:"path"`
	// Policies are the AuthPolicies folded into the effective policy, least specific first.
	Policies []string `json:"policies"`
	// Evaluation is the request-time view: conditions and what must be presented.
	Evaluation *authpolicy.Evaluation `json:"evaluation"`
}

// kuadrant computes the effective AuthPolicies once, on first use, and folds the
// policies of each path once: many requests take the same path.
type kuadrant struct {
	once   sync.Once
	result *authpolicy.Result
	paths  sync.Map // kuadrantPath → *authpolicy.PathResult (nil when the path has no effective policy)
}

type kuadrantPath struct{ gateway, listener, route, rule string }

// forPrefix is result.ForPrefix, kept per path; nil when no AuthPolicy applies there.
func (k *kuadrant) forPrefix(gateway, listener, route, rule string) *authpolicy.PathResult {
	key := kuadrantPath{gateway, listener, route, rule}
	if v, ok := k.paths.Load(key); ok {
		return v.(*authpolicy.PathResult)
	}
	pr, err := k.result.ForPrefix(gateway, listener, route, rule)
	if err != nil || pr == nil || pr.Effective == nil || len(pr.Effective.Policies) == 0 {
		pr = nil
	}
	v, _ := k.paths.LoadOrStore(key, pr)
	return v.(*authpolicy.PathResult)
}

// authPolicyFor returns the AuthPolicy view of a request on a routed path, or nil when no
// AuthPolicy applies there.
func (sim *Simulator) authPolicyFor(r *Request, p PathInfo) *AuthPolicyInfo {
	if len(sim.Snapshot.AuthPolicies) == 0 || p.Route == "" || p.RuleIndex == nil {
		return nil
	}
	sim.kuadrant.once.Do(func() { sim.kuadrant.result = authpolicy.Compute(sim.Snapshot) })
	rule := authpolicy.RuleName(*p.RuleIndex, p.RuleName)
	pr := sim.kuadrant.forPrefix(p.Gateway, p.Listener, p.Route, rule)
	if pr == nil {
		return nil
	}
	info := &AuthPolicyInfo{Path: pr.Path.String()}
	for _, pol := range pr.Effective.Policies {
		info.Policies = append(info.Policies, pol.Ref)
	}
	req := authpolicy.Request{Method: r.HTTP.Method, Host: r.HTTP.Host, Path: r.HTTP.Path, Headers: r.HTTP.Headers}
	info.Evaluation = authpolicy.Requirements(pr.Effective, req)
	return info
}
