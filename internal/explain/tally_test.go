package explain

import "testing"

func TestOverall(t *testing.T) {
	res := func(primary bool, v string) *Result {
		r := &Result{Primary: primary}
		r.Verdict = v
		return r
	}
	for _, tc := range []struct {
		name    string
		results []*Result
		want    string
	}{
		{"none", nil, Allow},
		{"allow", []*Result{res(true, Allow)}, Allow},
		{"deny wins", []*Result{res(true, Indeterminate), res(true, Deny), res(true, Allow)}, Deny},
		{"indeterminate", []*Result{res(true, Allow), res(true, Indeterminate)}, Indeterminate},
		{"other semantics ignored", []*Result{res(true, Allow), res(false, Deny)}, Allow},
	} {
		if got := Overall(tc.results); got != tc.want {
			t.Errorf("%s: Overall = %q, want %q", tc.name, got, tc.want)
		}
	}
}
