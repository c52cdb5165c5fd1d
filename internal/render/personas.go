package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/agpol/agpol/internal/whatif"
)

// PersonaMatrix prints which personas reach each Kuadrant path (matrix --personas):
// a row per path, a column per persona, cells allow, deny 401/403 or ?; json and yaml
// carry the reasons.
func PersonaMatrix(w io.Writer, format Format, m *whatif.PersonaMatrix) error {
	if format.Document() {
		return format.Encode(w, personaMatrixView(m))
	}
	if format == FormatCSV {
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
	if format == FormatMarkdown {
		return t.Markdown(w)
	}
	if err := t.Text(w, TextWidth); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "? is indeterminate; -o json gives each answer's reason (docs/kuadrant-identities.md).")
	return err
}

// PersonaWhoCan prints, for each Kuadrant path, which personas Authorino lets through
// (who-can --personas): allowed, denied with the status, and those it cannot decide.
func PersonaWhoCan(w io.Writer, format Format, m *whatif.PersonaMatrix) error {
	if format.Document() {
		return format.Encode(w, personaMatrixView(m))
	}
	w = NewTerminalWriter(w, false)
	for i, r := range m.Rows {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		var allowed, denied, unknown []string
		for _, c := range r.Cells {
			switch c.Verdict {
			case "allow":
				allowed = append(allowed, c.Persona)
			case "deny":
				denied = append(denied, fmt.Sprintf("%s (%d)", c.Persona, c.Code))
			default:
				unknown = append(unknown, c.Persona)
			}
		}
		if _, err := fmt.Fprintf(w, "%s\n  policies:      %s\n  allowed:       %s\n  denied:        %s\n  indeterminate: %s\n",
			r.Path, Join(r.Policies), Join(allowed), Join(denied), Join(unknown)); err != nil {
			return err
		}
	}
	return nil
}

// PersonaCanI prints one persona's answer (can-i --personas): yes, no or indeterminate,
// then the answer on each path.
func PersonaCanI(w io.Writer, format Format, a *whatif.PersonaAnswer) error {
	if format.Document() {
		return format.Encode(w, personaAnswerView(a))
	}
	w = NewTerminalWriter(w, false)
	head := map[string]string{"allow": "yes", "deny": "no"}[a.Verdict]
	if head == "" {
		head = "indeterminate"
	}
	if _, err := fmt.Fprintln(w, head); err != nil {
		return err
	}
	for _, p := range a.Paths {
		v := p.Verdict
		if p.Verdict == "deny" {
			v = fmt.Sprintf("deny %d", p.Code)
		}
		why := wrapLine("    "+personaReason(p.PersonaCell), TextWidth)
		if _, err := fmt.Fprintf(w, "  %s: %s (%s)\n%s\n", p.Path, v, Join(p.Policies), why); err != nil {
			return err
		}
	}
	return nil
}

// personaReason is the reason of a persona's answer: Authorino's, written from its data,
// or why the persona is not decided.
func personaReason(c whatif.PersonaCell) string {
	switch c.Skip {
	case whatif.PersonaWhenFalse:
		return "the policy's when conditions do not hold: it is skipped"
	case whatif.PersonaWhenUnknown:
		return "whether the policy's when conditions hold depends on the request"
	case whatif.PersonaNoIdentity:
		return "the persona has no identity"
	}
	if c.Why != nil {
		return AuthorinoText(*c.Why)
	}
	if len(c.Tied) > 0 && c.Verdict == "indeterminate" {
		return personaTiedText(c.Tied)
	}
	return c.Reason
}

// personaMatrixView is a copy of m with each cell's reason written, as json and yaml show it.
func personaMatrixView(m *whatif.PersonaMatrix) *whatif.PersonaMatrix {
	v := *m
	v.Rows = make([]whatif.PersonaRow, len(m.Rows))
	for i, r := range m.Rows {
		cells := make([]whatif.PersonaCell, len(r.Cells))
		for j, c := range r.Cells {
			c.Reason = personaReason(c)
			cells[j] = c
		}
		r.Cells = cells
		v.Rows[i] = r
	}
	if m.Rows == nil {
		v.Rows = nil
	}
	return &v
}

// personaAnswerView is a copy of a with each path's reason written.
func personaAnswerView(a *whatif.PersonaAnswer) *whatif.PersonaAnswer {
	v := *a
	if a.Paths != nil {
		v.Paths = make([]whatif.PersonaPathCell, len(a.Paths))
		for i, p := range a.Paths {
			p.Reason = personaReason(p.PersonaCell)
			v.Paths[i] = p
		}
	}
	return &v
}

// personaTiedText is the reason of a persona's answer that depends on which of tied
// paths' AuthConfigs the wasm-shim runs (whatif.PersonaCell.Tied).
func personaTiedText(tied []whatif.PersonaTie) string {
	parts := make([]string, len(tied))
	for i, t := range tied {
		v := t.Verdict
		if t.Code != 0 && t.Verdict != "allow" {
			v = fmt.Sprintf("%s (HTTP %d)", v, t.Code)
		}
		parts[i] = fmt.Sprintf("%s (AuthPolicy %s): %s", t.Path, Join(t.Policies), v)
	}
	return fmt.Sprintf("Kuadrant may run the AuthPolicy of any of %d paths for this persona's requests (their wasm action sets tie in kuadrant-operator's order, which is not fixed), and they answer differently: %s",
		len(tied), strings.Join(parts, "; "))
}
