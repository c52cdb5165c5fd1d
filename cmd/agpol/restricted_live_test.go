package main

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// agpolReads are the resources agpol lists from a cluster, by API group.
var agpolReads = []struct {
	group     string
	resources []string
}{
	{"", []string{"services", "serviceaccounts", "namespaces"}},
	{"gateway.networking.k8s.io", []string{"gatewayclasses", "gateways", "httproutes", "referencegrants", "listenersets"}},
	{"agentic.networking.x-k8s.io", []string{"xbackends", "xaccesspolicies"}},
	{"kuadrant.io", []string{"authpolicies"}},
}

// readAllBut is RBAC rules granting get and list on every resource agpol reads but
// those named.
func readAllBut(except ...string) []any {
	var rules []any
	for _, g := range agpolReads {
		var resources []any
		for _, r := range g.resources {
			if !slices.Contains(except, r) {
				resources = append(resources, r)
			}
		}
		if len(resources) > 0 {
			rules = append(rules, map[string]any{"apiGroups": []any{g.group}, "resources": resources, "verbs": []any{"get", "list"}})
		}
	}
	return rules
}

// restrictedUser makes the user name on the cluster of kubeconfig hold rules (a
// ClusterRole and a ClusterRoleBinding "agpol-NAME"; no rules, no RBAC at all) and
// returns a runner of agpol as that user, impersonated as with kubectl --as.
func restrictedUser(t *testing.T, kubeconfig, name string, rules []any) func(args ...string) (stdout, stderr string, code int) {
	t.Helper()
	if len(rules) > 0 {
		dyn := dynamicClient(t, kubeconfig)
		rbac := func(resource string, o map[string]any) {
			t.Helper()
			gvr := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: resource}
			if _, err := dyn.Resource(gvr).Create(context.Background(), &unstructured.Unstructured{Object: o}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		rbac("clusterroles", map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "agpol-" + name},
			"rules": rules,
		})
		rbac("clusterrolebindings", map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "agpol-" + name},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "agpol-" + name},
			"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}},
		})
	}
	return func(args ...string) (string, string, int) {
		t.Helper()
		return runDecide(t, "", append(args, "--kubeconfig", kubeconfig, "--as", name)...)
	}
}
