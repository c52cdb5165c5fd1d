package crds

// The agreement test creates the same objects in a real kube-apiserver (dry run, with the
// embedded CRDs installed) and checks that the offline validation accepts and rejects
// exactly what the server does, with the server's messages and unknown-field warnings.
// The binaries come from hack/testenv (KUBEBUILDER_ASSETS, or <repo>/bin); without them
// the test skips, except with CI=true, where it fails.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/agpol/agpol/internal/testsupport/testenv"
)

var server struct {
	once     sync.Once
	env      *envtest.Environment
	client   dynamic.Interface
	warnings *warningCollector
	err      error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if server.env != nil {
		_ = server.env.Stop()
	}
	os.Exit(code)
}

type warningCollector struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warningCollector) HandleWarningHeader(_ int, _ string, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.msgs = append(w.msgs, msg)
}

func (w *warningCollector) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.msgs
	w.msgs = nil
	return out
}

func needServer(t *testing.T) {
	t.Helper()
	if !testing.Short() {
		server.once.Do(startServer)
	}
	testenv.Need(t, server.err)
}

func startServer() {
	assets, err := testenv.AssetsDir()
	if err != nil {
		server.err = err
		return
	}
	crds, err := CRDs()
	if err != nil {
		server.err = err
		return
	}
	install := make([]*apiextv1.CustomResourceDefinition, 0, len(crds))
	for _, c := range crds {
		install = append(install, c.DeepCopy())
	}
	logf.SetLogger(logr.Discard())
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDInstallOptions:        envtest.CRDInstallOptions{CRDs: install},
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		server.err = fmt.Errorf("starting kube-apiserver and etcd: %w", err)
		return
	}
	server.env = env
	server.warnings = &warningCollector{}
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = server.warnings
	server.client, server.err = dynamic.NewForConfig(cfg)
}

// serverVerdict is what the API server says about creating u (dry run).
type serverVerdict struct {
	causes  []string                   // "field: message", sorted
	unknown []string                   // unknown field paths from the warnings, sorted
	stored  *unstructured.Unstructured // what a dry-run create returned
}

var unknownWarning = regexp.MustCompile(`^unknown field "(.*)"$`)

func createDryRun(t *testing.T, u *unstructured.Unstructured) serverVerdict {
	t.Helper()
	ctx := context.Background()
	ns := u.GetNamespace()
	if ns != "" { // "" for a cluster-scoped kind (GatewayClass)
		_, err := server.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(ctx,
			&unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}},
			metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating namespace %s: %v", ns, err)
		}
	}
	gvk := u.GroupVersionKind()
	var resource string
	defs, _ := Definitions()
	for _, d := range defs {
		if d.Group == gvk.Group && d.Kind == gvk.Kind {
			resource = d.Resource
		}
	}
	server.warnings.take()
	stored, err := server.client.Resource(gvk.GroupVersion().WithResource(resource)).Namespace(ns).Create(ctx, u.DeepCopy(),
		metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Warn"})
	v := serverVerdict{stored: stored}
	for _, w := range server.warnings.take() {
		if m := unknownWarning.FindStringSubmatch(w); m != nil {
			v.unknown = append(v.unknown, m[1])
		}
	}
	if err != nil {
		var se *apierrors.StatusError
		if !errors.As(err, &se) || se.ErrStatus.Details == nil || !apierrors.IsInvalid(err) {
			t.Fatalf("creating %s %s: unexpected error %v", gvk.Kind, u.GetName(), err)
		}
		for _, c := range se.ErrStatus.Details.Causes {
			v.causes = append(v.causes, normalize(c.Field+": "+c.Message))
		}
	}
	sort.Strings(v.causes)
	sort.Strings(v.unknown)
	return v
}

// normalize drops what differs between server versions but not in meaning: the
// '"object": ' type placeholder older servers print for CEL rule violations, and
// the "<nil>: " of object-level messages.
var typePlaceholder = regexp.MustCompile(`Invalid value: "(object|array|string|integer|number|boolean)": `)

func normalize(s string) string {
	s = strings.TrimPrefix(s, "<nil>: ")
	s = strings.TrimPrefix(s, ": ")
	return typePlaceholder.ReplaceAllString(s, "Invalid value: ")
}

// TestAdmitAgreesWithTheAPIServer: the object Admit makes offline has the spec the API
// server stores (defaults, pruning, and pruning at the storage version: a dry-run
// create returns the object after a round trip through the storage codec).
func TestAdmitAgreesWithTheAPIServer(t *testing.T) {
	needServer(t)
	var files []string
	for _, g := range []string{"../../testdata/lint/upstream/valid/*.yaml", "../../testdata/examples/*.yaml",
		"../../testdata/lint/checks/AGP102*.yaml", "../../testdata/admit/*.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	checked, changed := 0, 0
	for _, f := range files {
		for _, o := range readObjects(t, f) {
			gvk := o.Object().GroupVersionKind()
			v, err := Lookup(gvk)
			if err != nil {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s/%s", filepath.Base(f), gvk.Kind, o.Object().GetName()), func(t *testing.T) {
				want := createDryRun(t, o.Object())
				if len(want.causes) > 0 || want.stored == nil {
					t.Skipf("the server refuses it: %v", want.causes)
				}
				got := o.Object().DeepCopy()
				if _, err := v.Admit(got); err != nil {
					t.Fatal(err)
				}
				if !equality.Semantic.DeepEqual(got.Object["spec"], want.stored.Object["spec"]) {
					t.Errorf("spec differs\noffline: %v\nserver:  %v", got.Object["spec"], want.stored.Object["spec"])
				}
				if !equality.Semantic.DeepEqual(got.Object["spec"], o.Object().Object["spec"]) {
					changed++
				}
			})
			checked++
		}
	}
	if checked < 20 || changed < 6 {
		t.Fatalf("only %d objects compared, %d changed by admission", checked, changed)
	}
}

func TestAgreesWithTheAPIServer(t *testing.T) {
	needServer(t)
	var files []string
	for _, g := range []string{"../../testdata/lint/upstream/*/*.yaml", "../../testdata/examples/*.yaml",
		"../../testdata/lint/checks/AGP10*.yaml", "../../testdata/lint/base.yaml"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	checked := 0
	for _, f := range files {
		for _, o := range readObjects(t, f) {
			gvk := o.Object().GroupVersionKind()
			v, err := Lookup(gvk)
			if err != nil {
				continue // core kinds, versions no CRD serves
			}
			if gvk.Group == "kuadrant.io" && gvk.Version == "v1beta2" {
				continue // the test server installs the current AuthPolicy CRD, which no longer serves v1beta2
			}
			name := fmt.Sprintf("%s/%s/%s", filepath.Base(f), gvk.Kind, o.Object().GetName())
			t.Run(name, func(t *testing.T) {
				offline := v.Validate(context.Background(), o.Object())
				var got []string
				for _, e := range offline.Errors {
					got = append(got, normalize(e.Error()))
				}
				sort.Strings(got)
				want := createDryRun(t, o.Object())
				if strings.Join(got, "\n") != strings.Join(want.causes, "\n") {
					t.Errorf("errors differ\noffline: %q\nserver:  %q", got, want.causes)
				}
				if strings.Join(offline.Unknown, "\n") != strings.Join(want.unknown, "\n") {
					t.Errorf("unknown fields differ\noffline: %q\nserver:  %q", offline.Unknown, want.unknown)
				}
			})
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d objects checked", checked)
	}
}
