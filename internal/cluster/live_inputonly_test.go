package cluster

import (
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/snapshot"
)

// inputOnly summarises the input-only objects of a snapshot, as Authorino's rules see
// them: a Secret's labels, annotations and which entries count as set (withData; a
// live read never knows them); the RBAC rules and bindings; the Kuadrant CRs.
func inputOnly(s *snapshot.Snapshot, withData bool) []string {
	var out []string
	for _, x := range s.Secrets {
		data := ""
		switch {
		case withData && x.DataUnread:
			data = " data unread"
		case withData:
			data = fmt.Sprintf(" apiKey=%v cert=%v", x.HasAPIKey, x.HasCertificate)
		}
		out = append(out, fmt.Sprintf("Secret %s/%s labels=%v annotations=%v%s", x.Namespace, x.Name, x.Labels, x.ObjectMeta.Annotations, data))
	}
	for _, x := range s.Roles {
		out = append(out, fmt.Sprintf("Role %s/%s %v", x.Namespace, x.Name, x.Rules))
	}
	for _, x := range s.ClusterRoles {
		out = append(out, fmt.Sprintf("ClusterRole %s %v", x.Name, x.Rules))
	}
	for _, x := range s.RoleBindings {
		out = append(out, fmt.Sprintf("RoleBinding %s/%s %v %v", x.Namespace, x.Name, x.RoleRef, x.Subjects))
	}
	for _, x := range s.ClusterRoleBindings {
		out = append(out, fmt.Sprintf("ClusterRoleBinding %s %v %v", x.Name, x.RoleRef, x.Subjects))
	}
	for _, x := range s.Kuadrants {
		out = append(out, fmt.Sprintf("Kuadrant %s/%s", x.Namespace, x.Name))
	}
	sort.Strings(out)
	return out
}

const inputOnlyManifest = `apiVersion: v1
kind: Namespace
metadata: {name: kuadrant-live}
---
apiVersion: kuadrant.io/v1beta1
kind: Kuadrant
metadata: {name: kuadrant, namespace: kuadrant-live}
spec: {}
---
apiVersion: v1
kind: Secret
metadata:
  name: api-key-alice
  namespace: kuadrant-live
  labels: {authorino.kuadrant.io/managed-by: authorino, app: toys}
  annotations: {secret.kuadrant.io/user-id: alice}
stringData: {api_key: IAMALICE}
type: Opaque
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: toy-reader, namespace: kuadrant-live}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: toy-reader, namespace: kuadrant-live}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: toy-reader}
subjects:
- {kind: ServiceAccount, name: client-app-1, namespace: kuadrant-live}
`

// TestLiveInputOnly reads Secrets (metadata only), RBAC objects and the Kuadrant CR
// from the API server, and checks files, the cluster and a replayed --snapshot-out give
// Authorino's rules the same objects, and that no Secret's data is ever read or written.
func TestLiveInputOnly(t *testing.T) {
	needLive(t)
	fileObjs, _, err := ReadFiles(FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(inputOnlyManifest)})
	if err != nil {
		t.Fatal(err)
	}
	fromFiles, err := Build(fileObjs, nil, "files")
	if err != nil {
		t.Fatal(err)
	}
	live.inputOnlyOnce.Do(func() {
		live.inputOnlyErr = create(t, objectsOf(fileObjs))
	})
	if live.inputOnlyErr != nil {
		t.Fatal(live.inputOnlyErr)
	}
	res, err := ReadLive(t.Context(), LiveOptions{Getter: getter(""), Namespace: "kuadrant-live"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Partial || len(res.Warnings) > 0 || len(res.NotInstalled) > 0 {
		t.Errorf("admin read: partial=%v warnings=%+v notInstalled=%v", res.Partial, res.Warnings, res.NotInstalled)
	}
	for _, o := range res.Objects {
		if o.Ref().Kind == "Secret" {
			if _, has := o.Object().Object["data"]; has {
				t.Errorf("Secret %s read with its data", o.Ref())
			}
		}
	}
	fromCluster, err := Build(res.Objects, nil, "cluster")
	if err != nil {
		t.Fatal(err)
	}
	if len(fromCluster.Secrets) != 1 || !fromCluster.Secrets[0].DataUnread {
		t.Fatalf("Secrets read live = %+v, want one, read as metadata only", fromCluster.Secrets)
	}
	want := inputOnly(fromFiles, false)
	// RoleBindings and Roles that the API server adds to a namespace (none in envtest)
	// would show here: the comparison is of the whole namespace.
	if got := inputOnly(fromCluster, false); !reflect.DeepEqual(got, want) {
		t.Errorf("cluster:\n%s\nfiles:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, res.Objects); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "IAMALICE") || strings.Contains(buf.String(), "\ndata:") {
		t.Fatalf("the snapshot carries a Secret's data:\n%s", buf.String())
	}
	path := filepath.Join(t.TempDir(), "snapshot.yaml")
	writeTree(t, "/", map[string]string{strings.TrimPrefix(path, "/"): buf.String()})
	back, err := LoadFiles(FileOptions{Filenames: []string{path}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inputOnly(back, true), inputOnly(fromCluster, true); !reflect.DeepEqual(got, want) {
		t.Errorf("replay:\n%s\ncluster:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(back.Secrets) != 1 || !back.Secrets[0].DataUnread {
		t.Errorf("replayed Secrets = %+v, want one, data unread", back.Secrets)
	}
	// A snapshot of files keeps which entries were set, not their values.
	buf.Reset()
	if err := WriteSnapshot(&buf, fileObjs); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "IAMALICE") || !strings.Contains(buf.String(), snapshot.SecretDataAnnotation+": api_key") {
		t.Errorf("snapshot of files:\n%s", buf.String())
	}
}

func objectsOf(objs []RawObject) []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(objs))
	for i, o := range objs {
		out[i] = o.Object()
	}
	return out
}
