package render

import (
	"fmt"
	"strings"

	"github.com/agpol/agpol/internal/explain"
)

// authPolicyTiedText is the sentence of a request whose path's wasm action set ties
// with other paths' in kuadrant-operator's order (explain.CauseAuthPolicyTied,
// EventAuthPolicyTiedSame; docs/semantics.md#kuadrant-tied); "" for another event.
func authPolicyTiedText(event string, a *explain.AuthPolicyCause) string {
	if event != explain.CauseAuthPolicyTied && event != explain.EventAuthPolicyTiedSame {
		return ""
	}
	answers := make([]string, len(a.Tied))
	for i, t := range a.Tied {
		answers[i] = fmt.Sprintf("%s (AuthPolicy %s): %s", EscapeTerminal(t.Path), EscapeTerminal(strings.Join(t.Policies, ", ")), t.Verdict)
		if t.Code != 0 {
			answers[i] += fmt.Sprintf(" (HTTP %d)", t.Code)
		}
	}
	why := fmt.Sprintf("Kuadrant may run the AuthPolicy of any of %d paths for this request (their wasm action sets tie in kuadrant-operator's order, which is not fixed)", len(a.Tied))
	if event == explain.CauseAuthPolicyTied {
		return why + ", and they answer differently: " + strings.Join(answers, "; ")
	}
	return why + ", and every one answers the same: " + strings.Join(answers, "; ")
}
