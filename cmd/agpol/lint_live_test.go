package main

// The live lint test runs agpol lint against a real kube-apiserver and etcd (envtest)
// holding the example scenario: live (no -f) and overlay (-f --live). The binaries
// come from hack/testenv (KUBEBUILDER_ASSETS, or <repo>/bin); without them the test
// skips, except with CI=true, where it fails.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/testsupport/testenv"
)

func startLintCluster(t *testing.T) (kubeconfig string) {
	t.Helper()
	assets, err := testenv.AssetsDir()
	testenv.Need(t, err)
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var install []*apiextv1.CustomResourceDefinition
	for _, d := range defs {
		d = d.DeepCopy()
		if d.Spec.Names.Kind == "XBackend" {
			// As if the cluster ran an older XBackend CRD, without the rule that one of
			// serviceName and hostname be set: it stores the XBackend stored-both below,
			// which the CRD agpol embeds rejects.
			for i := range d.Spec.Versions {
				if s := d.Spec.Versions[i].Schema; s != nil {
					mcp := s.OpenAPIV3Schema.Properties["spec"].Properties["mcp"]
					mcp.XValidations = nil
					s.OpenAPIV3Schema.Properties["spec"].Properties["mcp"] = mcp
				}
			}
		}
		install = append(install, d)
	}
	// The Kuadrant CR's CRD, as a cluster with Kuadrant installed serves it (agpol reads
	// the CR for the namespace of AuthConfigs); no Kuadrant object is created.
	data, err := os.ReadFile("testdata/kuadrant.io_kuadrants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kuadrantCRD := &apiextv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(data, kuadrantCRD); err != nil {
		t.Fatal(err)
	}
	install = append(install, kuadrantCRD)
	env, cfg := testenv.Start(t, assets, install, nil)

	// Create the example scenario as kubectl apply would (v0alpha0 policy included).
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{"../../testdata/examples"}})
	if err != nil {
		t.Fatal(err)
	}
	cluster.DefaultNamespace(objs, "default")
	storedBoth := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "agentic.networking.x-k8s.io/v0alpha0", "kind": "XBackend",
		"metadata": map[string]any{"name": "stored-both", "namespace": "tools"},
		"spec":     map[string]any{"mcp": map[string]any{"serviceName": "calc", "hostname": "calc.example.com", "port": int64(8080)}},
	}}
	objs = append(objs, cluster.NewRawObject(storedBoth, snapshot.Source{}))
	for _, o := range objs {
		gvk := o.Object().GroupVersionKind()
		k, ok := snapshot.LookupKind(gvk.Group, gvk.Kind)
		if !ok {
			continue // agpol's own request files
		}
		res := dyn.Resource(gvk.GroupVersion().WithResource(k.Resource))
		var ri dynamic.ResourceInterface = res
		if k.Namespaced {
			ri = res.Namespace(o.Object().GetNamespace())
		}
		u := o.Object().DeepCopy()
		u.SetCreationTimestamp(metav1.Time{})
		if _, err := ri.Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", gvk.Kind, u.GetName(), err)
		}
	}
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return kubeconfig
}

func TestLintLive(t *testing.T) {
	kubeconfig := startLintCluster(t)

	t.Run("live", func(t *testing.T) {
		code, out, stderr := runAgpol(t, "lint", "--kubeconfig", kubeconfig, "--only", "AGP402,AGP501,schema")
		if code != exitFail {
			t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
		}
		for _, want := range []string{
			`error AGP402 [allow-all] rule "analytics-read" is restricted only by methods`,
			"error AGP501 [loss] policy was written at v0alpha0",
			// Stored at v1alpha1 without conversion, the v0alpha0 policy lost its tools
			// (pruned by the storage schema): read back, it fails its own schema. It was
			// accepted when created, so that is a field dropped (AGP102), as lint says of
			// the file, not an object the API server rejects (AGP101).
			"warning AGP102 [schema] written at v0alpha0 and stored at v1alpha1 (the CRD has no conversion webhook), the object lost the fields the v1alpha1 schema does not have: read back, spec.rules[0].authorization: Invalid value: tools must be specified when type is set to 'InlineTools'",
			"2 errors, 1 warning, 0 info",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n")[:3] {
			if !strings.HasPrefix(l, "cluster:") {
				t.Errorf("a live finding is not located in the cluster: %s", l)
			}
		}
	})

	t.Run("overlay", func(t *testing.T) {
		// The fix replaces the live calc-arithmetic without its L7-only rule.
		fix := filepath.Join(t.TempDir(), "fix.yaml")
		if err := os.WriteFile(fix, []byte(`apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata:
  name: calc-arithmetic
  namespace: tools
spec:
  targetRefs:
  - {group: agentic.networking.x-k8s.io, kind: XBackend, name: calc}
  action: Allow
  rules:
  - name: handshake
    authorization: {type: Inline, mcp: {mcpBaseProtocolMethodsOption: MATCH_BASE_PROTOCOL_METHODS}}
  - name: analytics-read
    source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: analytics}}
    authorization: {type: Inline, mcp: {methods: [{name: tools/list}]}}
`), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := runAgpol(t, "lint", "--kubeconfig", kubeconfig, "-f", fix, "--live", "--only", "AGP402,AGP501,schema")
		if code != exitFail || strings.Contains(out, "AGP402") || !strings.Contains(out, "AGP501") || !strings.HasSuffix(out, "1 error, 1 warning, 0 info\n") {
			t.Errorf("exit %d\n%s\n%s", code, out, stderr)
		}
	})

	t.Run("revalidate-live", func(t *testing.T) {
		// The API server validated stored-both against its own (older) CRD when it stored
		// it: by default lint leaves it alone and says so on stderr.
		code, out, stderr := runAgpol(t, "lint", "--kubeconfig", kubeconfig, "--only", "schema")
		if code != exitOK || strings.Contains(out, "stored-both") || !strings.HasSuffix(out, "0 errors, 1 warning, 0 info\n") {
			t.Errorf("default: exit %d\n%s\n%s", code, out, stderr)
		}
		note := regexp.MustCompile(`(?m)^note: [1-9][0-9]* objects read from the cluster not validated again against agpol's CRDs .*; --revalidate-live validates them$`)
		if !note.MatchString(stderr) {
			t.Errorf("default: stderr lacks the note:\n%s", stderr)
		}
		// The v0alpha0-written policy is validated all the same (its finding is the one above).
		if !strings.Contains(out, "XAccessPolicy tools/calc-legacy") {
			t.Errorf("default: the v0alpha0-written policy was not validated:\n%s", out)
		}
		_, out, _ = runAgpol(t, "lint", "--kubeconfig", kubeconfig, "--only", "schema", "-o", "json")
		var doc struct {
			NotRevalidated int `json:"notRevalidated"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.NotRevalidated == 0 {
			t.Errorf("json: notRevalidated %d (%v):\n%s", doc.NotRevalidated, err, out)
		}

		code, out, stderr = runAgpol(t, "lint", "--kubeconfig", kubeconfig, "--only", "schema", "--revalidate-live")
		want := "error AGP101 [schema] spec.mcp: Invalid value: exactly one of the fields in [serviceName hostname] must be set (the stored object would be rejected if it were created today) (XBackend tools/stored-both spec.mcp)"
		if code != exitFail || !strings.Contains(out, want) || !strings.HasSuffix(out, "1 error, 1 warning, 0 info\n") || stderr != "" {
			t.Errorf("--revalidate-live: exit %d, want %q\n%s\n%s", code, want, out, stderr)
		}
	})

	t.Run("unreachable cluster", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "kubeconfig")
		data, _ := os.ReadFile(kubeconfig)
		// Point the same credentials at a port nothing listens on.
		text := string(data)
		if i := strings.Index(text, "server: "); i >= 0 {
			j := strings.IndexByte(text[i:], '\n')
			text = text[:i] + "server: https://127.0.0.1:1" + text[i+j:]
		}
		if err := os.WriteFile(bad, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, format := range []string{"text", "sarif"} {
			code, out, stderr := runAgpol(t, "lint", "--kubeconfig", bad, "-o", format, "--request-timeout", "5s")
			if code != exitUsage || out != "" || stderr == "" {
				t.Errorf("-o %s: exit %d, stdout %q, stderr %q", format, code, out, stderr)
			}
		}
	})
}

// dynamicClient is a dynamic client of the server behind kubeconfig, for tests that
// write the objects agpol then reads.
func dynamicClient(t *testing.T, kubeconfig string) dynamic.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}
