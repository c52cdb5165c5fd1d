package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agpol/agpol/internal/snapshot"
)

// Live reads against a real API server: refusals, RBAC, pagination and snapshots.

// TestLiveNotInstalled reads the cluster before and after the AuthPolicy CRD exists.
func TestLiveNotInstalled(t *testing.T) {
	needLive(t)
	if live.beforeKuadrantErr != nil {
		t.Fatalf("ReadLive before the AuthPolicy CRD: %v", live.beforeKuadrantErr)
	}
	before := live.beforeKuadrant
	// The Kuadrant CR's kind is optional (an input-only kind): reported, not partial.
	if !reflect.DeepEqual(before.NotInstalled, []string{"authpolicies.kuadrant.io", "kuadrants.kuadrant.io"}) {
		t.Errorf("NotInstalled before = %q, want exactly [authpolicies.kuadrant.io kuadrants.kuadrant.io]", before.NotInstalled)
	}
	if before.Partial || len(before.Warnings) > 0 {
		t.Errorf("a kind not installed made the read partial or warned: %v %+v", before.Partial, before.Warnings)
	}
	after, err := ReadLive(t.Context(), LiveOptions{Getter: getter("")})
	if err != nil {
		t.Fatal(err)
	}
	if len(after.NotInstalled) != 0 {
		t.Errorf("NotInstalled after installing the CRD = %q, want none", after.NotInstalled)
	}
}

// rbacRules lets a user get and list every kind agpol reads, and nothing else.
var rbacRules = []any{
	map[string]any{"apiGroups": []any{""}, "resources": []any{"services", "serviceaccounts", "namespaces"}, "verbs": []any{"get", "list"}},
	map[string]any{"apiGroups": []any{"gateway.networking.k8s.io"}, "resources": []any{"gatewayclasses", "gateways", "httproutes", "referencegrants", "listenersets"}, "verbs": []any{"get", "list"}},
	map[string]any{"apiGroups": []any{"agentic.networking.x-k8s.io"}, "resources": []any{"xbackends", "xaccesspolicies"}, "verbs": []any{"get", "list"}},
	map[string]any{"apiGroups": []any{"kuadrant.io"}, "resources": []any{"authpolicies"}, "verbs": []any{"get", "list"}},
}

func rbacObject(kind, namespace, name string, body map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: body}
	u.SetAPIVersion("rbac.authorization.k8s.io/v1")
	u.SetKind(kind)
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

// TestLiveRBACOneNamespace: a user who may get/list only in namespace "pay" (a Role and
// RoleBinding there, impersonated like kubectl --as) gets a partial answer with warnings
// naming kind and namespace across all namespaces, and a full answer with -n pay.
func TestLiveRBACOneNamespace(t *testing.T) {
	needLive(t)
	fileObjs := seedExamples(t)
	const user, nsUser = "pay-reader", "pay-reader-ns"
	err := create(t, []*unstructured.Unstructured{
		rbacObject("Role", "pay", "agpol-read", map[string]any{"rules": rbacRules}),
		rbacObject("RoleBinding", "pay", "agpol-read", map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "agpol-read"},
			"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}, map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": nsUser}},
		}),
		// nsUser may also list namespaces cluster-wide (a common tenant setup).
		rbacObject("ClusterRole", "", "agpol-list-namespaces", map[string]any{"rules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"namespaces"}, "verbs": []any{"get", "list"}},
		}}),
		rbacObject("ClusterRoleBinding", "", "agpol-list-namespaces", map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "agpol-list-namespaces"},
			"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": nsUser}},
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	var wantPay []string
	for _, o := range fileObjs {
		if o.Object().GetNamespace() == "pay" || (o.Object().GetKind() == "Namespace" && o.Object().GetName() == "pay") {
			wantPay = append(wantPay, idString(o.Object()))
		}
	}
	sort.Strings(wantPay)

	t.Run("all namespaces: partial, not a failure", func(t *testing.T) {
		res, err := ReadLive(t.Context(), LiveOptions{Getter: getter(user)})
		if err != nil {
			t.Fatalf("ReadLive failed instead of returning a partial answer: %v", err)
		}
		if !res.Partial {
			t.Error("Partial = false")
		}
		if len(res.Objects) != 0 {
			t.Errorf("read %d objects the user may not list cluster-wide", len(res.Objects))
		}
		want := map[string]string{
			"xaccesspolicies.agentic.networking.x-k8s.io": `cannot list xaccesspolicies.agentic.networking.x-k8s.io in all namespaces: forbidden`,
			"httproutes.gateway.networking.k8s.io":        `cannot list httproutes.gateway.networking.k8s.io in all namespaces: forbidden`,
			"authpolicies.kuadrant.io":                    `cannot list authpolicies.kuadrant.io in all namespaces: forbidden`,
			"namespaces":                                  `cannot list namespaces: forbidden`,
			"gatewayclasses.gateway.networking.k8s.io":    `cannot list gatewayclasses.gateway.networking.k8s.io: forbidden`,
		}
		checkWarnings(t, res.Warnings, want)
		if n := len(snapshot.KnownKinds) + len(snapshot.InputOnlyKinds); len(res.Warnings) != n {
			t.Errorf("%d warnings, want one per kind (%d): %+v", len(res.Warnings), n, res.Warnings)
		}
	})

	t.Run("namespace pay: full", func(t *testing.T) {
		res, err := ReadLive(t.Context(), LiveOptions{Getter: getter(user), Namespace: "pay"})
		if err != nil {
			t.Fatal(err)
		}
		// The input-only kinds the Role does not grant are optional: each is a warning
		// saying what is decided without it, and the read is not partial.
		if res.Partial {
			t.Errorf("partial=%v warnings=%+v, want a full read of pay", res.Partial, res.Warnings)
		}
		checkWarnings(t, res.Warnings, map[string]string{
			"secrets":                                `cannot list secrets in namespace "pay": forbidden (AuthPolicy apiKey and x509 rules are decided without them)`,
			"roles.rbac.authorization.k8s.io":        `cannot list roles.rbac.authorization.k8s.io in namespace "pay": forbidden (AuthPolicy kubernetesSubjectAccessReview rules are decided without them)`,
			"rolebindings.rbac.authorization.k8s.io": `cannot list rolebindings.rbac.authorization.k8s.io in namespace "pay": forbidden (AuthPolicy kubernetesSubjectAccessReview rules are decided without them)`,
			"kuadrants.kuadrant.io":                  `cannot list kuadrants.kuadrant.io in namespace "pay": forbidden (Kuadrant's namespace is assumed to be kuadrant-system)`,
		})
		if len(res.Warnings) != 4 {
			t.Errorf("warnings = %+v, want the four namespaced input-only kinds", res.Warnings)
		}
		if got := ids(res.Objects); !reflect.DeepEqual(got, wantPay) {
			t.Errorf("objects = %q\nwant %q", got, wantPay)
		}
	})

	t.Run("namespace infra: forbidden names the namespace", func(t *testing.T) {
		res, err := ReadLive(t.Context(), LiveOptions{Getter: getter(user), Namespace: "infra"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Partial || len(res.Objects) != 0 {
			t.Errorf("partial=%v objects=%d, want partial and nothing", res.Partial, len(res.Objects))
		}
		checkWarnings(t, res.Warnings, map[string]string{
			"gateways.gateway.networking.k8s.io": `cannot list gateways.gateway.networking.k8s.io in namespace "infra": forbidden`,
			"namespaces":                         `cannot get namespace "infra": forbidden`,
		})
		for _, w := range res.Warnings {
			if w.Namespace != "infra" {
				t.Errorf("warning %q has Namespace %q, want infra", w.Message, w.Namespace)
			}
		}
	})

	t.Run("all namespaces, namespaces visible: per-namespace fallback", func(t *testing.T) {
		res, err := ReadLive(t.Context(), LiveOptions{Getter: getter(nsUser)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Partial {
			t.Error("Partial = false")
		}
		var got []string
		for _, o := range res.Objects {
			if o.Object().GetKind() != "Namespace" {
				got = append(got, idString(o.Object()))
			}
		}
		sort.Strings(got)
		var wantNamespaced []string
		for _, id := range wantPay {
			if !strings.HasPrefix(id, "Namespace ") {
				wantNamespaced = append(wantNamespaced, id)
			}
		}
		if !reflect.DeepEqual(got, wantNamespaced) {
			t.Errorf("namespaced objects = %q\nwant %q", got, wantNamespaced)
		}
		var found bool
		for _, w := range res.Warnings {
			if w.Kind == "xaccesspolicies.agentic.networking.x-k8s.io" {
				found = true
				if !strings.Contains(w.Message, `"infra"`) || !strings.Contains(w.Message, `"tools"`) || strings.Contains(w.Message, `"pay"`) {
					t.Errorf("warning %q should name the forbidden namespaces infra and tools, not pay", w.Message)
				}
			}
		}
		if !found {
			t.Errorf("no warning for xaccesspolicies: %+v", res.Warnings)
		}
	})
}

func checkWarnings(t *testing.T, ws []snapshot.Warning, want map[string]string) {
	t.Helper()
	byKind := map[string]snapshot.Warning{}
	for _, w := range ws {
		if _, dup := byKind[w.Kind]; dup {
			t.Errorf("two warnings for %s", w.Kind)
		}
		byKind[w.Kind] = w
	}
	for kind, msg := range want {
		w, ok := byKind[kind]
		if !ok {
			t.Errorf("no warning for %s; got %+v", kind, ws)
			continue
		}
		if w.Message != msg {
			t.Errorf("warning for %s = %q, want %q", kind, w.Message, msg)
		}
	}
}

func idString(u *unstructured.Unstructured) string {
	id := snapshot.RefOf(u)
	return fmt.Sprintf("%s %s %s/%s", id.Kind, id.Group, id.Namespace, id.Name)
}

func ids(objs []RawObject) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, idString(o.Object()))
	}
	sort.Strings(out)
	return out
}

// TestLiveOnlyReads proves no mutating request is sent: a counting transport outside the
// read-only guard sees every request ReadLive attempts, one inside it every request that
// reached the server; both see only GETs. A write through the same configuration is
// refused before the network.
func TestLiveOnlyReads(t *testing.T) {
	needLive(t)
	seedExamples(t)
	var attempted, sent requestLog
	g := wrappingGetter{ConfigFlags: getter(""), wrap: sent.wrap}
	res, err := ReadLive(t.Context(), LiveOptions{Getter: g, WrapTransport: attempted.wrap})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) == 0 {
		t.Fatal("read nothing")
	}
	for name, log := range map[string]*requestLog{"attempted": &attempted, "sent": &sent} {
		by := log.byMethod()
		if by["GET"] == 0 || len(by) != 1 {
			t.Errorf("%s requests by method = %v, want only GET", name, by)
		}
	}
	lists := sent.matching(func(r *http.Request) bool { return r.URL.Query().Has("limit") })
	if len(lists) < len(snapshot.KnownKinds) {
		t.Errorf("%d list requests, want at least one per kind (%d)", len(lists), len(snapshot.KnownKinds))
	}
	secrets := sent.matching(func(r *http.Request) bool { return isSecretsPath(r.URL.Path) })
	if len(secrets) == 0 {
		t.Error("Secrets' metadata was not listed")
	}
	for _, r := range secrets {
		if a := r.Header.Get("Accept"); strings.Contains(a, "application/json,") || strings.HasSuffix(a, "application/json") || !strings.Contains(a, "as=PartialObjectMetadataList") {
			t.Errorf("Secrets requested with Accept %q, want PartialObjectMetadataList only", a)
		}
	}

	// The guard: a create through ReadLive's configuration never leaves the process.
	attempted, sent = requestLog{}, requestLog{}
	base, err := g.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg := readOnlyConfig(base)
	cfg.Wrap(attempted.wrap)
	dyn, err := dynamicFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName("written-by-agpol")
	gvr := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	_, err = dyn.Resource(gvr).Create(t.Context(), ns, metav1.CreateOptions{})
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("create through the read-only config: err = %v, want ErrReadOnly", err)
	}
	if by := attempted.byMethod(); by["POST"] != 1 {
		t.Errorf("attempted = %v, want the one POST", by)
	}
	if n := len(sent.matching(func(*http.Request) bool { return true })); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	admin, _ := adminClient(t)
	if _, err := admin.Resource(gvr).Get(t.Context(), "written-by-agpol", metav1.GetOptions{}); !isNotFound(err) {
		t.Errorf("namespace written-by-agpol: err = %v, want NotFound", err)
	}
}

// TestLivePagination lists a kind with more objects than the chunk size.
func TestLivePagination(t *testing.T) {
	needLive(t)
	const n = 7
	objs := []*unstructured.Unstructured{{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "paging"}}}}
	for i := range n {
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]any{"name": fmt.Sprintf("sa-%d", i), "namespace": "paging"},
		}})
	}
	if err := create(t, objs); err != nil {
		t.Fatal(err)
	}
	var log requestLog
	res, err := ReadLive(t.Context(), LiveOptions{Getter: getter(""), Namespace: "paging", ChunkSize: 2, WrapTransport: log.wrap})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range res.Objects {
		if o.Object().GetKind() == "ServiceAccount" {
			got = append(got, o.Object().GetName())
		}
	}
	want := []string{"sa-0", "sa-1", "sa-2", "sa-3", "sa-4", "sa-5", "sa-6"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("service accounts = %q, want %q", got, want)
	}
	saLists := log.matching(func(r *http.Request) bool {
		return strings.HasSuffix(r.URL.Path, "/namespaces/paging/serviceaccounts")
	})
	var continues int
	for _, r := range saLists {
		if r.URL.Query().Get("limit") != "2" {
			t.Errorf("list without limit=2: %s", r.URL)
		}
		if r.URL.Query().Get("continue") != "" {
			continues++
		}
	}
	if len(saLists) != 4 || continues != 3 {
		t.Errorf("%d list requests, %d with continue; want 4 pages (2+2+2+1), 3 continued", len(saLists), continues)
	}
}

// TestLiveSnapshotRoundTrip: a snapshot written from a live read (--snapshot-out) loads
// back with LoadFiles to the same content, and files overlay the live state.
func TestLiveSnapshotRoundTrip(t *testing.T) {
	needLive(t)
	fileObjs := seedExamples(t)
	res, err := ReadLive(t.Context(), LiveOptions{Getter: getter("")})
	if err != nil {
		t.Fatal(err)
	}
	liveSnap, err := Build(res.Objects, nil, "cluster")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSnapshot(&buf, res.Objects); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "snapshot.yaml")
	writeTree(t, "/", map[string]string{strings.TrimPrefix(path, "/"): buf.String()})
	back, err := LoadFiles(FileOptions{Filenames: []string{path}})
	if err != nil {
		t.Fatalf("loading the written snapshot: %v", err)
	}
	a, b := typedObjects(t, liveSnap), typedObjects(t, back)
	var known int
	for _, o := range res.Objects {
		if _, ok := snapshot.LookupKind(o.Ref().Group, o.Ref().Kind); ok {
			known++
		}
	}
	if len(a) != len(b) || len(a) != known {
		t.Fatalf("live %d objects (%d raw), reloaded %d", len(a), known, len(b))
	}
	if !reflect.DeepEqual(inputOnly(liveSnap, true), inputOnly(back, true)) {
		t.Errorf("input-only objects changed through the snapshot file:\nlive %v\nfile %v", inputOnly(liveSnap, true), inputOnly(back, true))
	}
	for id, x := range a {
		y, ok := b[id]
		if !ok {
			t.Errorf("%v lost in the snapshot file", id)
			continue
		}
		if !reflect.DeepEqual(x.content, y.content) || x.apiVersion != y.apiVersion {
			t.Errorf("%v changed through the snapshot file:\nlive %v\nfile %v", id, x.content, y.content)
		}
	}

	// Overlay: the examples' pay policy edited in a file replaces the live one; a new one is added.
	var edited *unstructured.Unstructured
	for _, o := range fileObjs {
		if o.Object().GetKind() == "XAccessPolicy" && o.Object().GetNamespace() == "pay" && edited == nil {
			edited = o.Object().DeepCopy()
		}
	}
	if edited == nil {
		t.Fatal("the examples have no XAccessPolicy in pay")
	}
	edited.SetLabels(map[string]string{"what-if": "yes"})
	added := edited.DeepCopy()
	added.SetName("what-if-new")
	top := []RawObject{NewRawObject(edited, snapshot.Source{File: "edit.yaml", Line: 1}), NewRawObject(added, snapshot.Source{File: "edit.yaml", Line: 30})}
	merged := Overlay(res.Objects, top)
	if len(merged) != len(res.Objects)+1 {
		t.Fatalf("overlay has %d objects, want %d", len(merged), len(res.Objects)+1)
	}
	s, err := Build(merged, nil, "cluster", "files")
	if err != nil {
		t.Fatal(err)
	}
	var sawEdited bool
	for _, p := range s.XAccessPolicies {
		if p.Namespace == "pay" && p.Name == edited.GetName() {
			sawEdited = true
			if p.Labels["what-if"] != "yes" || p.Source.File != "edit.yaml" {
				t.Errorf("overlaid policy = labels %v from %v, want the file's", p.Labels, p.Source)
			}
		}
	}
	if !sawEdited {
		t.Error("edited policy missing after overlay")
	}
}
