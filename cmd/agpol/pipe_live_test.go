package main

// The pipe test feeds `agpol get … -o yaml` to a real kube-apiserver (envtest, with
// agpol's CRDs installed) as `kubectl apply --dry-run=server -f -` would: every item of
// the List is created with dryRun=All and strict field validation, through the
// server's discovery (the REST mapping kubectl uses). Without the binaries the test
// skips, except with CI=true, where it fails. When kubectl is on PATH, it also runs the
// pipe itself, with --dry-run=server and --dry-run=client.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/testsupport/testenv"
)

func TestGetYAMLAppliesLive(t *testing.T) {
	assets, err := testenv.AssetsDir()
	testenv.Need(t, err)
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	env, cfg := testenv.Start(t, assets, defs, nil)
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	namespaces := map[string]bool{}
	nsRes := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})

	const examples = "../../testdata/examples"
	for _, types := range []string{"xap", "gateways,httproutes,xbackends,xaccesspolicies,authpolicies"} {
		t.Run(types, func(t *testing.T) {
			out, errOut, code := runDecide(t, "", "get", types, "-A", "-f", examples, "-o", "yaml")
			if code != exitOK {
				t.Fatalf("agpol get -o yaml: exit %d: %s", code, errOut)
			}
			names, _, _ := runDecide(t, "", "get", types, "-A", "-f", examples, "-o", "name")
			data, err := yaml.YAMLToJSON([]byte(out))
			if err != nil {
				t.Fatal(err)
			}
			var list unstructured.UnstructuredList
			if err := list.UnmarshalJSON(data); err != nil {
				t.Fatalf("not a List: %v\n%s", err, out)
			}
			if list.GetAPIVersion() != "v1" || list.GetKind() != "List" {
				t.Errorf("apiVersion %q, kind %q; want a kubectl v1 List", list.GetAPIVersion(), list.GetKind())
			}
			if want := len(strings.Fields(names)); len(list.Items) != want || want == 0 {
				t.Fatalf("%d items in the List, %d objects in get -o name:\n%s", len(list.Items), want, names)
			}
			for i := range list.Items {
				u := &list.Items[i]
				gvk := u.GroupVersionKind()
				m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if err != nil {
					t.Errorf("%s %s: the server does not serve it: %v", gvk, u.GetName(), err)
					continue
				}
				var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
				if ns := u.GetNamespace(); ns != "" {
					if !namespaces[ns] {
						namespaces[ns] = true
						obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
						if _, err := nsRes.Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
							t.Fatalf("namespace %s: %v", ns, err)
						}
					}
					ri = dyn.Resource(m.Resource).Namespace(ns)
				}
				got, err := ri.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
				if err != nil {
					t.Errorf("%s %s/%s: rejected by the API server: %v", gvk.Kind, u.GetNamespace(), u.GetName(), err)
					continue
				}
				if got.GetName() != u.GetName() || got.GetNamespace() != u.GetNamespace() {
					t.Errorf("%s %s/%s: the server answered with %s/%s", gvk.Kind, u.GetNamespace(), u.GetName(), got.GetNamespace(), got.GetName())
				}
				if _, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
					t.Errorf("%s %s/%s: a dry run stored it (get: %v)", gvk.Kind, u.GetNamespace(), u.GetName(), err)
				}
			}

			// The control: the same first item with a field its schema lacks is refused,
			// so the server does check what it is given.
			bad := list.Items[0].DeepCopy()
			if err := unstructured.SetNestedField(bad.Object, "x", "spec", "notAField"); err != nil {
				t.Fatal(err)
			}
			m, err := mapper.RESTMapping(bad.GroupVersionKind().GroupKind(), bad.GroupVersionKind().Version)
			if err != nil {
				t.Fatal(err)
			}
			_, err = dyn.Resource(m.Resource).Namespace(bad.GetNamespace()).Create(ctx, bad,
				metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
			if err == nil || !strings.Contains(err.Error(), "notAField") {
				t.Errorf("an object with an unknown field: err = %v, want the server to refuse it", err)
			}

			kubectl, err := exec.LookPath("kubectl")
			if err != nil {
				return // the client-go path above is the check; kubectl is optional
			}
			for _, dryRun := range []string{"server", "client"} {
				cmd := exec.Command(kubectl, "--kubeconfig", kubeconfig, "apply", "--dry-run="+dryRun, "-f", "-")
				cmd.Stdin = strings.NewReader(out)
				res, err := cmd.CombinedOutput()
				if err != nil {
					t.Errorf("kubectl apply --dry-run=%s: %v\n%s", dryRun, err, res)
					continue
				}
				done := map[string]string{"server": "created (server dry run)", "client": "created (dry run)"}[dryRun]
				if n := strings.Count(string(res), done); n != len(list.Items) {
					t.Errorf("kubectl apply --dry-run=%s created %d of %d objects:\n%s", dryRun, n, len(list.Items), res)
				}
			}
		})
	}
}
