package suggest

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
		if got := Nearest(tc.in, names); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := NearestOther("pay/ledger", names); got != "" {
		t.Errorf("an exact name suggests %q", got)
	}
}

func TestHint(t *testing.T) {
	objs := []Object{
		{"gateway", "infra", "edge"}, {"gateway", "prod", "edge"}, {"gateway", "infra", "internal"},
		{"httproute", "pay", "x"}, {"xbackend", "pay", "ledger"}, {"service", "tools", "docs"},
		{"listener", "", "https"}, {"listener", "", "http"},
	}
	flag := func(o Object) string {
		switch o.Kind {
		case "httproute":
			return "--route " + o.ID()
		case "gateway":
			return "--gateway " + o.ID()
		}
		return ""
	}
	backend := []string{"xbackend", "service"}
	for _, tc := range []struct {
		name string
		q    Query
		want string
	}{
		{"other namespaces", Query{Kinds: []string{"gateway"}, Namespace: "default", Name: "edge"}, "did you mean infra/edge or prod/edge?"},
		{"one other namespace", Query{Kinds: backend, Namespace: "default", Name: "ledger"}, "did you mean pay/ledger?"},
		{"route as backend", Query{Kinds: backend, Namespace: "pay", Name: "x", Ask: flag}, "httproute pay/x is a route; did you mean --route pay/x?"},
		{"route as backend, other namespace", Query{Kinds: backend, Namespace: "default", Name: "x", Ask: flag}, "httproute pay/x is a route; did you mean --route pay/x?"},
		{"route as backend, command without --route", Query{Kinds: backend, Namespace: "pay", Name: "x"}, ""},
		{"typo", Query{Kinds: []string{"gateway"}, Namespace: "infra", Name: "internl"}, "did you mean infra/internal?"},
		{"every namespace, typo", Query{Kinds: []string{"gateway"}, Name: "edgee"}, "did you mean infra/edge or prod/edge?"},
		{"every namespace, route as backend", Query{Kinds: backend, Name: "x", Ask: flag}, "httproute pay/x is a route; did you mean --route pay/x?"},
		{"nothing close", Query{Kinds: []string{"gateway"}, Namespace: "a", Name: "b"}, ""},
		{"listener, typo", Query{Kinds: []string{"listener"}, Name: "htps"}, "did you mean https?"},
		{"listener, none close", Query{Kinds: []string{"listener"}, Name: "grpc"}, ""},
		{"kind not asked for", Query{Kinds: []string{"service"}, Namespace: "pay", Name: "ledgr"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Hint(tc.q, objs); got != tc.want {
				t.Errorf("Hint = %q, want %q", got, tc.want)
			}
		})
	}
}
