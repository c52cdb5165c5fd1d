package lint

import "testing"

// Summary.String counts in English: "1 error", never "1 errors".
func TestSummaryString(t *testing.T) {
	for _, tc := range []struct {
		s    Summary
		want string
	}{
		{Summary{Errors: 1, Warnings: 1}, "1 error, 1 warning, 0 info"},
		{Summary{Errors: 2, Warnings: 0, Info: 1, Suppressed: 3}, "2 errors, 0 warnings, 1 info, 3 suppressed"},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.s, got, tc.want)
		}
	}
}
