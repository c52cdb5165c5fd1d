package main

import (
	"context"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestSubjectAccessReviews: Kubernetes' handler and RBAC authorizer answer the
// reviews Authorino sends, over the scenario's objects only.
func TestSubjectAccessReviews(t *testing.T) {
	objs := []runtime.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "reader"},
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"toys"}, Verbs: []string{"get"}, ResourceNames: []string{"blue"}}}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "paths"},
			Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/a*"}, Verbs: []string{"get"}}}},
		// A ServiceAccount subject without a namespace is the binding's namespace's.
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "b"}, RoleRef: rbacv1.RoleRef{Kind: "Role", Name: "reader"},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "alice"}}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "paths-ns"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "paths"},
			Subjects: []rbacv1.Subject{{Kind: "User", Name: "bob"}}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "paths"}, RoleRef: rbacv1.RoleRef{Kind: "ClusterRole", Name: "paths"},
			Subjects: []rbacv1.Subject{{Kind: "Group", Name: "admin"}}},
	}
	s, err := newSubjectAccessReviews(objs)
	if err != nil {
		t.Fatal(err)
	}
	res := func(ns, name string) *authzv1.ResourceAttributes {
		return &authzv1.ResourceAttributes{Namespace: ns, Resource: "toys", Name: name, Verb: "get"}
	}
	for _, tc := range []struct {
		name    string
		spec    authzv1.SubjectAccessReviewSpec
		allowed bool
		invalid bool
	}{
		{"sa without namespace in a RoleBinding", authzv1.SubjectAccessReviewSpec{User: "system:serviceaccount:ns1:alice", ResourceAttributes: res("ns1", "blue")}, true, false},
		{"another resource name", authzv1.SubjectAccessReviewSpec{User: "system:serviceaccount:ns1:alice", ResourceAttributes: res("ns1", "red")}, false, false},
		{"another namespace", authzv1.SubjectAccessReviewSpec{User: "system:serviceaccount:ns1:alice", ResourceAttributes: res("ns2", "blue")}, false, false},
		{"non-resource through a ClusterRoleBinding", authzv1.SubjectAccessReviewSpec{User: "carol", Groups: []string{"admin"}, NonResourceAttributes: &authzv1.NonResourceAttributes{Path: "/a/x", Verb: "get"}}, true, false},
		{"non-resource through a RoleBinding", authzv1.SubjectAccessReviewSpec{User: "bob", NonResourceAttributes: &authzv1.NonResourceAttributes{Path: "/a", Verb: "get"}}, false, false},
		{"system:masters", authzv1.SubjectAccessReviewSpec{User: "x", Groups: []string{"system:masters"}, ResourceAttributes: res("ns2", "")}, true, false},
		{"no user and no groups", authzv1.SubjectAccessReviewSpec{ResourceAttributes: res("ns1", "blue")}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sar := &authzv1.SubjectAccessReview{Spec: tc.spec}
			err := s.create(context.Background(), sar)
			if (err != nil) != tc.invalid {
				t.Fatalf("error %v, want invalid %v", err, tc.invalid)
			}
			if sar.Status.Allowed != tc.allowed {
				t.Errorf("allowed %v, want %v (%s)", sar.Status.Allowed, tc.allowed, sar.Status.Reason)
			}
		})
	}
}
