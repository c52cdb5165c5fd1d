package render

import (
	"fmt"
	"io"

	"github.com/agpol/agpol/internal/lint"
)

// LintNotes writes what agpol lint says on stderr besides its report: that nothing was
// read from source, and how many objects read from the cluster were not validated
// again (not for json and sarif, whose reports carry the count).
func LintNotes(w io.Writer, format Format, source string, n lint.Notes) {
	if n.NothingRead {
		fmt.Fprintf(w, "note: no objects read from %s: nothing to lint\n", source)
	}
	if n.NotRevalidated > 0 && format != FormatJSON && format != FormatSARIF {
		objects := "objects"
		if n.NotRevalidated == 1 {
			objects = "object"
		}
		fmt.Fprintf(w, "note: %d %s read from the cluster not validated again against agpol's CRDs (the API server validated them when it stored them); --revalidate-live validates them\n",
			n.NotRevalidated, objects)
	}
}
