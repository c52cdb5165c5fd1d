package main

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
	if got := didYouMean("pay/ledger", names); got != "" {
		t.Errorf("an exact name suggests %q", got)
	}
}
