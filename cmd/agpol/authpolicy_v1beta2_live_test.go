package main

// The v1beta2 live test starts a real kube-apiserver and etcd (envtest) serving AuthPolicy
// at kuadrant.io/v1beta2 only, with the CRD of kuadrant-operator v0.6.1 that agpol embeds
// (crds.LegacyCRDs), as a cluster still on kuadrant-operator v0.x does. It writes only to
// the server it starts.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/testsupport/testenv"
)

// startV1beta2Cluster starts an API server with agpol's CRDs, the AuthPolicy one replaced
// by kuadrant-operator v0.6.1's (serving kuadrant.io/v1beta2 only), and the namespaces of
// the v1beta2 fixtures.
func startV1beta2Cluster(t *testing.T) (kubeconfig string, dyn dynamic.Interface) {
	t.Helper()
	assets, err := testenv.AssetsDir()
	testenv.Need(t, err)
	current, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := crds.LegacyCRDs()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*apiextv1.CustomResourceDefinition{}
	for _, d := range current {
		byName[d.Name] = d.DeepCopy()
	}
	replaced := false
	for _, d := range legacy {
		if d.Name != "authpolicies.kuadrant.io" {
			continue
		}
		for _, v := range d.Spec.Versions {
			if v.Served && v.Name != "v1beta2" {
				t.Fatalf("the legacy AuthPolicy CRD serves %s too", v.Name)
			}
		}
		byName[d.Name] = d.DeepCopy()
		replaced = true
	}
	if !replaced {
		t.Fatal("no legacy AuthPolicy CRD (kuadrant-operator v0.6.1) embedded")
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	var install []*apiextv1.CustomResourceDefinition
	for _, n := range names {
		install = append(install, byName[n])
	}
	env, cfg := testenv.Start(t, assets, install, nil)
	dyn, err = dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	nsRes := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	for _, ns := range []string{"app", "infra"} {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := nsRes.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig, dyn
}

// createInOrder creates the objects of a fixture file so that the cluster's creation order
// of the AuthPolicies is the file's (creationTimestamp, then namespace/name, which is how
// agpol breaks ties): an AuthPolicy written as younger than the one before it is created
// in a later second. It returns a function deleting them again.
func createInOrder(t *testing.T, dyn dynamic.Interface, file string) (cleanup func()) {
	t.Helper()
	objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	cluster.DefaultNamespace(objs, "default")
	type item struct {
		u    *unstructured.Unstructured
		res  dynamic.ResourceInterface
		auth bool
		ts   time.Time
	}
	var items []item
	for _, o := range objs {
		u := o.Object().DeepCopy()
		gvk := u.GroupVersionKind()
		k, ok := snapshot.LookupKind(gvk.Group, gvk.Kind)
		if !ok {
			t.Fatalf("%s: kind %s not read by agpol", file, gvk.Kind)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(gvk.GroupVersion().WithResource(k.Resource))
		if k.Namespaced {
			ri = dyn.Resource(gvk.GroupVersion().WithResource(k.Resource)).Namespace(u.GetNamespace())
		}
		items = append(items, item{u: u, res: ri, auth: gvk.Kind == "AuthPolicy", ts: u.GetCreationTimestamp().Time})
	}
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if a.auth != b.auth {
			return !a.auth
		}
		if !a.ts.Equal(b.ts) {
			return a.ts.Before(b.ts)
		}
		return a.u.GetNamespace()+"/"+a.u.GetName() < b.u.GetNamespace()+"/"+b.u.GetName()
	})
	ctx := context.Background()
	var prev *item
	for i := range items {
		it := &items[i]
		if it.auth && prev != nil && it.ts.After(prev.ts) {
			// The API server stamps creation to the second: start a new one.
			now := time.Now()
			time.Sleep(now.Truncate(time.Second).Add(time.Second + 20*time.Millisecond).Sub(now))
		}
		u := it.u.DeepCopy()
		u.SetCreationTimestamp(metav1.Time{})
		if _, err := it.res.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		if it.auth {
			prev = it
		}
	}
	return func() {
		for _, it := range items {
			if err := it.res.Delete(ctx, it.u.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting %s %s: %v", it.u.GetKind(), it.u.GetName(), err)
			}
		}
	}
}

// v1beta2WithoutSources drops every "source" field (file:line from files, the cluster origin
// live) and the AGE column, so that answers from files and from the cluster compare.
func v1beta2WithoutSources(t *testing.T, doc string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("%v:\n%s", err, doc)
	}
	var walk func(any) any
	walk = func(x any) any {
		switch x := x.(type) {
		case map[string]any:
			delete(x, "source")
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		}
		return x
	}
	v = walk(v)
	if m, ok := v.(map[string]any); ok {
		// The test cluster serves no Kuadrant CR kind (an optional kind): the live
		// answer says so (notInstalled), which files never do.
		if ni, ok := m["notInstalled"].([]any); ok && len(ni) == 1 && ni[0] == "kuadrants.kuadrant.io" {
			delete(m, "notInstalled")
		}
		// Findings are listed by position: file:line in files, object names live.
		if fs, ok := m["findings"].([]any); ok {
			sort.Slice(fs, func(i, j int) bool {
				a, _ := json.Marshal(fs[i])
				b, _ := json.Marshal(fs[j])
				return string(a) < string(b)
			})
		}
	}
	return v
}

// TestAuthPolicyV1beta2Live: on a cluster serving AuthPolicy at kuadrant.io/v1beta2 only,
// holding the Kuadrant Auth doc's examples with their Gateways and HTTPRoutes (one
// example at a time), get authpolicies (ENFORCED, as the doc states), describe
// authpolicy (and the routes and Gateways of the doc's requests), explain (those
// requests) and lint's v1beta2 checks answer as they do from the files.
func TestAuthPolicyV1beta2Live(t *testing.T) {
	kubeconfig, dyn := startV1beta2Cluster(t)
	t.Chdir("../..")
	files, err := filepath.Glob("testdata/authpolicy/v1beta2/*/objects.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("fixtures: %v %v", files, err)
	}
	for _, file := range files {
		dir := filepath.Dir(file)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, "expect.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var expect struct {
				Policies map[string]string `json:"policies"`
				Requests []struct {
					Gateway, Route, Host, Path, Method, Policy string
				} `json:"requests"`
			}
			if err := sigsyaml.Unmarshal(raw, &expect); err != nil {
				t.Fatal(err)
			}
			// The same objects in the files and in the cluster: the fixture with the
			// Services its routes send traffic to (live, a missing one answers 500).
			file := withServices(t, file)
			cleanup := createInOrder(t, dyn, file)
			defer cleanup()

			both := func(args ...string) (fromFiles, live string) {
				t.Helper()
				f, fe, fc := runDecide(t, "", append(args, "-f", file)...)
				l, le, lc := runDecide(t, "", append(args, "--kubeconfig", kubeconfig)...)
				if fc != lc {
					t.Errorf("%v: exit %d from the files, %d live\n%s\n%s", args, fc, lc, fe, le)
				}
				if lc == exitUsage {
					t.Fatalf("%v live: exit %d\n%s", args, lc, le)
				}
				return f, l
			}
			same := func(args ...string) string {
				t.Helper()
				f, l := both(args...)
				if a, b := v1beta2WithoutSources(t, f), v1beta2WithoutSources(t, l); !reflect.DeepEqual(a, b) {
					ja, _ := json.MarshalIndent(a, "", " ")
					jb, _ := json.MarshalIndent(b, "", " ")
					t.Errorf("%v: from the files and live differ:\n%s", args, firstDiff(string(ja), string(jb)))
				}
				return l
			}

			// get authpolicies: the ENFORCED column the doc states, live as from the files.
			f, l := both("get", "authpolicies", "-A", "-o", "custom-columns=NS:.metadata.namespace,NAME:.metadata.name,VERSION:.apiVersion")
			if f != l || !strings.Contains(l, "kuadrant.io/v1beta2") {
				t.Errorf("get -o custom-columns: files\n%s\nlive\n%s", f, l)
			}
			f, l = both("get", "authpolicies", "-A")
			if a, b := dropAge(f), dropAge(l); a != b {
				t.Errorf("get authpolicies: files\n%s\nlive\n%s", f, l)
			}
			for ref, want := range expect.Policies {
				ns, name, _ := strings.Cut(ref, "/")
				row := rowOf(l, ns, name)
				if !strings.Contains(row, " "+want+" (v1beta2") {
					t.Errorf("live get: %s is not %s (the doc):\n%s", ref, want, l)
				}
				// describe authpolicy: the same view (-o json), with the same enforcement.
				d := same("describe", "authpolicy", ref, "-o", "json")
				var doc struct {
					V struct {
						Enforcement string `json:"enforcement"`
					} `json:"authPolicyV1beta2"`
				}
				if err := json.Unmarshal([]byte(d), &doc); err != nil || doc.V.Enforcement != want {
					t.Errorf("live describe %s: %q, want %s (%v)", ref, doc.V.Enforcement, want, err)
				}
			}
			for _, rq := range expect.Requests {
				// describe httproute and gateway: the v1beta2 policies bearing on them.
				same("describe", "httproute", rq.Route, "-o", "json")
				same("describe", "gateway", rq.Gateway, "-o", "json")
				out := same("explain", "--from", "anonymous", "--gateway", rq.Gateway, "--route", rq.Route, "--host", rq.Host,
					"--path", rq.Path, "--method", rq.Method, "--mcp-method", "none", "-o", "json")
				var doc struct {
					Results []struct {
						AuthPolicy *struct {
							V1beta2 *struct {
								AuthConfig string `json:"authConfig"`
							} `json:"v1beta2"`
						} `json:"authPolicy"`
					} `json:"results"`
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Results) != 1 {
					t.Fatalf("explain: %v\n%s", err, out)
				}
				got := ""
				if ap := doc.Results[0].AuthPolicy; ap != nil && ap.V1beta2 != nil {
					got = ap.V1beta2.AuthConfig
				}
				if got != rq.Policy {
					t.Errorf("live explain %+v: AuthConfig of %q, the doc says %q", rq, got, rq.Policy)
				}
			}
			// lint: the v1beta2 checks find the same (AGP106 on every policy), and no
			// v1beta2 object is skipped (AGP103).
			out := same("lint", "--only", "AGP106,AGP211,AGP306,AGP307,AGP509", "-o", "json")
			if n := strings.Count(out, `"code": "AGP106"`); n != len(expect.Policies) {
				t.Errorf("live lint: %d AGP106 findings for %d policies:\n%s", n, len(expect.Policies), out)
			}
			if _, l := both("lint", "--only", "AGP103"); strings.Contains(l, "AGP103") {
				t.Errorf("live lint skips v1beta2 objects:\n%s", l)
			}
		})
	}
}

// withServices writes the objects of file and a Service for each backendRef of its
// HTTPRoutes to a file of the test's, and returns its name.
func withServices(t *testing.T, file string) string {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{file}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	text := strings.TrimRight(string(raw), "\n") + "\n"
	for _, rt := range s.HTTPRoutes {
		for _, rule := range rt.Spec.Rules {
			for _, br := range rule.BackendRefs {
				ns := rt.Namespace
				if br.Namespace != nil {
					ns = string(*br.Namespace)
				}
				key := ns + "/" + string(br.Name)
				if seen[key] || (br.Kind != nil && *br.Kind != "Service") || br.Port == nil {
					continue
				}
				seen[key] = true
				text += fmt.Sprintf("---\napiVersion: v1\nkind: Service\nmetadata: {name: %s, namespace: %s}\nspec:\n  ports: [{port: %d}]\n", br.Name, ns, *br.Port)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "objects.yaml")
	if err := os.WriteFile(out, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}

// dropAge removes the AGE column (the last) of a get table.
func dropAge(table string) string {
	var out []string
	for _, line := range strings.Split(strings.TrimRight(table, "\n"), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			f = f[:len(f)-1]
		}
		out = append(out, strings.Join(f, " "))
	}
	return strings.Join(out, "\n")
}

// rowOf is the row of namespace ns and name of a get -A table.
func rowOf(table, ns, name string) string {
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[0] == ns && f[1] == name {
			return line
		}
	}
	return ""
}
