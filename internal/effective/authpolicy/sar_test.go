package authpolicy

import (
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// TestRBACAsKubernetes: the cases where Kubernetes' RBAC authorizer differs from a
// naive reading (k8s.io/kubernetes v1.37.2; the Kuadrant harness's oracle runs it).
func TestRBACAsKubernetes(t *testing.T) {
	toys := func(names ...string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"toys"}, Verbs: []string{"get"}, ResourceNames: names}
	}
	get := func(name string) accessReview {
		return accessReview{user: "alice", resourceRequest: true, namespace: "ns1", resource: "toys", name: name, verb: "get"}
	}
	for _, tc := range []struct {
		name string
		rule rbacv1.PolicyRule
		r    accessReview
		want bool
	}{
		{"resource name as written", toys("blue"), get("blue"), true},
		{"a resource name * is no wildcard", toys("*"), get("red"), false},
		{"*/subresource", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"*/status"}, Verbs: []string{"get"}},
			accessReview{resourceRequest: true, resource: "toys", subresource: "status", verb: "get"}, true},
		{"resource attributes without a resource are no non-resource request", rbacv1.PolicyRule{NonResourceURLs: []string{"*"}, Verbs: []string{"get"}},
			accessReview{resourceRequest: true, verb: "get"}, false},
		{"non-resource URL with two trailing stars", rbacv1.PolicyRule{NonResourceURLs: []string{"/a**"}, Verbs: []string{"get"}},
			accessReview{path: "/a/x", verb: "get"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ruleAllows(tc.rule, tc.r); got != tc.want {
				t.Errorf("ruleAllows = %v, want %v", got, tc.want)
			}
		})
	}

	env := &Env{roles: map[string][]rbacv1.PolicyRule{"ns1/reader": {toys()}}, bindings: []binding{
		{namespace: "ns1", roleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"}, subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "alice"}}},
	}}
	for _, tc := range []struct {
		name string
		r    accessReview
		want bool
	}{
		{"a ServiceAccount subject without namespace is the binding's", accessReview{user: "system:serviceaccount:ns1:alice", resourceRequest: true, namespace: "ns1", resource: "toys", verb: "get"}, true},
		{"not another namespace's", accessReview{user: "system:serviceaccount:ns2:alice", resourceRequest: true, namespace: "ns1", resource: "toys", verb: "get"}, false},
		{"system:masters may do anything", accessReview{user: "bob", groups: []string{"system:masters"}, resourceRequest: true, namespace: "ns2", resource: "secrets", verb: "delete"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			role, group, got := env.allows(tc.r)
			if got != tc.want {
				t.Errorf("allows = %v, want %v", got, tc.want)
			}
			if masters := slices.Contains(tc.r.groups, privilegedGroup); got && (masters != (group == privilegedGroup) || masters == (role != "")) {
				t.Errorf("allowed by role %q, group %q", role, group)
			}
		})
	}

	for _, tc := range []struct {
		name string
		val  any
		want []string
		ok   bool
	}{
		{"a list", []any{"admin", "dev"}, []string{"admin", "dev"}, true},
		{"missing (null)", nil, nil, false},
		{"a string", "admin", nil, false},
		{"a JSON list in a string", `["admin"]`, []string{"admin"}, true},
		{"numbers", []any{1.0}, nil, false},
	} {
		t.Run("groups "+tc.name, func(t *testing.T) {
			got, ok := reviewGroups(tc.val)
			if ok != tc.ok || len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("reviewGroups(%v) = %v, %v; want %v, %v", tc.val, got, ok, tc.want, tc.ok)
			}
		})
	}
}
