package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/snapshot"
)

// TestKuadrantInputOnlyLive: Secrets (as metadata), the RBAC objects and the rest of a
// Kuadrant guide's scenario read from a real API server decide each request with an
// identity as the same manifests given as files do, and as a replayed --snapshot-out,
// which carries no Secret's data.
func TestKuadrantInputOnlyLive(t *testing.T) {
	const manifests = "testdata/kuadrant-inputonly-live.yaml"
	kubeconfig := startLintCluster(t)
	dyn := dynamicClient(t, kubeconfig)
	objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{manifests}})
	if err != nil {
		t.Fatal(err)
	}
	kinds := append(append([]snapshot.KnownKind{}, snapshot.KnownKinds...), snapshot.InputOnlyKinds...)
	for _, o := range objs {
		gvk := o.Object().GroupVersionKind()
		var k *snapshot.KnownKind
		for i := range kinds {
			if kinds[i].Group == gvk.Group && kinds[i].Kind == gvk.Kind {
				k = &kinds[i]
			}
		}
		if k == nil {
			t.Fatalf("unknown kind %s", gvk.Kind)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(gvk.GroupVersion().WithResource(k.Resource))
		if k.Namespaced {
			ri = dyn.Resource(gvk.GroupVersion().WithResource(k.Resource)).Namespace(o.Object().GetNamespace())
		}
		u := o.Object().DeepCopy()
		u.SetCreationTimestamp(metav1.Time{})
		if _, err := ri.Create(context.Background(), u, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
			t.Fatalf("creating %s %s: %v", gvk.Kind, u.GetName(), err)
		}
	}
	dir := t.TempDir()
	robot := filepath.Join(dir, "robot.yaml")
	if err := os.WriteFile(robot, []byte("identity:\n  kubernetes: {username: \"system:serviceaccount:toystore:robot\", audiences: [robots]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "snapshot.yaml")
	if _, errOut, code := runDecide(t, "", "get", "authpolicies", "-A", "--kubeconfig", kubeconfig, "--snapshot-out", snap); code != exitOK {
		t.Fatalf("writing the snapshot: exit %d\n%s", code, errOut)
	}
	written, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(written), "iamanadmin") || !strings.Contains(string(written), "name: api-key-admin-user") {
		t.Fatalf("the snapshot should hold the Secrets' metadata and no key:\n%s", written)
	}

	asks := []struct {
		name    string
		args    []string
		verdict string
		code    int
	}{
		{"admin key on /admins", []string{"--host", "api.toystore.com", "--path", "/admins", "--api-key-secret", "kuadrant-system/api-key-admin-user"}, "allow", 200},
		{"user key on /admins", []string{"--host", "api.toystore.com", "--path", "/admins", "--api-key-secret", "kuadrant-system/api-key-regular-user"}, "deny", 403},
		{"user key on /cars", []string{"--host", "api.toystore.com", "--path", "/cars", "--api-key-secret", "kuadrant-system/api-key-regular-user"}, "allow", 200},
		{"robot on /toys: ClusterRole", []string{"--host", "robots.toystore.com", "--path", "/toys", "--identity-file", robot}, "allow", 200},
		{"robot on /other: no role", []string{"--host", "robots.toystore.com", "--path", "/other", "--identity-file", robot}, "deny", 403},
	}
	for _, ask := range asks {
		for _, src := range [][]string{{"-f", manifests}, {"--kubeconfig", kubeconfig}, {"-f", snap}} {
			args := append([]string{"explain", "-o", "json", "--from", "anonymous", "--mcp-method", "none", "--method", "GET", "--gateway", "gateway-system/kuadrant-ingressgateway"}, ask.args...)
			out, errOut, code := runDecide(t, "", append(args, src...)...)
			if code != exitOK && code != exitFail {
				t.Fatalf("%s %v: exit %d\n%s", ask.name, src, code, errOut)
			}
			var got struct {
				Results []struct {
					AuthPolicy struct {
						Evaluation struct {
							Outcome struct {
								Verdict string `json:"verdict"`
								Code    int    `json:"code"`
								Reason  string `json:"reason"`
							} `json:"outcome"`
						} `json:"evaluation"`
					} `json:"authPolicy"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got.Results) != 1 {
				t.Fatalf("%s %v: %v\n%s", ask.name, src, err, out)
			}
			o := got.Results[0].AuthPolicy.Evaluation.Outcome
			if o.Verdict != ask.verdict || o.Code != ask.code {
				t.Errorf("%s %v: %s %d (%s), want %s %d", ask.name, src, o.Verdict, o.Code, o.Reason, ask.verdict, ask.code)
			}
		}
	}
}
