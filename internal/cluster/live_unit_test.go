package cluster

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"

	"github.com/agpol/agpol/internal/snapshot"
)

func resources(gv string, names ...string) *metav1.APIResourceList {
	l := &metav1.APIResourceList{GroupVersion: gv}
	for _, n := range names {
		l.APIResources = append(l.APIResources, metav1.APIResource{Name: n, Verbs: []string{"get", "list", "watch"}})
	}
	return l
}

func TestPlanKinds(t *testing.T) {
	kinds := []snapshot.KnownKind{
		{Group: "gateway.networking.k8s.io", Kind: "Gateway", Resource: "gateways", Versions: []string{"v1", "v1beta1"}, Namespaced: true},
		{Group: "agentic.networking.x-k8s.io", Kind: "XAccessPolicy", Resource: "xaccesspolicies", Versions: []string{"v1alpha1", "v0alpha0"}, Namespaced: true},
		{Group: "kuadrant.io", Kind: "AuthPolicy", Resource: "authpolicies", Versions: []string{"v1"}, Namespaced: true},
		{Group: "", Kind: "Namespace", Resource: "namespaces", Versions: []string{"v1"}},
	}
	core := resources("v1", "namespaces", "namespaces/status")
	tests := []struct {
		name         string
		kinds        []snapshot.KnownKind
		lists        []*metav1.APIResourceList
		failed       map[schema.GroupVersion]error
		served       []string // group/version/resource
		legacy       string   // the XAccessPolicy v0alpha0 resource recorded beside v1alpha1
		notInstalled []string
		warnings     []string // substrings, in order
		partial      bool
	}{{
		name:   "first listed version wins over a later one",
		kinds:  kinds,
		lists:  []*metav1.APIResourceList{core, resources("gateway.networking.k8s.io/v1beta1", "gateways"), resources("gateway.networking.k8s.io/v1", "gateways"), resources("agentic.networking.x-k8s.io/v0alpha0", "xaccesspolicies"), resources("agentic.networking.x-k8s.io/v1alpha1", "xaccesspolicies", "xaccesspolicies/status"), resources("kuadrant.io/v1", "authpolicies")},
		served: []string{"gateway.networking.k8s.io/v1/gateways", "agentic.networking.x-k8s.io/v1alpha1/xaccesspolicies", "kuadrant.io/v1/authpolicies", "v1/namespaces"},
		legacy: "agentic.networking.x-k8s.io/v0alpha0/xaccesspolicies",
	}, {
		name:   "older version when the preferred one is not served",
		kinds:  kinds[:2],
		lists:  []*metav1.APIResourceList{resources("gateway.networking.k8s.io/v1beta1", "gateways"), resources("agentic.networking.x-k8s.io/v0alpha0", "xaccesspolicies")},
		served: []string{"gateway.networking.k8s.io/v1beta1/gateways", "agentic.networking.x-k8s.io/v0alpha0/xaccesspolicies"},
	}, {
		// A cluster still on kuadrant-operator v0.x serves AuthPolicy only at v1beta2;
		// one that serves v1 too is read at v1 (snapshot.KnownKinds' order).
		name:   "AuthPolicy at v1beta2 when v1 is not served, at v1 when both are",
		kinds:  knownAuthPolicy(),
		lists:  []*metav1.APIResourceList{resources("kuadrant.io/v1beta2", "authpolicies")},
		served: []string{"kuadrant.io/v1beta2/authpolicies"},
	}, {
		name:   "AuthPolicy at v1 when v1 and v1beta2 are served",
		kinds:  knownAuthPolicy(),
		lists:  []*metav1.APIResourceList{resources("kuadrant.io/v1beta2", "authpolicies"), resources("kuadrant.io/v1", "authpolicies")},
		served: []string{"kuadrant.io/v1/authpolicies"},
	}, {
		name:         "kind not installed is recorded once, by resource.group",
		kinds:        kinds,
		lists:        []*metav1.APIResourceList{core, resources("gateway.networking.k8s.io/v1", "gateways")},
		served:       []string{"gateway.networking.k8s.io/v1/gateways", "v1/namespaces"},
		notInstalled: []string{"xaccesspolicies.agentic.networking.x-k8s.io", "authpolicies.kuadrant.io"},
	}, {
		name:   "legacy agentic group is an alias when the current group is absent",
		kinds:  kinds[1:2],
		lists:  []*metav1.APIResourceList{resources("agentic.prototype.x-k8s.io/v0alpha0", "xaccesspolicies")},
		served: []string{"agentic.prototype.x-k8s.io/v0alpha0/xaccesspolicies"},
	}, {
		name:   "current agentic group wins over the legacy one",
		kinds:  kinds[1:2],
		lists:  []*metav1.APIResourceList{resources("agentic.prototype.x-k8s.io/v0alpha0", "xaccesspolicies"), resources("agentic.networking.x-k8s.io/v0alpha0", "xaccesspolicies")},
		served: []string{"agentic.networking.x-k8s.io/v0alpha0/xaccesspolicies"},
	}, {
		name:     "served only at a version agpol does not read",
		kinds:    kinds[2:3],
		lists:    []*metav1.APIResourceList{resources("kuadrant.io/v1beta3", "authpolicies")},
		warnings: []string{"authpolicies.kuadrant.io is served only at kuadrant.io/v1beta3; agpol reads v1"},
		partial:  true,
	}, {
		name:     "discovery failed for the group",
		kinds:    kinds[2:3],
		failed:   map[schema.GroupVersion]error{{Group: "kuadrant.io", Version: "v1"}: errors.New("503")},
		warnings: []string{"cannot discover authpolicies.kuadrant.io: the server failed to list kuadrant.io/v1"},
		partial:  true,
	}, {
		name:  "a resource without the list verb is not listable",
		kinds: kinds[2:3],
		lists: []*metav1.APIResourceList{{GroupVersion: "kuadrant.io/v1", APIResources: []metav1.APIResource{{Name: "authpolicies", Verbs: []string{"get"}}}}},
		// served at v1 but not listable: neither served nor another version.
		notInstalled: []string{"authpolicies.kuadrant.io"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planKinds(tt.kinds, tt.lists, tt.failed)
			var served []string
			var legacy string
			for _, s := range p.served {
				served = append(served, strings.TrimPrefix(s.gvr.GroupVersion().String()+"/"+s.gvr.Resource, "/"))
				if s.legacy != nil {
					legacy = s.legacy.GroupVersion().String() + "/" + s.legacy.Resource
				}
			}
			if legacy != tt.legacy {
				t.Errorf("legacy = %q, want %q", legacy, tt.legacy)
			}
			if !reflect.DeepEqual(served, tt.served) {
				t.Errorf("served = %q, want %q", served, tt.served)
			}
			if !reflect.DeepEqual(p.notInstalled, tt.notInstalled) {
				t.Errorf("notInstalled = %q, want %q", p.notInstalled, tt.notInstalled)
			}
			if len(p.warnings) != len(tt.warnings) {
				t.Fatalf("warnings = %+v, want %q", p.warnings, tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(p.warnings[i].Message, w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, p.warnings[i].Message, w)
				}
			}
			if p.partial != tt.partial {
				t.Errorf("partial = %v, want %v", p.partial, tt.partial)
			}
		})
	}
}

func TestSecretsOnlyAsMetadata(t *testing.T) {
	for _, tt := range []struct {
		accept, want string
		ok           bool
	}{
		{"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
			"application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", true},
		{"application/json", "", false},
		{"", "", false},
		{"application/json;as=Table;g=meta.k8s.io;v=v1", "", false},
	} {
		got, ok := metadataOnlyAccept(tt.accept)
		if got != tt.want || ok != tt.ok {
			t.Errorf("metadataOnlyAccept(%q) = %q, %v; want %q, %v", tt.accept, got, ok, tt.want, tt.ok)
		}
	}
}

func TestKnownKindsNeverIncludeSecrets(t *testing.T) {
	for _, k := range snapshot.KnownKinds {
		if k.Resource == "secrets" || k.Kind == "Secret" {
			t.Errorf("KnownKinds lists %s/%s: agpol must never read Secrets", k.Group, k.Kind)
		}
	}
}

const metaAccept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"

func TestReadOnlyTransport(t *testing.T) {
	var reached, accepts []string
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		reached = append(reached, r.Method+" "+r.URL.Path)
		accepts = append(accepts, r.Header.Get("Accept"))
		return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader("{}")), Request: r}, nil
	})
	rt := &readOnlyTransport{next: next}
	tests := []struct {
		method, path string
		allowed      bool
		accept       string
	}{
		{"GET", "/apis/agentic.networking.x-k8s.io/v1alpha1/xaccesspolicies", true, ""},
		{"HEAD", "/api/v1/namespaces/pay", true, ""},
		{"GET", "/api/v1/namespaces/secrets", true, ""},   // a namespace named "secrets"
		{"GET", "/apis/example.com/v1/secrets", true, ""}, // not core Secrets
		{"POST", "/apis/agentic.networking.x-k8s.io/v1alpha1/namespaces/pay/xaccesspolicies", false, ""},
		{"PUT", "/api/v1/namespaces/pay", false, ""},
		{"PATCH", "/apis/gateway.networking.k8s.io/v1/namespaces/infra/gateways/edge", false, ""},
		{"DELETE", "/api/v1/namespaces/pay", false, ""},
		{"GET", "/api/v1/secrets", false, ""},
		{"GET", "/api/v1/namespaces/pay/secrets", false, ""},
		{"GET", "/api/v1/namespaces/pay/secrets/token", false, ""},
		{"GET", "/api/v1/watch/namespaces/pay/secrets", false, ""},
		{"GET", "/api/v1/namespaces/pay/secrets", false, "application/json"},
		// Secrets' metadata only: the plain fallback is dropped from the Accept header.
		{"GET", "/api/v1/namespaces/pay/secrets", true, metaAccept + ",application/json"},
		{"GET", "/api/v1/secrets", true, metaAccept},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			reached, accepts = nil, nil
			req := httptest.NewRequest(tt.method, "https://cluster.example"+tt.path, nil)
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			resp, err := rt.RoundTrip(req)
			if tt.allowed {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				resp.Body.Close()
				if len(reached) != 1 {
					t.Fatalf("request did not reach the wrapped transport")
				}
				if isSecretsPath(tt.path) && accepts[0] != metaAccept {
					t.Errorf("Secrets requested with Accept %q, want %q", accepts[0], metaAccept)
				}
				return
			}
			if !errors.Is(err, ErrReadOnly) {
				t.Fatalf("err = %v, want ErrReadOnly", err)
			}
			if len(reached) != 0 {
				t.Errorf("refused request reached the network: %v", reached)
			}
		})
	}
}

// TestReadOnlyConfigGuardsEveryClient checks the guard sits in the config every client is
// built from, against a server that would accept writes.
func TestReadOnlyConfigGuardsEveryClient(t *testing.T) {
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Method)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
	}))
	defer srv.Close()
	cf := genericclioptions.NewConfigFlags(false)
	server := srv.URL
	cf.APIServer = &server
	base, err := cf.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg := readOnlyConfig(base)
	client := &http.Client{}
	tr, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	client.Transport = tr
	for _, m := range []string{"POST", "PUT", "PATCH", "DELETE"} {
		req, _ := http.NewRequest(m, srv.URL+"/api/v1/namespaces", strings.NewReader("{}"))
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			t.Errorf("%s was sent", m)
		} else if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s: err = %v, want ErrReadOnly", m, err)
		}
	}
	resp, err := client.Get(srv.URL + "/api/v1/namespaces")
	if err != nil {
		t.Fatalf("GET refused: %v", err)
	}
	resp.Body.Close()
	if !reflect.DeepEqual(methods, []string{"GET"}) {
		t.Errorf("server saw %v, want only GET", methods)
	}
	if !strings.HasPrefix(cfg.UserAgent, "agpol/") {
		t.Errorf("UserAgent = %q, want agpol/...", cfg.UserAgent)
	}
}

func TestReadLiveUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	addr := srv.URL
	srv.Close() // nothing listens there any more
	cf := genericclioptions.NewConfigFlags(false)
	cf.APIServer = &addr
	timeout := "5s"
	cf.Timeout = &timeout
	_, err := ReadLive(t.Context(), LiveOptions{Getter: cf})
	if err == nil {
		t.Fatal("ReadLive against a closed port succeeded")
	}
	if !strings.Contains(err.Error(), "cannot reach the cluster") || !strings.Contains(err.Error(), strings.TrimPrefix(addr, "http://")) {
		t.Errorf("err = %v, want it to say the cluster cannot be reached and name the server", err)
	}
}

func TestReadLiveNoGetter(t *testing.T) {
	if _, err := ReadLive(t.Context(), LiveOptions{}); err == nil {
		t.Fatal("ReadLive without a Getter succeeded")
	}
}

func TestContextName(t *testing.T) {
	cf := genericclioptions.NewConfigFlags(false)
	kc := t.TempDir() + "/kubeconfig"
	writeTree(t, "/", map[string]string{strings.TrimPrefix(kc, "/"): `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://a.example:6443"}
users:
- name: u
contexts:
- name: first
  context: {cluster: c, user: u}
- name: second
  context: {cluster: c, user: u}
current-context: first
`})
	cf.KubeConfig = &kc
	if got := contextName(cf); got != "first" {
		t.Errorf("current context = %q, want first", got)
	}
	second := "second"
	cf.Context = &second
	if got := contextName(cf); got != "second" {
		t.Errorf("--context = %q, want second", got)
	}
	if got := serverHost("https://a.example:6443"); got != "a.example:6443" {
		t.Errorf("serverHost = %q", got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func rawObj(apiVersion, kind, ns, name, label string) RawObject {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	if label != "" {
		u.SetLabels(map[string]string{"from": label})
	}
	src := snapshot.Source{Cluster: "test", Item: -1}
	if label == "file" {
		src = snapshot.Source{File: "top.yaml", Line: 1, Item: -1}
	}
	return NewRawObject(u, src)
}

func TestOverlay(t *testing.T) {
	const xap = "agentic.networking.x-k8s.io/v1alpha1"
	base := []RawObject{
		rawObj(xap, "XAccessPolicy", "pay", "a", "live"),
		rawObj("v1", "Service", "pay", "a", "live"), // same name, other kind: not replaced
		rawObj(xap, "XAccessPolicy", "pay", "b", "live"),
		rawObj(xap, "XAccessPolicy", "tools", "a", "live"), // same name, other namespace
	}
	top := []RawObject{
		rawObj(xap, "XAccessPolicy", "pay", "b", "file"),                                   // replaces in place
		rawObj("agentic.prototype.x-k8s.io/v0alpha0", "XAccessPolicy", "pay", "a", "file"), // legacy group: same identity
		rawObj(xap, "XAccessPolicy", "pay", "c", "file"),                                   // new: appended
		rawObj(xap, "XAccessPolicy", "pay", "c", "file"),                                   // repeated in the files: last wins
	}
	got := Overlay(base, top)
	type row struct{ Kind, NS, Name, From, APIVersion string }
	var rows []row
	for _, o := range got {
		rows = append(rows, row{o.Object().GetKind(), o.Object().GetNamespace(), o.Object().GetName(), o.Object().GetLabels()["from"], o.Object().GetAPIVersion()})
	}
	want := []row{
		{"XAccessPolicy", "pay", "a", "file", "agentic.prototype.x-k8s.io/v0alpha0"},
		{"Service", "pay", "a", "live", "v1"},
		{"XAccessPolicy", "pay", "b", "file", xap},
		{"XAccessPolicy", "tools", "a", "live", xap},
		{"XAccessPolicy", "pay", "c", "file", xap},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("Overlay =\n%v\nwant\n%v", rows, want)
	}
	if base[2].Object().GetLabels()["from"] != "live" {
		t.Error("Overlay modified its base")
	}
	if got[2].Source.File != "top.yaml" {
		t.Errorf("replaced object keeps source %v, want the file's", got[2].Source)
	}
}

func TestWriteSnapshotRoundTrip(t *testing.T) {
	objs := []RawObject{
		rawObj("v1", "Namespace", "", "pay", "live"),
		rawObj("agentic.networking.x-k8s.io/v1alpha1", "XAccessPolicy", "pay", "p", "live"),
		rawObj("v1", "Secret", "pay", "token", "live"),
	}
	objs[1].Object().Object["spec"] = map[string]any{
		"targetRefs": []any{map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "edge"}},
		"action":     "Allow",
		"rules":      []any{map[string]any{"name": "r", "authorization": map[string]any{"type": "CEL", "cel": map[string]any{"expression": "request.params.amount < 100"}}}},
	}
	objs[2].Object().Object["data"] = map[string]any{"token": "c2VjcmV0", "api_key": "a2V5"}
	var buf strings.Builder
	if err := WriteSnapshot(&buf, objs); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "c2VjcmV0") || strings.Contains(buf.String(), "a2V5") || strings.Contains(buf.String(), "\ndata:") {
		t.Fatalf("a Secret's data was written:\n%s", buf.String())
	}
	// The Secret is written as its metadata, with which entries Authorino reads were set.
	objs[2] = rawObj("v1", "Secret", "pay", "token", "live")
	objs[2].Object().SetAnnotations(map[string]string{snapshot.SecretDataAnnotation: "api_key"})
	back, _, err := ReadFiles(FileOptions{Filenames: []string{"-"}, Stdin: strings.NewReader(buf.String())})
	if err != nil {
		t.Fatalf("reading the snapshot back: %v\n%s", err, buf.String())
	}
	if len(back) != 3 {
		t.Fatalf("read back %d objects, want 3", len(back))
	}
	for i := range back {
		if !reflect.DeepEqual(back[i].Object().Object, objs[i].Object().Object) {
			t.Errorf("object %d changed:\nwrote %v\nread  %v", i, objs[i].Object().Object, back[i].Object().Object)
		}
		if back[i].Source.Line == 0 {
			t.Errorf("object %d read back without a line", i)
		}
	}
}

// knownAuthPolicy is snapshot.KnownKinds' AuthPolicy entry, with the versions agpol reads.
func knownAuthPolicy() []snapshot.KnownKind {
	k, _ := snapshot.LookupKind("kuadrant.io", "AuthPolicy")
	return []snapshot.KnownKind{k}
}
