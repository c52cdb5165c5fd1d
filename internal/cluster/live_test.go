package cluster

import (
	"bytes"
	"encoding/json"
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
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/agpol/agpol/internal/snapshot"
)

// typedObject is one typed object of a snapshot, prepared for comparison: the API object
// as JSON with the metadata the server owns removed.
type typedObject struct {
	apiVersion string
	content    map[string]any
	legacy     bool // XAccessPolicy read at v0alpha0
	legacyView map[string]any
	action     string
	source     snapshot.Source
}

// serverOwnedMeta are metadata fields the API server sets on create; the comparison
// ignores them. Everything else (name, namespace, labels, annotations, spec, status) counts.
var serverOwnedMeta = []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"}

// typedObjects indexes every typed object of s by identity.
func typedObjects(t *testing.T, s *snapshot.Snapshot) map[snapshot.Ref]typedObject {
	t.Helper()
	out := map[snapshot.Ref]typedObject{}
	add := func(o snapshot.Origin, api any, extra func(*typedObject)) {
		m := comparable(t, api)
		delete(m, "apiVersion") // compared separately: the raw object's version
		id := snapshot.RefOf(o.Object())
		if _, dup := out[id]; dup {
			t.Errorf("%v appears twice", id)
		}
		to := typedObject{apiVersion: o.Object().GetAPIVersion(), content: m, source: o.Source}
		if extra != nil {
			extra(&to)
		}
		out[id] = to
	}
	for _, x := range s.GatewayClasses {
		add(x.Origin, x.GatewayClass, nil)
	}
	for _, x := range s.Gateways {
		add(x.Origin, x.Gateway, nil)
	}
	for _, x := range s.HTTPRoutes {
		add(x.Origin, x.HTTPRoute, nil)
	}
	for _, x := range s.ReferenceGrants {
		add(x.Origin, x.ReferenceGrant, nil)
	}
	for _, x := range s.XBackends {
		add(x.Origin, x.XBackend, nil)
	}
	for _, x := range s.XAccessPolicies {
		add(x.Origin, x.XAccessPolicy, func(o *typedObject) {
			o.legacy, o.action = x.Legacy != nil, string(x.Spec.Action)
			if x.Legacy != nil {
				o.legacyView = comparable(t, x.Legacy)
			}
		})
	}
	for _, x := range s.AuthPolicies {
		add(x.Origin, x.AuthPolicy, nil)
	}
	for _, x := range s.Services {
		add(x.Origin, x.Service, nil)
	}
	for _, x := range s.ServiceAccounts {
		add(x.Origin, x.ServiceAccount, nil)
	}
	for _, x := range s.Namespaces {
		add(x.Origin, x.Namespace, nil)
	}
	return out
}

// dropStoragePruned removes from a v0alpha0 XAccessPolicy the fields the API server drops
// on write because the storage version (v1alpha1) has no such field: rule-level
// authorization.tools (checked against kube-apiserver v1.34; docs/semantics.md#v0alpha0).
func dropStoragePruned(legacy map[string]any) {
	spec, _ := legacy["spec"].(map[string]any)
	rules, _ := spec["rules"].([]any)
	for _, r := range rules {
		if authz, ok := r.(map[string]any)["authorization"].(map[string]any); ok {
			delete(authz, "tools")
		}
	}
}

// comparable is api as JSON, without the metadata the server owns.
func comparable(t *testing.T, api any) map[string]any {
	t.Helper()
	data, err := json.Marshal(api)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		for _, f := range serverOwnedMeta {
			delete(md, f)
		}
	}
	return m
}

// subsetDiff lists the fields of want that got lacks or holds differently. A zero value
// in want (a typed view writes unset non-pointer fields as 0 or "") may differ where
// defaulted(path) says the server fills that field in.
func subsetDiff(path string, want, got any, defaulted func(string) bool) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var out []string
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing live (file has %v)", path, k, w[k]))
				continue
			}
			out = append(out, subsetDiff(path+"."+k, w[k], gv, defaulted)...)
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: file has %v, live has %v", path, want, got)}
		}
		var out []string
		for i := range w {
			out = append(out, subsetDiff(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], defaulted)...)
		}
		return out
	default:
		if !reflect.DeepEqual(want, got) && !(isZero(want) && defaulted(indexless(path))) {
			return []string{fmt.Sprintf("%s: file has %v, live has %v", path, want, got)}
		}
		return nil
	}
}

// additions lists the leaf fields got has and want lacks, list indices written as [*].
func additions(path string, want, got any, into map[string]bool) {
	switch g := got.(type) {
	case map[string]any:
		w, _ := want.(map[string]any)
		for k, gv := range g {
			additions(path+"."+k, w[k], gv, into)
		}
	case []any:
		w, _ := want.([]any)
		for i := range g {
			var wv any
			if i < len(w) {
				wv = w[i]
			}
			additions(path+"[*]", wv, g[i], into)
		}
	default:
		if want == nil && got != nil {
			into[path] = true
		}
	}
}

// indexless writes list indices as [*].
func indexless(path string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			b.WriteString(path)
			return b.String()
		}
		b.WriteString(path[:i] + "[*]")
		path = path[i+j+1:]
	}
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// serverDefaults are the fields the pinned kube-apiserver (v1.34) and the CRD schemas add
// to the examples on create: defaults and allocations, by kind. A field the live read
// returns beyond these and the file's own fields fails the comparison.
var serverDefaults = map[string][]string{
	"Namespace": {
		".metadata.labels.kubernetes.io/metadata.name", // set by the server from the name
		".spec.finalizers[*]", ".status.phase",
	},
	"Service": { // allocations and defaults of the Service REST strategy
		".spec.clusterIP", ".spec.clusterIPs[*]", ".spec.internalTrafficPolicy", ".spec.ipFamilies[*]",
		".spec.ipFamilyPolicy", ".spec.sessionAffinity", ".spec.type", ".spec.ports[*].protocol",
		".spec.ports[*].targetPort",
	},
	"Gateway": { // CRD defaults, including the "Waiting for controller" status
		".spec.listeners[*].tls.certificateRefs[*].group", ".spec.listeners[*].tls.certificateRefs[*].kind",
		".status.conditions[*].lastTransitionTime", ".status.conditions[*].message", ".status.conditions[*].reason",
		".status.conditions[*].status", ".status.conditions[*].type",
	},
	"HTTPRoute": { // CRD defaults
		".spec.parentRefs[*].group", ".spec.parentRefs[*].kind",
		".spec.rules[*].backendRefs[*].group", ".spec.rules[*].backendRefs[*].kind", ".spec.rules[*].backendRefs[*].weight",
	},
	"XBackend": {".spec.mcp.path"}, // CRD default "/mcp"
	"XAccessPolicy": { // CRD defaults
		".spec.rules[*].authorization.mcp.mcpBaseProtocolMethodsOption",
		".spec.externalAuth.backendRef.group", ".spec.externalAuth.backendRef.kind",
	},
	"AuthPolicy": { // CRD defaults of every named rule
		".spec.defaults.rules.authentication.company-idp.metrics", ".spec.defaults.rules.authentication.company-idp.priority",
		".spec.rules.authorization.payments-scope.metrics", ".spec.rules.authorization.payments-scope.priority",
	},
}

// TestLiveMatchesFiles is issue 2's "the same objects live and from files give the same
// snapshot": testdata/examples is created in the API server, read back with ReadLive, and
// both snapshots are compared object by object.
//
// What is compared: the same identities (group, kind, namespace, name) on both sides, limited
// live to the examples' namespaces (the server has its own, e.g. default/kubernetes); and
// for each object its typed form as JSON (spec, status, name, namespace, labels,
// annotations). Every field the file sets must come back unchanged. Ignored: the metadata
// the server owns (uid, resourceVersion, generation, creationTimestamp, which the server
// overwrites, managedFields, which ReadLive strips). Fields the live object has beyond the
// file's must be listed in serverDefaults (CRD and built-in defaults and allocations).
// The v0alpha0 XAccessPolicy is stored as v1alpha1 by relabelling (the CRD has no
// conversion), so it lists with an empty action; ReadLive re-reads it at v0alpha0, and the
// test checks it gets the same typed form as from the file: v0alpha0, empty action, and a
// Legacy view with the file's fields, less those the server prunes on write
// (dropStoragePruned).
func TestLiveMatchesFiles(t *testing.T) {
	needLive(t)
	fileObjs := seedExamples(t)
	files, err := Build(fileObjs, nil, "files")
	if err != nil {
		t.Fatal(err)
	}
	res, err := ReadLive(t.Context(), LiveOptions{Getter: getter("")})
	if err != nil {
		t.Fatalf("ReadLive: %v", err)
	}
	if res.Partial || len(res.Warnings) > 0 || len(res.NotInstalled) > 0 {
		t.Errorf("admin read: partial=%v warnings=%+v notInstalled=%v, want a full read", res.Partial, res.Warnings, res.NotInstalled)
	}
	if res.Context != "envtest" {
		t.Errorf("Context = %q, want the kubeconfig context envtest", res.Context)
	}
	liveSnap, err := Build(res.Objects, nil, "cluster")
	if err != nil {
		t.Fatalf("typing the live objects: %v", err)
	}

	want := typedObjects(t, files)
	got := typedObjects(t, liveSnap)
	scope := exampleNamespaces(fileObjs)
	for id := range got {
		if !inScope(id, scope) {
			delete(got, id)
		}
	}
	for _, id := range sortedIDs(want) {
		if _, ok := got[id]; !ok {
			t.Errorf("%v: in the files, not read live", id)
		}
	}
	for _, id := range sortedIDs(got) {
		if _, ok := want[id]; !ok {
			t.Errorf("%v: read live, not in the files", id)
		}
	}
	allowed := map[string]map[string]bool{}
	for k, paths := range serverDefaults {
		allowed[k] = map[string]bool{}
		for _, p := range paths {
			allowed[k][p] = true
		}
	}
	for _, id := range sortedIDs(want) {
		w, g := want[id], got[id]
		if g.content == nil {
			continue
		}
		if g.source.Cluster != "envtest" || g.source.IsFile() || g.source.Item != -1 {
			t.Errorf("%v: live source = %+v, want cluster envtest", id, g.source)
		}
		defaulted := func(p string) bool { return allowed[id.Kind][p] }
		for _, d := range subsetDiff("", w.content, g.content, defaulted) {
			t.Errorf("%v: %s", id, d)
		}
		extra := map[string]bool{}
		additions("", w.content, g.content, extra)
		for _, p := range sortedKeys(extra) {
			if !allowed[id.Kind][p] {
				t.Errorf("%v: live has %s, which the file does not set and is not a known server default", id, p)
			}
		}
		if w.apiVersion != g.apiVersion || w.action != g.action || w.legacy != g.legacy {
			t.Errorf("%v: file %s action=%q legacy=%v, live %s action=%q legacy=%v", id,
				w.apiVersion, w.action, w.legacy, g.apiVersion, g.action, g.legacy)
		}
		if w.legacyView != nil && g.legacyView != nil {
			dropStoragePruned(w.legacyView)
			for _, d := range subsetDiff("(v0alpha0)", w.legacyView, g.legacyView, defaulted) {
				t.Errorf("%v: %s", id, d)
			}
		}
	}
	for _, o := range res.Objects {
		if _, ok := o.Object().Object["metadata"].(map[string]any)["managedFields"]; ok {
			t.Errorf("%s %s/%s: managedFields not stripped", o.Object().GetKind(), o.Object().GetNamespace(), o.Object().GetName())
		}
		if o.Object().GetAPIVersion() == "" || o.Object().GetKind() == "" {
			t.Errorf("live object without apiVersion/kind: %v", o.Object().Object["metadata"])
		}
	}
}

func exampleNamespaces(objs []RawObject) map[string]bool {
	ns := map[string]bool{}
	for _, o := range objs {
		if o.Object().GetKind() == "Namespace" {
			ns[o.Object().GetName()] = true
		} else if o.Object().GetNamespace() != "" {
			ns[o.Object().GetNamespace()] = true
		}
	}
	return ns
}

// inScope keeps objects of the examples' namespaces and cluster-scoped objects other
// than Namespaces (the tests create no GatewayClass of their own).
func inScope(id snapshot.Ref, ns map[string]bool) bool {
	if id.Kind == "Namespace" && id.Group == "" {
		return ns[id.Name]
	}
	if id.Namespace == "" {
		return true
	}
	return ns[id.Namespace]
}

func sortedIDs(m map[snapshot.Ref]typedObject) []snapshot.Ref {
	out := make([]snapshot.Ref, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return fmt.Sprint(a) < fmt.Sprint(b)
	})
	return out
}

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

func dynamicFor(cfg *rest.Config) (dynamic.Interface, error) { return dynamic.NewForConfig(cfg) }
