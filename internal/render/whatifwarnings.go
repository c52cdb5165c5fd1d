package render

import (
	"fmt"
	"io"

	"github.com/agpol/agpol/internal/whatif"
)

// WhatifWarnings writes, one line each, the names of a what-if question that its
// decision space does not hold.
func WhatifWarnings(w io.Writer, warns []whatif.Warning) {
	for _, x := range warns {
		suggest := ""
		if x.Nearest != "" {
			suggest = "; did you mean " + x.Nearest + "?"
		}
		switch x.Kind {
		case whatif.InventoryBackendUnreached:
			fmt.Fprintf(w, "warning: %s: backend %q is not reached by any route of the input\n", x.Source, x.Name)
		case whatif.UnknownCaller:
			fmt.Fprintf(w, "warning: %s %s appears in no policy and no ServiceAccount of the input: answered as for any caller no rule names%s\n", x.Source, x.Name, suggest)
		case whatif.UnknownTool:
			fmt.Fprintf(w, "warning: %s %s appears in no policy and no tools inventory: answered as for any tool no policy names%s\n", x.Source, x.Name, suggest)
		case whatif.UnknownRow:
			fmt.Fprintf(w, "warning: %s %s is no identity of the decision space: it selects no row%s\n", x.Source, x.Name, suggest)
		}
	}
}

// CanINoTarget writes can-i's answer when no path of the space takes the call: "no"
// and why.
func CanINoTarget(w io.Writer, why error) error {
	_, err := fmt.Fprintf(w, "no - %v\n", why)
	return err
}
