package snapshot

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestSecretKeepsNoData: a Secret is typed with its metadata and whether it holds an
// API key; neither its typed form nor the object its Origin holds carries the data.
func TestSecretKeepsNoData(t *testing.T) {
	s := &Snapshot{}
	src := "apiVersion: v1\nkind: Secret\nmetadata: {name: k, namespace: ns, labels: {app: x}}\nstringData: {api_key: SUPERSECRET}\ndata: {other: U1VQRVJTRUNSRVQy}\n"
	if err := s.Add(obj(t, src), Source{File: "f.yaml", Line: 1}); err != nil {
		t.Fatal(err)
	}
	if len(s.Secrets) != 1 || s.Len() != 0 {
		t.Fatalf("secrets %d, len %d; want 1 input-only secret", len(s.Secrets), s.Len())
	}
	x := s.Secrets[0]
	if !x.HasAPIKey || x.HasCertificate || x.Labels["app"] != "x" {
		t.Errorf("secret %+v", x)
	}
	out, err := yaml.Marshal(x.Origin.Object().Object)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "SUPERSECRET") || strings.Contains(string(out), "U1VQ") || strings.Contains(string(out), "Data:") || strings.Contains(string(out), "\ndata:") {
		t.Errorf("the Secret's data is kept:\n%s", out)
	}
}

// TestDecodeRBACAndKuadrant: the RBAC kinds and the Kuadrant CR are typed, not skipped.
func TestDecodeRBACAndKuadrant(t *testing.T) {
	s := &Snapshot{}
	for _, src := range []string{
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: r}\nrules: [{nonResourceURLs: [/toy*], verbs: [get]}]\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: b, namespace: ns}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: r}\nsubjects: [{kind: User, name: alice}]\n",
		"apiVersion: kuadrant.io/v1beta1\nkind: Kuadrant\nmetadata: {name: kuadrant, namespace: kuadrant-ops}\n",
	} {
		if err := s.Add(obj(t, src), Source{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.ClusterRoles) != 1 || len(s.RoleBindings) != 1 || len(s.Kuadrants) != 1 || len(s.Skipped) != 0 {
		t.Fatalf("typed %d/%d/%d, skipped %v", len(s.ClusterRoles), len(s.RoleBindings), len(s.Kuadrants), s.Skipped)
	}
	if s.ClusterRoles[0].Rules[0].NonResourceURLs[0] != "/toy*" || s.Kuadrants[0].Namespace != "kuadrant-ops" {
		t.Errorf("decoded %+v %+v", s.ClusterRoles[0].Rules, s.Kuadrants[0].ObjectMeta)
	}
}
