package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/whatif"
)

// Every reason a persona is not decided, and a tie answered differently, has its sentence.
func TestPersonaReason(t *testing.T) {
	for _, tc := range []struct {
		cell whatif.PersonaCell
		want string
	}{
		{whatif.PersonaCell{Verdict: "allow", Code: 200, Skip: whatif.PersonaWhenFalse}, "when conditions do not hold: it is skipped"},
		{whatif.PersonaCell{Verdict: "indeterminate", Skip: whatif.PersonaWhenUnknown}, "depends on the request"},
		{whatif.PersonaCell{Verdict: "indeterminate", Skip: whatif.PersonaNoIdentity}, "the persona has no identity"},
		{whatif.PersonaCell{Verdict: "indeterminate", Tied: []whatif.PersonaTie{
			{Path: "a", Policies: []string{"ns/p"}, Verdict: "allow", Code: 200},
			{Path: "b", Policies: []string{"ns/q"}, Verdict: "deny", Code: 403},
		}}, "any of 2 paths for this persona's requests (their wasm action sets tie in kuadrant-operator's order, which is not fixed), and they answer differently: a (AuthPolicy ns/p): allow; b (AuthPolicy ns/q): deny (HTTP 403)"},
	} {
		if got := personaReason(tc.cell); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want it to say %q", tc.cell, got, tc.want)
		}
	}
}
