package whatif

import (
	"fmt"
	"testing"

	"github.com/agpol/agpol/internal/explain"
)

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

func TestPrepare(t *testing.T) {
	s := load(t, examples)
	caller, err := explain.ParseCaller("sa:agents/biling")
	if err != nil {
		t.Fatal(err)
	}
	inv := &Inventory{Tools: map[string][]string{"nowhere/none": {"x"}}}
	for _, tc := range []struct {
		name    string
		q       Question
		wantErr string
		want    []Warning
	}{
		{"known names", Question{Filter: Filter{Gateway: "infra/edge", Listener: "https", Backend: "pay/ledger"}, CheckFilter: true, Tool: "refund"}, "", nil},
		{"gateway", Question{Filter: Filter{Gateway: "infra/edg"}, CheckFilter: true}, "--gateway: gateway infra/edg not found in the input; did you mean infra/edge?", nil},
		{"listener", Question{Filter: Filter{Listener: "htps"}, CheckFilter: true}, "--listener: listener htps not found on any gateway; did you mean https?", nil},
		{"filter unchecked", Question{Filter: Filter{Gateway: "nope/nope"}}, "", nil},
		{"caller", Question{Caller: &caller}, "", []Warning{{Kind: UnknownCaller, Source: "--from", Name: "sa:agents/biling", Nearest: "sa:agents/billing"}}},
		{"tool", Question{Tool: "refnd"}, "", []Warning{{Kind: UnknownTool, Source: "--tool", Name: "refnd", Nearest: "refund"}}},
		{"row", Question{Rows: []string{"sa:nobody/here"}}, "", []Warning{{Kind: UnknownRow, Source: "--from", Name: "sa:nobody/here"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warns, err := Prepare(s, reference(), Options{}, tc.q)
			if got := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && got != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if fmt.Sprint(warns) != fmt.Sprint(tc.want) {
				t.Errorf("warnings %+v, want %+v", warns, tc.want)
			}
		})
	}
	_, warns, _ := Prepare(s, reference(), Options{Inventory: inv}, Question{InventoryName: "tools.json"})
	if want := []Warning{{Kind: InventoryBackendUnreached, Source: "tools.json", Name: "nowhere/none"}}; fmt.Sprint(warns) != fmt.Sprint(want) {
		t.Errorf("inventory: %+v, want %+v", warns, want)
	}
}
