package render

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective/authpolicy"
)

// TestLostText writes why a rule lost in the fold for every authpolicy Lost code: a code
// without a sentence here (the "lost: CODE" fallback) fails; the view writes Reason and
// leaves the fold's data as it was.
func TestLostText(t *testing.T) {
	want := map[string]string{
		authpolicy.LostAtomicDefaultsKeptLower: "atomic defaults kept the lower policy",
		authpolicy.LostAtomicDefaultsFilled:    "atomic defaults replaced a lower policy without rules",
		authpolicy.LostAtomicOverridesReplaced: "atomic overrides replaced it",
		authpolicy.LostMergeDefaultsKeptLower:  "merge kept the lower rule of the same name",
		authpolicy.LostMergeOverridesReplaced:  "merge overrides replaced the rule of the same name",
	}
	for _, code := range authpolicy.LostCodes {
		w, ok := want[code]
		if !ok {
			t.Errorf("code %q: no case in this test", code)
			continue
		}
		if got := LostText(code); strings.HasPrefix(got, "lost: ") {
			t.Errorf("code %q has no sentence in render", code)
		} else if got != w {
			t.Errorf("code %q: %q, want %q", code, got, w)
		}
	}
	if len(want) != len(authpolicy.LostCodes) {
		t.Errorf("%d cases, %d codes", len(want), len(authpolicy.LostCodes))
	}
	ls := []authpolicy.Lost{{Key: "authentication#a", Code: authpolicy.LostMergeOverridesReplaced}}
	if v := lostView(ls); v[0].Reason != want[authpolicy.LostMergeOverridesReplaced] || ls[0].Reason != "" {
		t.Errorf("view %+v, data %+v", v, ls)
	}
}
