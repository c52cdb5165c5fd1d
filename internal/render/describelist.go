package render

import (
	"fmt"
	"io"

	"github.com/agpol/agpol/internal/describe"
)

// DescribeOutput is where and how agpol describe writes its views.
type DescribeOutput struct {
	Out, ErrOut io.Writer
	Format      Format // text, json or yaml
	Color       ColorMode
	// Named is true when one object was named (a document of one view); Namespace is
	// the namespace listed otherwise ("" for every namespace).
	Named     bool
	Namespace string
}

// Describe writes views: as text, two blank lines between them, or as a document.
// When nothing was named and there is no view, "No resources found" goes to stderr
// (and the documents are empty).
func Describe(o DescribeOutput, views []*describe.View) error {
	if !o.Named && len(views) == 0 {
		if o.Namespace == "" {
			fmt.Fprintln(o.ErrOut, "No resources found")
		} else {
			fmt.Fprintf(o.ErrOut, "No resources found in %s namespace.\n", o.Namespace)
		}
	}
	w := o.Out
	if o.Format.Document() {
		return DescribeDocument(w, views, o.Format, o.Named)
	}
	st := Styler{Color: UseColor(o.Color, w)}
	for i, d := range views {
		if i > 0 {
			fmt.Fprintln(w)
			fmt.Fprintln(w)
		}
		if err := DescribeText(w, d, st); err != nil {
			return err
		}
	}
	return nil
}
