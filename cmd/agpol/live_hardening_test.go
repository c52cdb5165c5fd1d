package main

// Live faults and the read-only proof. The faults of a server that is unreachable, slow
// or failing run against local httptest servers; the read-only proof, a kind that is not
// installed and a CRD served at another version run against a real kube-apiserver and
// etcd (envtest, as lint_live_test.go starts them) with its audit log on. RBAC limited
// to one namespace is covered by internal/cluster's TestLiveRBACOneNamespace.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/testsupport/testenv"
)

// plainKubeconfig points at server without credentials.
func plainKubeconfig(t *testing.T, server string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	data := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q}
users:
- name: u
  user: {}
contexts:
- name: fake
  context: {cluster: c, user: u}
current-context: fake
`, server)
	if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeAPIServer serves discovery for every kind agpol reads, an empty list for each,
// and fail (when non-nil) for the list of the resource named failResource.
func fakeAPIServer(t *testing.T, failResource string, fail http.HandlerFunc) *httptest.Server {
	t.Helper()
	groups := map[string][]snapshot.KnownKind{} // "group/version" → kinds
	for _, k := range snapshot.KnownKinds {
		gv := schema.GroupVersion{Group: k.Group, Version: k.Versions[0]}.String()
		groups[gv] = append(groups[gv], k)
	}
	writeJSON := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, metav1.APIVersions{TypeMeta: metav1.TypeMeta{Kind: "APIVersions"}, Versions: []string{"v1"}})
	})
	mux.HandleFunc("/apis", func(w http.ResponseWriter, r *http.Request) {
		list := metav1.APIGroupList{TypeMeta: metav1.TypeMeta{Kind: "APIGroupList", APIVersion: "v1"}}
		var gvs []string
		for gv := range groups {
			gvs = append(gvs, gv)
		}
		sort.Strings(gvs)
		for _, s := range gvs {
			gv, _ := schema.ParseGroupVersion(s)
			if gv.Group == "" {
				continue
			}
			v := metav1.GroupVersionForDiscovery{GroupVersion: s, Version: gv.Version}
			list.Groups = append(list.Groups, metav1.APIGroup{Name: gv.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v})
		}
		writeJSON(w, list)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		var gv string
		var rest []string
		switch {
		case len(parts) >= 2 && parts[0] == "api":
			gv, rest = parts[1], parts[2:]
		case len(parts) >= 3 && parts[0] == "apis":
			gv, rest = parts[1]+"/"+parts[2], parts[3:]
		default:
			http.NotFound(w, r)
			return
		}
		kinds, ok := groups[gv]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if len(rest) == 0 {
			l := metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"}, GroupVersion: gv}
			for _, k := range kinds {
				l.APIResources = append(l.APIResources, metav1.APIResource{Name: k.Resource, Kind: k.Kind, Namespaced: k.Namespaced, Verbs: []string{"get", "list", "watch"}})
			}
			writeJSON(w, l)
			return
		}
		if len(rest) >= 2 && rest[0] == "namespaces" {
			rest = rest[2:]
		}
		if len(rest) != 1 {
			http.NotFound(w, r)
			return
		}
		if rest[0] == failResource && fail != nil {
			fail(w, r)
			return
		}
		writeJSON(w, map[string]any{"apiVersion": gv, "kind": "List", "metadata": map[string]any{}, "items": []any{}})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestLiveFaults: a server that cannot be reached, does not answer in time, or fails a
// list is an error naming the server or the kind (exit 2), never a hang.
func TestLiveFaults(t *testing.T) {
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // answers after a minute, or when the client gives up
		case <-time.After(time.Minute):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)

	failing := fakeAPIServer(t, "xaccesspolicies", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
			Code: 500, Reason: metav1.StatusReasonInternalError, Message: "etcdserver: request timed out"})
	})
	healthy := fakeAPIServer(t, "", nil)

	tests := []struct {
		name   string
		server string
		args   []string
		want   []string
		code   int
	}{
		{"unreachable", closed, nil, []string{"cannot reach the cluster", l.Addr().String(), "connection refused"}, exitUsage},
		{"slow, --request-timeout 1s", slow.URL, []string{"--request-timeout", "1s"}, []string{"cannot reach the cluster", "timeout=1s"}, exitUsage},
		{"500 on one kind's list", failing.URL, nil, []string{"listing xaccesspolicies.agentic.networking.x-k8s.io", "etcdserver: request timed out"}, exitUsage},
		{"healthy fake server", healthy.URL, nil, nil, exitOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kc := plainKubeconfig(t, tt.server)
			for _, cmd := range [][]string{{"get", "xap,xb", "-A"}, {"lint"}, {"describe", "gateway", "infra/edge"}} {
				if tt.code == exitOK && cmd[0] == "describe" {
					continue // nothing to describe on an empty cluster
				}
				args := append(append(append([]string{}, cmd...), "--kubeconfig", kc), tt.args...)
				start := time.Now()
				code, out, errOut := runGuarded(t, 45*time.Second, args...)
				if code != tt.code {
					t.Fatalf("%s: exit %d, want %d\n%s%s", cmd[0], code, tt.code, out, errOut)
				}
				for _, w := range tt.want {
					if !strings.Contains(errOut, w) {
						t.Errorf("%s: stderr lacks %q:\n%s", cmd[0], w, errOut)
					}
				}
				if tt.code != exitOK && (out != "" || !strings.HasPrefix(errOut, "error: ") || strings.Contains(errOut, "unable to cancel request")) {
					t.Errorf("%s: stdout %q, stderr %q", cmd[0], out, errOut)
				}
				// The slow server answers after a minute: finishing well before means the
				// timeout was applied (a generous bound; this is a hang guard, not a benchmark).
				if tt.name == "slow, --request-timeout 1s" && time.Since(start) > 30*time.Second {
					t.Errorf("%s: took %s with --request-timeout 1s", cmd[0], time.Since(start))
				}
			}
		})
	}
}

// auditEvent is the part of an audit.k8s.io/v1 Event the proof reads.
type auditEvent struct {
	Stage      string `json:"stage"`
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ImpersonatedUser *struct {
		Username string `json:"username"`
	} `json:"impersonatedUser"`
	ObjectRef *struct {
		Resource string `json:"resource"`
	} `json:"objectRef"`
	// ResponseObject is logged for Secrets only (RequestResponse level): what the API
	// server sent agpol.
	ResponseObject json.RawMessage `json:"responseObject"`
}

const readerUser = "agpol-reader"

// startAuditedCluster starts kube-apiserver with every request logged at Metadata level,
// the CRDs agpol reads except AuthPolicy's, the example scenario (without its
// AuthPolicies) and a Secret; it returns a kubeconfig of a user that may only get, list
// and watch, the audit log path, and an admin dynamic client with the envtest.
func startAuditedCluster(t *testing.T) (readerKubeconfig, auditLog string, env *envtest.Environment) {
	t.Helper()
	assets, err := testenv.AssetsDir()
	testenv.Need(t, err)
	defs, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var install []*apiextv1.CustomResourceDefinition
	for _, d := range defs {
		if d.Spec.Group == "kuadrant.io" {
			continue // installed later, at another version
		}
		install = append(install, d.DeepCopy())
	}
	dir := t.TempDir()
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: RequestResponse\n  resources: [{group: \"\", resources: [secrets]}]\n- level: Metadata\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog = filepath.Join(dir, "audit.log")
	env, cfg := testenv.Start(t, assets, install, func(e *envtest.Environment) {
		e.ControlPlane.GetAPIServer().Configure().
			Set("audit-policy-file", policy).
			Set("audit-log-path", auditLog).
			Set("audit-log-mode", "blocking")
	})

	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	create := func(gvr schema.GroupVersionResource, ns string, u *unstructured.Unstructured) {
		t.Helper()
		var ri dynamic.ResourceInterface = dyn.Resource(gvr)
		if ns != "" {
			ri = dyn.Resource(gvr).Namespace(ns)
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
	objs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{"../../testdata/examples"}})
	if err != nil {
		t.Fatal(err)
	}
	cluster.DefaultNamespace(objs, "default")
	for _, o := range objs {
		gvk := o.Object().GroupVersionKind()
		k, ok := snapshot.LookupKind(gvk.Group, gvk.Kind)
		if !ok || gvk.Group == "kuadrant.io" {
			continue // request files; AuthPolicies have no CRD yet
		}
		u := o.Object().DeepCopy()
		u.SetCreationTimestamp(metav1.Time{})
		ns := ""
		if k.Namespaced {
			ns = u.GetNamespace()
		}
		create(gvk.GroupVersion().WithResource(k.Resource), ns, u)
	}
	// A Secret whose data agpol must never read, and the read-only role: get, list and
	// watch on everything, Secrets included, so only agpol's own restraint (a list of
	// their metadata alone) keeps their data from it.
	create(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, "pay", &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": "ledger-token", "namespace": "pay"},
		"data": map[string]any{"token": "c2VjcmV0LXZhbHVl"}, // secret-value
	}})
	create(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "", &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "read-only"},
		"rules": []any{map[string]any{"apiGroups": []any{"*"}, "resources": []any{"*"}, "verbs": []any{"get", "list", "watch"}}},
	}})
	create(schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}, "", &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "read-only"},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "read-only"},
		"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": readerUser}},
	}})
	reader, err := env.AddUser(envtest.User{Name: readerUser}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := reader.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	readerKubeconfig = filepath.Join(dir, "reader.kubeconfig")
	if err := os.WriteFile(readerKubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	return readerKubeconfig, auditLog, env
}

// readAudit returns the reader's audit events.
func readAudit(t *testing.T, path string) []auditEvent {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit log line: %v", err)
		}
		if e.User.Username == readerUser {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLiveReadOnlyProof runs every command against a real API server as a user that may
// only get, list and watch, and shows from the API server's audit log that agpol sent
// nothing but get and list requests, none of them for Secrets, and that --snapshot-out
// holds no Secret. It then checks a kind that is not installed and a CRD served only at
// a version agpol does not read.
func TestLiveReadOnlyProof(t *testing.T) {
	kc, auditLog, env := startAuditedCluster(t)
	snap := filepath.Join(t.TempDir(), "snapshot.yaml")
	ex := "../../testdata/examples"
	commands := [][]string{
		{"get", "xaccesspolicies", "-A"},
		{"get", "xbackends", "-A"},
		{"get", "gateways", "-A"},
		{"get", "httproutes", "-A", "-o", "wide"},
		{"get", "authpolicies", "-A"},
		{"get", "xap,xb,gw,routes", "-A", "-o", "json", "--snapshot-out", snap},
		{"get", "gateway", "edge", "-n", "infra", "-o", "dot"},
		{"describe", "gateway", "infra/edge"},
		{"describe", "xbackend", "pay/ledger"},
		{"describe", "httproute", "pay/ledger"},
		{"explain", "--from", "sa:agents/billing", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "refund", "--extauth", "allow"},
		{"simulate", "--requests", "../../testdata/requests.yaml", "-o", "json"},
		{"lint", "-o", "json"},
		{"effective", "authpolicy", "--target", "httproute/pay/ledger"},
		{"can-i", "--list", "--from", "sa:agents/billing"},
		{"can-i", "--from", "sa:agents/support", "--tool", "balance", "--gateway", "infra/edge", "--backend", "pay/ledger"},
		{"who-can", "--tool", "refund", "--backend", "pay/ledger"},
		{"matrix"},
		{"diff", "--before", "live", "--after", ex},
		{"explain", "-f", ex + "/50-auth-policies.yaml", "--live", "--from", "sa:agents/billing", "--gateway", "infra/edge", "--host", "ledger.mcp.example.com", "--tool", "balance"},
	}
	for _, cmd := range commands {
		code, out, errOut := runGuarded(t, 2*time.Minute, append(append([]string{}, cmd...), "--kubeconfig", kc)...)
		getAuthPolicies := len(cmd) > 1 && cmd[1] == "authpolicies"
		if code == exitUsage || out == "" && !getAuthPolicies {
			t.Errorf("%s: exit %d\n%s%s", strings.Join(cmd, " "), code, out, errOut)
		}
		if strings.Contains(errOut, "forbidden") || strings.Contains(errOut, "refusing") {
			t.Errorf("%s: %s", strings.Join(cmd, " "), errOut)
		}
		if strings.Contains(errOut, "unable to cancel request") {
			t.Errorf("%s: client-go cannot cancel requests through agpol's transport: %s", strings.Join(cmd, " "), errOut)
		}
		if getAuthPolicies && !strings.Contains(errOut, "warning: authpolicies.kuadrant.io is not installed in the cluster") {
			t.Errorf("get authpolicies without the CRD: stderr %q", errOut)
		}
	}

	events := readAudit(t, auditLog)
	if len(events) < len(commands) {
		t.Fatalf("only %d audit events of %s: is the audit log on?", len(events), readerUser)
	}
	verbs := map[string]int{}
	for _, e := range events {
		verbs[e.Verb]++
		switch e.Verb {
		case "get", "list", "watch":
		default:
			t.Errorf("agpol sent %s %s", e.Verb, e.RequestURI)
		}
		if (e.ObjectRef != nil && e.ObjectRef.Resource == "secrets") || strings.Contains(e.RequestURI, "/secrets") {
			// Secrets are only listed, and the server sends their metadata alone.
			var resp struct {
				Kind  string `json:"kind"`
				Items []map[string]any
			}
			_ = json.Unmarshal(e.ResponseObject, &resp)
			if e.Verb != "list" || (e.Stage == "ResponseComplete" && resp.Kind != "PartialObjectMetadataList") {
				t.Errorf("agpol requested Secrets other than as metadata: %s %s (response %s)", e.Verb, e.RequestURI, resp.Kind)
			}
			for _, it := range resp.Items {
				if _, has := it["data"]; has {
					t.Errorf("the API server sent agpol a Secret's data: %s", e.RequestURI)
				}
			}
		}
		if e.ImpersonatedUser != nil {
			t.Errorf("agpol impersonated %s: %s", e.ImpersonatedUser.Username, e.RequestURI)
		}
	}
	if verbs["list"] == 0 {
		t.Errorf("no list requests in the audit log: %v", verbs)
	}
	t.Logf("%d audit events of %s by verb: %v", len(events), readerUser, verbs)

	data, err := os.ReadFile(snap)
	if err != nil {
		t.Fatal(err)
	}
	// (Gateways name their certificates with {kind: Secret, name: ...}: references, not Secrets.)
	snapObjs, _, err := cluster.ReadFiles(cluster.FileOptions{Filenames: []string{snap}})
	if err != nil {
		t.Fatalf("--snapshot-out does not read back: %v", err)
	}
	// A Secret is written as its metadata, marked as read without its data.
	for _, o := range snapObjs {
		if u := o.Object(); u.GetKind() == "Secret" {
			_, hasData := u.Object["data"]
			_, hasStringData := u.Object["stringData"]
			if hasData || hasStringData || u.GetAnnotations()[snapshot.SecretDataAnnotation] != snapshot.SecretDataUnread {
				t.Errorf("--snapshot-out holds Secret %s/%s with more than its metadata: %v", u.GetNamespace(), u.GetName(), u.Object)
			}
		}
	}
	for _, bad := range []string{"c2VjcmV0LXZhbHVl", "secret-value"} {
		if strings.Contains(string(data), bad) {
			t.Errorf("--snapshot-out contains %q", bad)
		}
	}
	if !strings.Contains(string(data), "kind: XAccessPolicy") {
		t.Errorf("--snapshot-out lacks the policies:\n%.500s", data)
	}

	// The AuthPolicy CRD installed at a version agpol does not read: a warning that marks
	// the answer partial, and the other kinds are still read.
	t.Run("CRD at another version", func(t *testing.T) {
		var ap *apiextv1.CustomResourceDefinition
		defs, err := crds.CRDs()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range defs {
			if d.Spec.Group == "kuadrant.io" && d.Spec.Names.Kind == "AuthPolicy" {
				ap = d.DeepCopy()
			}
		}
		if ap == nil {
			t.Fatal("no AuthPolicy CRD in internal/crds")
		}
		v := ap.Spec.Versions[0]
		v.Name, v.Served, v.Storage = "v9", true, true
		ap.Spec.Versions = []apiextv1.CustomResourceDefinitionVersion{v}
		if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{CRDs: []*apiextv1.CustomResourceDefinition{ap}}); err != nil {
			t.Fatal(err)
		}
		for _, cmd := range [][]string{{"get", "authpolicies,xap", "-A"}, {"lint"}} {
			// A kind it needs unread, the command refuses (exit 2) unless --allow-partial.
			code, _, errOut := runGuarded(t, time.Minute, append(append([]string{}, cmd...), "--kubeconfig", kc)...)
			if code != exitUsage || !strings.Contains(errOut, "error: incomplete read of the cluster: authpolicies.kuadrant.io is served only at kuadrant.io/v9") {
				t.Errorf("%s without --allow-partial: exit %d, stderr %q", cmd[0], code, errOut)
			}
			code, out, errOut := runGuarded(t, time.Minute, append(append([]string{}, cmd...), "--kubeconfig", kc, "--allow-partial")...)
			if code == exitUsage {
				t.Fatalf("%s: exit %d\n%s%s", cmd[0], code, out, errOut)
			}
			if !strings.Contains(errOut, "warning: authpolicies.kuadrant.io is served only at kuadrant.io/v9; agpol reads v1") {
				t.Errorf("%s: stderr %q", cmd[0], errOut)
			}
			if cmd[0] == "get" && !strings.Contains(out, "calc-arithmetic") {
				t.Errorf("the other kinds were not read:\n%s", out)
			}
		}
	})
}
