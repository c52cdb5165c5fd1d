package differential

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/cluster"
)

// testdataScenarios lists the scenarios of the repository's testdata: the examples,
// every simulate case, every lint fixture and every regression case of this harness.
func testdataScenarios(t *testing.T) map[string][]string {
	t.Helper()
	root := filepath.Join("..", "..", "..", "testdata")
	out := map[string][]string{"examples": {filepath.Join(root, "examples")}}
	dirs, _ := filepath.Glob(filepath.Join(root, "simulate", "*"))
	dirs2, _ := filepath.Glob(filepath.Join(root, "differential", "*"))
	for _, d := range append(dirs, dirs2...) {
		if filepath.Base(d) == "cel-runtime-budget" {
			// Its CEL rules run past agpol's runtime budget on purpose: agpol answers
			// indeterminate (the outcome is unknown to it), which no data plane verdict
			// contradicts, and the reference evaluator, without a budget, spends
			// seconds on each request.
			continue
		}
		m := filepath.Join(d, "manifests.yaml")
		if _, err := os.Stat(m); err == nil {
			out[d] = []string{m}
		}
	}
	files, _ := filepath.Glob(filepath.Join(root, "lint", "checks", "*.yaml"))
	files = append(files, filepath.Join(root, "lint", "base.yaml"))
	for _, f := range files {
		out[f] = []string{f}
	}
	return out
}

// loadScenario reads files as agpol reads -f (namespace "default" for objects
// without one).
func loadScenario(t *testing.T, name string, files []string) *Scenario {
	t.Helper()
	objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: files, Recursive: true})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	cluster.DefaultNamespace(objs, "default")
	sc := &Scenario{Name: name}
	for _, o := range objs {
		sc.Objects = append(sc.Objects, o.Object().DeepCopy())
	}
	return sc
}

func TestTestdata(t *testing.T) {
	up, err := NewUpstream()
	if err != nil {
		t.Fatal(err)
	}
	all := testdataScenarios(t)
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	total := &Report{}
	for i, name := range names {
		sc := loadScenario(t, name, all[name])
		sc.Objects = append(sc.Objects, missingServices(sc.Objects)...)
		g := NewGenerator(uint64(i))
		recorded := recordedRequest(t, all[name][0])
		sc.Sample = func(o *UpstreamObjects) []Request { return append(recorded, g.Requests(o, 200)...) }
		for _, stored := range []bool{false, true} {
			sc.StoredToAgpol, sc.Requests = stored, nil
			rep, err := Run(up, sc)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			total.Add(rep)
		}
	}
	logReport(t, total)
	for _, d := range total.Disagreements {
		t.Error(d)
	}
}

// missingServices are the Services the scenario's XBackends and routes name but do
// not define: agpol assumes they exist (and says so); the translator answers 500
// without them.
func missingServices(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	have := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "Service" && o.GetAPIVersion() == "v1" {
			have[o.GetNamespace()+"/"+o.GetName()] = true
		}
	}
	want := map[string]bool{}
	for _, o := range objs {
		switch o.GetKind() {
		case "XBackend":
			if n, ok, _ := unstructured.NestedString(o.Object, "spec", "mcp", "serviceName"); ok {
				want[o.GetNamespace()+"/"+n] = true
			}
		case "HTTPRoute":
			rules, _, _ := unstructured.NestedSlice(o.Object, "spec", "rules")
			for _, r := range rules {
				rm, _ := r.(map[string]any)
				brefs, _, _ := unstructured.NestedSlice(rm, "backendRefs")
				for _, b := range brefs {
					bm, _ := b.(map[string]any)
					kind, _ := bm["kind"].(string)
					group, _ := bm["group"].(string)
					if (kind == "" || kind == "Service") && group == "" {
						ns, _ := bm["namespace"].(string)
						if ns == "" {
							ns = o.GetNamespace()
						}
						name, _ := bm["name"].(string)
						want[ns+"/"+name] = true
					}
				}
			}
		}
	}
	var out []*unstructured.Unstructured
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if have[k] {
			continue
		}
		ns, name := filepath.Split(k)
		out = append(out, &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": name, "namespace": filepath.Clean(ns)},
			"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(8080)}}}}})
	}
	return out
}

// recordedRequest is the request a shrunk regression case keeps (request.json next
// to its manifests), if any.
func recordedRequest(t *testing.T, manifests string) []Request {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(manifests), "request.json"))
	if err != nil {
		return nil
	}
	var r Request
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", manifests, err)
	}
	return []Request{r}
}
