package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// TestGetLive: against a real API server holding the shipped examples, agpol get
// xaccesspolicies says what the data plane does (a v0alpha0 policy as stored, a status
// that rejects a policy, a missing target) and where ACCEPTED comes from, -l and
// --field-selector select as kubectl does, and can-i / who-can name what they cannot find.
func TestGetLive(t *testing.T) {
	kubeconfig := startLintCluster(t)
	t.Chdir("../..")
	dyn := dynamicClient(t, kubeconfig)
	ctx := context.Background()
	xap := dyn.Resource(schema.GroupVersionResource{Group: "agentic.networking.x-k8s.io", Version: "v1alpha1", Resource: "xaccesspolicies"})
	if _, err := xap.Namespace("pay").Patch(ctx, "ledger-access", types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"pay"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	// A controller's status rejecting a policy, on the status subresource.
	fraud, err := xap.Namespace("pay").Get(ctx, "ledger-fraud-check", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedSlice(fraud.Object, []any{map[string]any{
		"ancestorRef":    map[string]any{"group": "agentic.networking.x-k8s.io", "kind": "XBackend", "name": "ledger"},
		"controllerName": "sigs.k8s.io/kube-agentic-networking-controller",
		"conditions": []any{map[string]any{"type": "Accepted", "status": "False", "reason": "LimitPerTargetExceeded",
			"message": "too many", "lastTransitionTime": "2026-01-01T00:00:00Z"}},
	}}, "status", "ancestors")
	if _, err := xap.Namespace("pay").UpdateStatus(ctx, fraud, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	orphan := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "agentic.networking.x-k8s.io/v1alpha1", "kind": "XAccessPolicy",
		"metadata": map[string]any{"name": "orphan", "namespace": "pay", "labels": map[string]any{"team": "pay"}},
		"spec": map[string]any{"action": "Allow",
			"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gone"}},
			"rules": []any{map[string]any{"name": "r", "source": map[string]any{"type": "ServiceAccount",
				"serviceAccount": map[string]any{"namespace": "agents", "name": "billing"}}}}},
	}}
	if _, err := xap.Namespace("pay").Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := []string{"--kubeconfig", kubeconfig}
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := runDecide(t, "", append(args, kc...)...)
		if code != exitOK {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		return out
	}

	table := run("get", "xap", "-A")
	for _, want := range []string{
		`(?m)^tools +calc-legacy .* True\[computed\] +False\(NoAction\) `,
		`(?m)^pay +ledger-fraud-check .* False\(LimitPerTargetExceeded\)\[recorded\] +False\(LimitPerTargetExceeded\) `,
		`(?m)^pay +orphan .* True\[computed\] +False\(TargetNotFound\) `,
		`(?m)^pay +ledger-access .* True\[computed\] +True `,
	} {
		if !regexp.MustCompile(want).MatchString(table) {
			t.Errorf("no %s in\n%s", want, table)
		}
	}
	if got := run("get", "xap", "-A", "-l", "team=pay", "-o", "name"); got != "xaccesspolicy.agentic.networking.x-k8s.io/ledger-access\nxaccesspolicy.agentic.networking.x-k8s.io/orphan\n" {
		t.Errorf("-l team=pay:\n%s", got)
	}
	if got := run("get", "xap", "-A", "--field-selector", "metadata.namespace=pay,metadata.name!=orphan", "-o", "name"); got != "xaccesspolicy.agentic.networking.x-k8s.io/ledger-access\nxaccesspolicy.agentic.networking.x-k8s.io/ledger-fraud-check\n" {
		t.Errorf("--field-selector:\n%s", got)
	}
	if _, errOut, code := runDecide(t, "", append([]string{"get", "xap", "-A", "--field-selector", "spec.action=Allow"}, kc...)...); code != exitUsage || !strings.Contains(errOut, "field label not supported: spec.action") {
		t.Errorf("bad field selector: exit %d\n%s", code, errOut)
	}
	// Read in one namespace, the routes to pay's backend that other namespaces hold
	// (and their gateways) are not seen: the answer is unknown, not False.
	if got := run("get", "xap", "ledger-access", "-n", "pay"); !regexp.MustCompile(`(?m)^pay +ledger-access .* True\[computed\] +Unknown\(NotRead\) `).MatchString(got) {
		t.Errorf("-n pay:\n%s", got)
	}
	// can-i and who-can read the cluster the same way: a name it does not hold is
	// "not found" (exit 2) with the nearest one; an unknown tool only warns.
	for _, args := range [][]string{
		{"can-i", "--from", "sa:agents/billing", "--tool", "refund", "--backend", "pay/ledgr"},
		{"who-can", "--tool", "refund", "--backend", "pay/ledgr"},
	} {
		_, errOut, code := runDecide(t, "", append(args, kc...)...)
		if code != exitUsage || !strings.Contains(errOut, "backend pay/ledgr not found in the cluster; did you mean pay/ledger?") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
	if _, errOut, code := runDecide(t, "", append([]string{"who-can", "--tool", "refnd", "--backend", "pay/ledger"}, kc...)...); code != exitOK ||
		!strings.Contains(errOut, "warning: --tool refnd appears in no policy and no tools inventory: answered as for any tool no policy names; did you mean refund?") {
		t.Errorf("who-can refnd: exit %d\n%s", code, errOut)
	}
	dot := run("get", "gateway", "edge", "-A", "-o", "dot")
	if !strings.Contains(dot, `XAccessPolicy pay/ledger-fraud-check\nExternalAuth, accepted False(LimitPerTargetExceeded)[recorded]\nenforced False(LimitPerTargetExceeded)`) {
		t.Errorf("dot:\n%s", dot)
	}
}
