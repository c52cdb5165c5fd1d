package kubectltext_test

import (
	"testing"

	"k8s.io/kubectl/pkg/util/i18n"

	"github.com/agpol/agpol/internal/kubectltext"
	// Translates its help text in package variables, at init.
	_ "k8s.io/kubectl/pkg/cmd/get"
)

// kubectl's get package translated its help text at init, through this package's
// loader: kubectl's catalogue was not loaded, and the text is kubectl's own.
func TestLoaderRanFirst(t *testing.T) {
	if !kubectltext.Installed {
		t.Fatal("kubectl's translations were loaded before kubectltext's loader was installed")
	}
	if got, want := i18n.T("Display one or many resources"), "Display one or many resources"; got != want {
		t.Errorf("i18n.T = %q, want %q", got, want)
	}
}
