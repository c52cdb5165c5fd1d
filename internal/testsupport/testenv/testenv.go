// Package testenv is for tests only: it finds the real kube-apiserver and etcd that
// hack/testenv/ensure.sh builds from their Go modules, and applies the project's rule for
// live tests: skip without them (and in -short mode), but fail when CI=true, so CI can
// never pass by skipping; and it starts the server with controller-runtime's envtest.
package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// AssetsDir returns the directory holding kube-apiserver and etcd: KUBEBUILDER_ASSETS, else
// <repo>/bin. TEST_ASSET_KUBE_APISERVER and TEST_ASSET_ETCD override single binaries, as
// envtest reads them.
func AssetsDir() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin")
	}
	var missing []string
	for name, override := range map[string]string{"kube-apiserver": "TEST_ASSET_KUBE_APISERVER", "etcd": "TEST_ASSET_ETCD"} {
		p := os.Getenv(override)
		if p == "" {
			p = filepath.Join(dir, name)
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return "", fmt.Errorf("no kube-apiserver/etcd binaries (%s missing); build them with "+
			"`hack/testenv/ensure.sh` (a few minutes, once) and run `KUBEBUILDER_ASSETS=\"$(hack/testenv/ensure.sh)\" go test ./...`, or `make test`",
			strings.Join(missing, ", "))
	}
	return dir, nil
}

// Need skips the test in -short mode, and when err (from AssetsDir or starting the server)
// is not nil; under CI=true it fails instead of skipping.
func Need(t testing.TB, err error) {
	t.Helper()
	if testing.Short() {
		t.Skip("live test skipped in -short mode")
	}
	if err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("live test environment unavailable (CI=true, so this fails instead of skipping): %v", err)
	}
	t.Skipf("live test skipped: %v", err)
}

// RepoRoot is the directory of agpol's go.mod, found upwards from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.HasPrefix(string(data), "module github.com/agpol/agpol\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("agpol's go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Start runs kube-apiserver and etcd from assets with the given CRDs installed and stops
// them when the test ends. configure, if not nil, adjusts the environment first (e.g.
// API server flags such as audit logging).
func Start(t testing.TB, assets string, crds []*apiextv1.CustomResourceDefinition, configure func(*envtest.Environment)) (*envtest.Environment, *rest.Config) {
	t.Helper()
	logf.SetLogger(logr.Discard())
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDInstallOptions:        envtest.CRDInstallOptions{CRDs: crds},
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	if configure != nil {
		configure(env)
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop()
		t.Fatalf("starting kube-apiserver: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	return env, cfg
}
