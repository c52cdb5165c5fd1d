package explain

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
)

// A request naming a gateway, route or backend whose kind could not be read is
// indeterminate (unread-objects), in Explain (emitting or not) and Decider alike; one whose
// kind was read and that is not there is an input error.
func TestNamedObjectNotRead(t *testing.T) {
	s := loadYAML(t, `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: other, namespace: infra}
spec:
  gatewayClassName: agentic
  listeners: [{name: http, protocol: HTTP, port: 80}]`)
	req := func() *Request {
		return &Request{Name: "r", From: Caller{Kind: CallerAnonymous}, Gateway: &NamespacedName{Namespace: "infra", Name: "edge"},
			HTTP: HTTP{Method: "GET", Path: "/mcp"}, Expect: Allow}
	}
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	if _, err := sim.Explain(Full, req()); err == nil || !strings.Contains(err.Error(), "gateway infra/edge not found") {
		t.Fatalf("complete read: err %v, want not found", err)
	}
	s.Partial = true
	s.Warnings = append(s.Warnings, snapshot.Warning{Kind: gatewaysResource, Message: "listing gateways: forbidden"})
	sim = New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	check := func(how string, d Decision) {
		t.Helper()
		if d.Verdict != Indeterminate || d.DecidedBy != UnreadBy {
			t.Errorf("%s: %s by %s, want indeterminate by %s", how, d.Verdict, d.DecidedBy, UnreadBy)
		}
	}
	res, err := sim.Explain(Full, req())
	if err != nil || len(res) != 1 {
		t.Fatalf("Explain: %v %v", res, err)
	}
	check("Explain", res[0].Decision)
	if x := res[0].Expect; x == nil || x.Passed {
		t.Errorf("expectation %+v: an expected allow fails on an unread gateway", x)
	}
	if c := res[0].Cause; res[0].Reason != "" || c == nil || c.Event != CauseNotRead || c.Object != "gateway infra/edge" ||
		len(c.Unread) != 1 || c.Unread[0].Kind != gatewaysResource {
		t.Errorf("reason %q, cause %+v: want the cause %s naming gateway infra/edge and %s as data", res[0].Reason, res[0].Cause, CauseNotRead, gatewaysResource)
	}
	n := 0
	each := Full
	each.Emit = func(r *Result) error { n++; check("Explain with Emit", r.Decision); return nil }
	if _, err := sim.Explain(each, req(), req()); err != nil || n != 2 {
		t.Errorf("Explain with Emit: %d results, %v", n, err)
	}
	ds, err := sim.Decider().Decide(req())
	if err != nil || len(ds) != 1 {
		t.Fatalf("Decider: %v %v", ds, err)
	}
	check("Decider", ds[0])
}

// A request naming an object that is not there says what the user probably meant: the
// same NAME in another namespace, an object of another kind with its flag, a close name.
func TestNotFoundHints(t *testing.T) {
	sim := New(model.New(loadYAML(t, baseTopology)), []effective.Semantics{effective.Reference()}, "")
	for _, tc := range []struct {
		name string
		edit func(r *Request)
		want string
	}{
		{"gateway without its namespace", func(r *Request) { r.Gateway = &NamespacedName{"default", "gw"} },
			"gateway default/gw not found; did you mean gw/gw?"},
		{"route given as backend", func(r *Request) { r.Backend = &NamespacedName{"app", "r"} },
			"xbackend app/r not found; httproute app/r is a route; did you mean --route app/r?"},
		{"service given as backend", func(r *Request) { r.Backend = &NamespacedName{"app", "svc"} },
			"xbackend app/svc not found; service app/svc is a Service; did you mean --service app/svc?"},
		{"typo in a backend", func(r *Request) { r.Backend = &NamespacedName{"app", "xbb"} },
			"xbackend app/xbb not found; did you mean app/xb?"},
		{"route without its namespace", func(r *Request) { r.Backend = nil; r.Route = &NamespacedName{"default", "r"} },
			"httproute default/r not found; did you mean app/r?"},
		{"typo in a listener", func(r *Request) { r.Listener = "htps" },
			`gateway gw/gw has no listener "htps"; did you mean https?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := call("a", "t")
			tc.edit(r)
			_, err := sim.Explain(Full, r)
			if err == nil || err.Error() != "invalid request: "+tc.want {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// A request that names a route and a path another route takes is an input error naming
// both routes, read from topology's Unresolved (the named route, where the path goes).
func TestRoutesElsewhere(t *testing.T) {
	other := `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: other, namespace: app}
spec:
  parentRefs: [{name: gw, namespace: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /other}}]
    backendRefs: [{name: svc, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /more}}]
    backendRefs: [{name: svc, port: 80}]
`
	sim := New(model.New(loadYAML(t, baseTopology, other)), []effective.Semantics{effective.Reference()}, "")
	r := call("a", "t")
	r.Backend, r.Route, r.HTTP.Path = nil, &NamespacedName{"app", "r"}, "/other"
	_, err := sim.Explain(Full, r)
	const want = "invalid request: the request routes to app/other, not to app/r; give --backend or --service"
	if err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
}
