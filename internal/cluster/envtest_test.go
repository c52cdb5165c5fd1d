package cluster

// The live tests run ReadLive against a real kube-apiserver and etcd started by envtest.
// The binaries come from hack/testenv (KUBEBUILDER_ASSETS="$(hack/testenv/ensure.sh)", or
// <repo>/bin). Without them the live tests skip, except with CI=true, where they fail.
// The server is started once, on first use, and stopped by TestMain.

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/testsupport/testenv"
)

// examplesDir is the realistic scenario the live tests create in the API server.
const examplesDir = "../../testdata/examples"

var live struct {
	once       sync.Once
	env        *envtest.Environment
	admin      *rest.Config
	kubeconfig string // admin kubeconfig file (context "envtest")
	tmp        string
	err        error // why the live environment is unavailable

	// beforeKuadrant is a read taken before the AuthPolicy CRD was installed.
	beforeKuadrant    *LiveResult
	beforeKuadrantErr error

	seedOnce sync.Once
	seedErr  error
	// inputOnlyOnce creates TestLiveInputOnly's objects once (-count=N).
	inputOnlyOnce sync.Once
	inputOnlyErr  error
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if live.env != nil {
		if err := live.env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stopping the test API server: %v\n", err)
		}
	}
	if live.tmp != "" {
		_ = os.RemoveAll(live.tmp)
	}
	os.Exit(code)
}

// needLive starts the API server on first use. Without it the test is skipped, or
// fails when CI=true.
func needLive(t *testing.T) {
	t.Helper()
	if !testing.Short() {
		live.once.Do(startLive)
	}
	testenv.Need(t, live.err)
}

func startLive() {
	start := time.Now()
	root, err := testenv.RepoRoot()
	if err != nil {
		live.err = err
		return
	}
	assets, err := testenv.AssetsDir()
	if err != nil {
		live.err = err
		return
	}
	gwDir, err := gatewayCRDDir(root)
	if err != nil {
		live.err = err
		return
	}
	logf.SetLogger(logr.Discard())
	timeout := 90 * time.Second
	if s := os.Getenv("KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"); s != "" {
		timeout = 0 // envtest reads it
	}
	crdDir := filepath.Join(root, "config", "crd")
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDInstallOptions: envtest.CRDInstallOptions{
			// The AuthPolicy CRD is installed later, so one read sees it missing.
			Paths: []string{
				gwDir,
				filepath.Join(crdDir, "agentic.networking.x-k8s.io_xaccesspolicies.yaml"),
				filepath.Join(crdDir, "agentic.networking.x-k8s.io_xbackends.yaml"),
			},
			ErrorIfPathMissing: true,
		},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		live.err = fmt.Errorf("starting kube-apiserver and etcd from %s: %w", assets, err)
		return
	}
	live.env, live.admin = env, cfg
	live.tmp, err = os.MkdirTemp("", "agpol-live-")
	if err != nil {
		live.err = err
		return
	}
	live.kubeconfig = filepath.Join(live.tmp, "kubeconfig")
	if err := os.WriteFile(live.kubeconfig, env.KubeConfig, 0o600); err != nil {
		live.err = err
		return
	}

	live.beforeKuadrant, live.beforeKuadrantErr = ReadLive(context.Background(), LiveOptions{Getter: getter("")})
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		Paths:              []string{filepath.Join(crdDir, "kuadrant.io_authpolicies.yaml"), filepath.Join(root, "internal", "cluster", "testdata", "kuadrant.io_kuadrants.yaml")},
		ErrorIfPathMissing: true,
	}); err != nil {
		live.err = fmt.Errorf("installing the AuthPolicy and Kuadrant CRDs: %w", err)
		return
	}
	fmt.Fprintf(os.Stderr, "live: kube-apiserver and etcd from %s up with CRDs in %s\n", assets, time.Since(start).Round(time.Millisecond))
}

// getter returns kubeconfig flags for the test cluster, impersonating user when set,
// as `--kubeconfig FILE [--as USER]` would.
func getter(user string) *genericclioptions.ConfigFlags {
	cf := genericclioptions.NewConfigFlags(false)
	kc := live.kubeconfig
	cf.KubeConfig = &kc
	if user != "" {
		cf.Impersonate = &user
	}
	return cf
}

// gatewayCRDDir is config/crd/standard of the sigs.k8s.io/gateway-api module agpol builds with.
func gatewayCRDDir(root string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating the gateway-api module (go list -m): %w", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "standard")
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("gateway-api CRDs: %w", err)
	}
	return dir, nil
}

// adminClient is a dynamic client and mapper with full rights, for the test's own setup.
// (ReadLive never gets it: it builds its own read-only clients from the getter.)
func adminClient(t *testing.T) (dynamic.Interface, meta.RESTMapper) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(live.admin)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(live.admin)
	if err != nil {
		t.Fatal(err)
	}
	return dyn, restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
}

// create makes objects in the API server (in order) and writes their status, if any.
func create(t *testing.T, objs []*unstructured.Unstructured) error {
	t.Helper()
	dyn, mapper := adminClient(t)
	ctx := t.Context()
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return fmt.Errorf("mapping %s: %w", gvk, err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(m.Resource).Namespace(o.GetNamespace())
		}
		in := o.DeepCopy()
		status, hasStatus := in.Object["status"]
		made, err := ri.Create(ctx, in, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("creating %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
		}
		if hasStatus && gvk.Kind != "Namespace" {
			made.Object["status"] = status
			if _, err := ri.UpdateStatus(ctx, made, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("writing status of %s %s/%s: %w", gvk.Kind, o.GetNamespace(), o.GetName(), err)
			}
		}
	}
	return nil
}

// seedExamples creates the objects of testdata/examples agpol reads in the API server,
// once, and returns them (other documents there, e.g. agpol's own request files, are
// not cluster objects).
func seedExamples(t *testing.T) []RawObject {
	t.Helper()
	objs, err := readExamples()
	if err != nil {
		t.Fatal(err)
	}
	live.seedOnce.Do(func() {
		us := make([]*unstructured.Unstructured, len(objs))
		for i, o := range objs {
			us[i] = o.Object()
		}
		live.seedErr = create(t, us)
	})
	if live.seedErr != nil {
		t.Fatalf("creating the examples in the API server: %v", live.seedErr)
	}
	return objs
}

func readExamples() ([]RawObject, error) {
	objs, _, err := ReadFiles(FileOptions{Filenames: []string{examplesDir}})
	if err != nil {
		return nil, err
	}
	DefaultNamespace(objs, "default")
	known := objs[:0]
	for _, o := range objs {
		gvk := o.Object().GroupVersionKind()
		if _, ok := snapshot.LookupKind(gvk.Group, gvk.Kind); ok {
			known = append(known, o)
		}
	}
	return known, nil
}

// requestLog records requests by method and path; safe for concurrent use.
type requestLog struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (l *requestLog) wrap(next http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.reqs = append(l.reqs, r.Clone(r.Context()))
		l.mu.Unlock()
		return next.RoundTrip(r)
	})
}

func (l *requestLog) byMethod() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, r := range l.reqs {
		out[r.Method]++
	}
	return out
}

func (l *requestLog) matching(f func(*http.Request) bool) []*http.Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []*http.Request
	for _, r := range l.reqs {
		if f(r) {
			out = append(out, r)
		}
	}
	return out
}

// wrappingGetter adds a transport wrapper to the REST config the flags produce, inside
// anything ReadLive adds: it sees only what passed agpol's read-only guard.
type wrappingGetter struct {
	*genericclioptions.ConfigFlags
	wrap func(http.RoundTripper) http.RoundTripper
}

func (g wrappingGetter) ToRESTConfig() (*rest.Config, error) {
	cfg, err := g.ConfigFlags.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(g.wrap)
	return cfg, nil
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
