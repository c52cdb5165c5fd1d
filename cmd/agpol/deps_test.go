package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryDependencies keeps test-only modules out of the agpol binary: the
// differential harness links the upstream controller and translator, Envoy's
// go-control-plane and grpc; live tests link envtest. None may reach cmd/agpol.
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
		"github.com/agpol/agpol/internal/differential",
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
