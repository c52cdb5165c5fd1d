// Package kubectltext stops kubectl's packages from loading their message translations
// when agpol starts. agpol links k8s.io/kubectl/pkg/cmd/get for its printers (-o
// custom-columns and the other kubectl formats of agpol get), and that package
// translates kubectl get's help text in its package variables, which loads and parses
// kubectl's catalogue of translations (k8s.io/kubectl/pkg/util/i18n) on every run,
// `agpol version` included. agpol prints none of kubectl's translated text, so it
// installs a loader that loads none, through the hook kubectl provides for this
// (i18n.SetLoadTranslationsFunc, which must run before any package calls i18n.T).
//
// Go initializes the packages a program links in the order of their import paths,
// each after those it imports (the Go specification, "Package initialization"): this
// package imports only i18n, and its path sorts before every k8s.io package, so it
// runs as soon as i18n is initialized, before any kubectl package that translates.
package kubectltext

import "k8s.io/kubectl/pkg/util/i18n"

// Installed reports whether this package's loader was the one that ran: kubectl's
// catalogue was not loaded.
var Installed bool

func init() {
	// An error means the translations were loaded before this init: agpol then runs as
	// it would without this package (slower to start, the same output), and
	// TestLoaderRanFirst fails.
	_ = i18n.SetLoadTranslationsFunc(func() error {
		Installed = true
		return nil
	})
}
