package lintout

import (
	"io"

	"github.com/agpol/agpol/internal/lint"
	textrender "github.com/agpol/agpol/internal/render"
)

// ExplainCheck writes what agpol lint --explain CODE prints: the check's explanation
// and fix.
func ExplainCheck(w io.Writer, c *lint.Check) error {
	_, err := io.WriteString(w, textrender.Reflow(lint.ExplainText(c), textrender.TextWidth))
	return err
}
