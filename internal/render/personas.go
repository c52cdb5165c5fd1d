package render

import (
	"fmt"
	"io"

	"github.com/agpol/agpol/internal/whatif"
)

// PersonaMatrix prints which personas reach each Kuadrant path (matrix --personas):
// a row per path, a column per persona, cells allow, deny 401/403 or ?; json and yaml
// carry the reasons.
func PersonaMatrix(w io.Writer, format string, m *whatif.PersonaMatrix) error {
	switch format {
	case "json":
		return JSON(w, m)
	case "yaml":
		return YAML(w, m)
	case "csv":
		return fmt.Errorf("matrix --personas prints table, markdown, json or yaml")
	}
	w = NewTerminalWriter(w, false)
	if len(m.Rows) == 0 {
		_, err := fmt.Fprintln(w, "No path in the input is protected by a Kuadrant AuthPolicy on a Gateway Kuadrant programs.")
		return err
	}
	t := &Table{Header: append([]string{"PATH", "POLICIES"}, m.Personas...)}
	for _, r := range m.Rows {
		row := []string{r.Path, Join(r.Policies)}
		for _, c := range r.Cells {
			cell := "?"
			switch c.Verdict {
			case "allow":
				cell = "allow"
			case "deny":
				cell = fmt.Sprintf("deny %d", c.Code)
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	if format == "markdown" {
		return t.Markdown(w)
	}
	if err := t.Text(w, TextWidth); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "? is indeterminate; -o json gives each answer's reason (docs/kuadrant-identities.md).")
	return err
}
