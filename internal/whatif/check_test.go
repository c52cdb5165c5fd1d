package whatif

import "testing"

func TestNearest(t *testing.T) {
	names := []string{"pay/ledger", "tools/calc", "infra/edge", "sa:agents/billing", "sa:agents/support", "add", "refund"}
	for _, tc := range []struct{ in, want string }{
		{"pay/ledgr", "pay/ledger"},
		{"Pay/Ledger", "pay/ledger"},
		{"tools/calk", "tools/calc"},
		{"infra/edg", "infra/edge"},
		{"sa:agents/biling", "sa:agents/billing"},
		{"refnd", "refund"},
		{"ad", "add"},
		{"pay/ledger", "pay/ledger"},
		{"x", ""},
		{"nothing/here", ""},
		{"sa:other/billing", ""},
	} {
		if got := nearest(tc.in, names); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := didYouMean("pay/ledger", nearest("pay/ledger", names)); got != "" {
		t.Errorf("an exact name suggests %q", got)
	}
}

func TestDiffFails(t *testing.T) {
	c := &Change{}
	for _, tc := range []struct {
		d      DiffResult
		failOn string
		want   bool
	}{
		{DiffResult{Granted: []*Change{c}}, "granted", true},
		{DiffResult{Granted: []*Change{c}}, "revoked", false},
		{DiffResult{Revoked: []*Change{c}}, "revoked", true},
		{DiffResult{DecidedBy: []*Change{c}}, "granted", false},
		{DiffResult{DecidedBy: []*Change{c}}, "any", true},
		{DiffResult{}, "any", false},
		{DiffResult{Granted: []*Change{c}}, "none", false},
	} {
		if got := tc.d.Fails(tc.failOn); got != tc.want {
			t.Errorf("%+v.Fails(%q) = %v, want %v", tc.d, tc.failOn, got, tc.want)
		}
	}
}

func TestNotFoundError(t *testing.T) {
	for _, tc := range []struct {
		err  *NotFoundError
		want string
	}{
		{&NotFoundError{Flag: "--gateway", What: "gateway", Name: "infra/edg", Where: "the input", Nearest: "infra/edge"},
			"--gateway: gateway infra/edg not found in the input; did you mean infra/edge?"},
		{&NotFoundError{Flag: "--listener", What: "listener", Name: "x", Where: "any gateway"},
			"--listener: listener x not found on any gateway"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
