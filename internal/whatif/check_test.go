package whatif

import (
	"fmt"
	"testing"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/model"
)

func TestDiffFails(t *testing.T) {
	one := func() (c Changes) { c.add(&Caller{ID: "anonymous"}, []*Change{{}}); return }
	for _, tc := range []struct {
		d      DiffResult
		failOn string
		want   bool
	}{
		{DiffResult{Granted: one()}, "granted", true},
		{DiffResult{Granted: one()}, "revoked", false},
		{DiffResult{Revoked: one()}, "revoked", true},
		{DiffResult{DecidedBy: one()}, "granted", false},
		{DiffResult{DecidedBy: one()}, "any", true},
		{DiffResult{}, "any", false},
		{DiffResult{Granted: one()}, "none", false},
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
		{&NotFoundError{Flag: "--gateway", What: "gateway", Name: "infra/edg", Where: "the input", Hint: "did you mean infra/edge?"},
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
		{"gateway in another namespace", Question{Filter: Filter{Gateway: "default/edge"}, CheckFilter: true}, "--gateway: gateway default/edge not found in the input; did you mean infra/edge?", nil},
		{"backend in another namespace", Question{Filter: Filter{Backend: "default/ledger"}, CheckFilter: true}, "--backend: backend default/ledger not found in the input; did you mean pay/ledger?", nil},
		{"route as backend", Question{Filter: Filter{Backend: "tools/tools"}, CheckFilter: true}, "--backend: backend tools/tools not found in the input; httproute tools/tools is a route; did you mean --backend tools/calc or tools/docs-mcp (the backends it reaches)?", nil},
		{"backend as gateway", Question{Filter: Filter{Gateway: "pay/ledger-mcp"}, CheckFilter: true}, "--gateway: gateway pay/ledger-mcp not found in the input; service pay/ledger-mcp is a Service; did you mean --backend pay/ledger-mcp?", nil},
		{"listener", Question{Filter: Filter{Listener: "htps"}, CheckFilter: true}, "--listener: listener htps not found on any gateway; did you mean https?", nil},
		{"filter unchecked", Question{Filter: Filter{Gateway: "nope/nope"}}, "", nil},
		{"caller", Question{Caller: &caller}, "", []Warning{{Kind: UnknownCaller, Source: "--from", Name: "sa:agents/biling", Nearest: "sa:agents/billing"}}},
		{"tool", Question{Tool: "refnd"}, "", []Warning{{Kind: UnknownTool, Source: "--tool", Name: "refnd", Nearest: "refund"}}},
		{"row", Question{Rows: []string{"sa:nobody/here"}}, "", []Warning{{Kind: UnknownRow, Source: "--from", Name: "sa:nobody/here"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, warns, err := Prepare(model.New(s), reference(), Options{}, tc.q)
			if got := fmt.Sprint(err); (tc.wantErr == "" && err != nil) || (tc.wantErr != "" && got != tc.wantErr) {
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
			if fmt.Sprint(warns) != fmt.Sprint(tc.want) {
				t.Errorf("warnings %+v, want %+v", warns, tc.want)
			}
		})
	}
	_, warns, _ := Prepare(model.New(s), reference(), Options{Inventory: inv}, Question{InventoryName: "tools.json"})
	if want := []Warning{{Kind: InventoryBackendUnreached, Source: "tools.json", Name: "nowhere/none"}}; fmt.Sprint(warns) != fmt.Sprint(want) {
		t.Errorf("inventory: %+v, want %+v", warns, want)
	}
}
