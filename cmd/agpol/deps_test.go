package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryDependencies keeps test-only modules out of the agpol binary: the
// differential harness links the upstream controller and translator, Envoy's
// go-control-plane and grpc; live tests link envtest; the Kuadrant harness talks to
// kuadrant-operator and Authorino (a module of their own). None may reach cmd/agpol.
func TestBinaryDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"github.com/envoyproxy/go-control-plane",
		"google.golang.org/grpc",
		"sigs.k8s.io/controller-runtime",
		"sigs.k8s.io/controller-runtime/pkg/envtest",
		"k8s.io/kubernetes",
		"sigs.k8s.io/kube-agentic-networking/pkg/",
		"github.com/agpol/agpol/internal/testsupport/", // differential, kuadrantdiff, difftest, testenv
		"github.com/kuadrant/",
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, d := range deps {
		for _, f := range forbidden {
			if d == f || strings.HasPrefix(d, strings.TrimSuffix(f, "/")+"/") {
				t.Errorf("cmd/agpol links %s (forbidden: %s)", d, f)
			}
		}
	}
}

// TestLayering keeps the one-way flow of the architecture (docs/architecture.md):
// render prints and never reads a cluster (it links client-go's jsonpath only through
// cli-runtime's printers); the deciding packages never print.
func TestLayering(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	const mod = "github.com/agpol/agpol/internal/"
	rules := []struct {
		pkg       string
		forbidden []string
	}{
		{"render", []string{mod + "cluster", "k8s.io/client-go/dynamic", "k8s.io/client-go/kubernetes", "k8s.io/client-go/rest", "k8s.io/client-go/discovery"}},
		{"effective", []string{mod + "render"}},
		{"explain", []string{mod + "render"}},
		{"whatif", []string{mod + "render"}},
		{"lint", []string{mod + "render"}},
		{"config", []string{mod + "lint", mod + "render", mod + "cluster"}},
		{"describe", []string{mod + "render", mod + "cluster"}},
		{"model", []string{mod + "explain", mod + "whatif", mod + "lint", mod + "describe", mod + "render", mod + "cluster"}},
		{"topology", []string{mod + "effective", mod + "explain", mod + "render", mod + "cluster"}},
		{"snapshot", []string{mod + "topology", mod + "effective", mod + "render", mod + "cluster"}},
	}
	for _, r := range rules {
		out, err := exec.Command(goBin, "list", "-deps", "../../internal/"+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", r.pkg, err)
		}
		for _, d := range strings.Fields(string(out)) {
			for _, f := range r.forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("internal/%s depends on %s", r.pkg, d)
				}
			}
		}
	}
}
