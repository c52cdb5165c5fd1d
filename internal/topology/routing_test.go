package topology

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/agpol/agpol/internal/cluster"
)

type routeCase struct {
	name string
	req  RouteRequest
	// want
	listener      string
	route         string // "ns/name", "" when nothing matches
	rule          string // rule name
	matchIndex    int
	hostname      string     // virtual host domain, checked when set
	routeListener string     // checked when set
	miss          *RouteMiss // Miss when route == ""
	ignoredMethod string     // the method of the match the data plane passed over
}

// checkTerse checks that RouteInto with Terse, into a result that held another
// request's, routes req as Route did (res), without a reason, and allocates nothing
// when a rule serves the request.
func checkTerse(t *testing.T, g *Graph, req RouteRequest, res *RouteResult) {
	t.Helper()
	terse := req
	terse.Terse = true
	got := RouteResult{Listener: "stale", Miss: &RouteMiss{Why: "stale"}, Backends: []BackendTarget{{}}}
	if err := g.RouteInto(&terse, &got); err != nil {
		t.Fatal(err)
	}
	want := *res
	want.Miss = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("terse RouteInto:\n got  %+v\n want %+v", got, want)
	}
	if res.Route != nil {
		if n := testing.AllocsPerRun(20, func() { _ = g.RouteInto(&terse, &got) }); n != 0 {
			t.Errorf("RouteInto allocates %.0f times per request", n)
		}
	}
}

func runRouteCases(t *testing.T, g *Graph, cases []routeCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if tt.req.Method == "" {
				tt.req.Method = "GET"
			}
			res, err := g.Route(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			checkTerse(t, g, tt.req, res)
			if res.Listener != tt.listener {
				t.Errorf("listener = %q, want %q (miss %+v)", res.Listener, tt.listener, res.Miss)
			}
			got := ""
			if res.Route != nil {
				got = res.Route.Namespace + "/" + res.Route.Name
			}
			if got != tt.route {
				t.Fatalf("route = %q, want %q (miss %+v)", got, tt.route, res.Miss)
			}
			if tt.route == "" {
				if tt.miss == nil || !reflect.DeepEqual(res.Miss, tt.miss) {
					t.Errorf("miss = %+v, want %+v", res.Miss, tt.miss)
				}
				return
			}
			if res.Miss != nil {
				t.Errorf("miss = %+v on a match", res.Miss)
			}
			if res.RuleName != tt.rule || res.MatchIndex != tt.matchIndex {
				t.Errorf("rule = %q match %d, want %q match %d", res.RuleName, res.MatchIndex, tt.rule, tt.matchIndex)
			}
			if rules := res.Route.Spec.Rules; res.RuleIndex < 0 || res.RuleIndex >= len(rules) ||
				(rules[res.RuleIndex].Name != nil && string(*rules[res.RuleIndex].Name) != res.RuleName) {
				t.Errorf("rule index %d does not name rule %q", res.RuleIndex, res.RuleName)
			}
			if tt.hostname != "" && res.Hostname != tt.hostname {
				t.Errorf("hostname = %q, want %q", res.Hostname, tt.hostname)
			}
			if res.IgnoredMethod != tt.ignoredMethod {
				t.Errorf("ignored method = %q, want %q", res.IgnoredMethod, tt.ignoredMethod)
			}
			if tt.routeListener != "" && res.RouteListener != tt.routeListener {
				t.Errorf("route listener = %q, want %q", res.RouteListener, tt.routeListener)
			}
		})
	}
}

func TestListenerSelection(t *testing.T) {
	g := loadGraph(t, "routing.yaml")
	gw := GatewayRef("infra", "gw")
	runRouteCases(t, g, []routeCase{
		{name: "exact listener beats wildcard and any", req: RouteRequest{Gateway: gw, Host: "api.example.com", Path: "/"},
			listener: "exact", route: "app/api-route", hostname: "api.example.com", routeListener: "exact"},
		{name: "wildcard", req: RouteRequest{Gateway: gw, Host: "foo.example.com", Path: "/x"},
			listener: "wild", route: "app/wild-route", hostname: "*.example.com"},
		{name: "wildcard spans labels", req: RouteRequest{Gateway: gw, Host: "a.b.example.com", Path: "/x"},
			listener: "wild", route: "app/wild-route"},
		{name: "longer wildcard wins", req: RouteRequest{Gateway: gw, Host: "x.deep.example.com", Path: "/x"},
			listener: "deep", route: "app/deep-route", hostname: "*.deep.example.com"},
		{name: "parent domain is not under the wildcard", req: RouteRequest{Gateway: gw, Host: "example.com", Path: "/"},
			listener: "any", route: "app/catch-route", hostname: "*"},
		{name: "port given", req: RouteRequest{Gateway: gw, Port: 8080, Host: "api.example.com", Path: "/"},
			listener: "any", route: "app/catch-route"},
		{name: "port from host", req: RouteRequest{Gateway: gw, Host: "api.example.com:8080", Path: "/"},
			listener: "any", route: "app/catch-route"},
		{name: "host port without a listener is ignored", req: RouteRequest{Gateway: gw, Host: "api.example.com:9999", Path: "/"},
			listener: "exact", route: "app/api-route"},
		{name: "port with no matching listener", req: RouteRequest{Gateway: gw, Port: 80, Host: "example.com", Path: "/"},
			miss: &RouteMiss{Why: MissNoListener, Gateway: gw, Port: 80, Host: "example.com", PlainHTTPPort: 80}},
		// Listeners on one port share the route table (reference): the wild listener takes
		// api.example.com when asked to, and serves the route attached to exact.
		{name: "shared port route table", req: RouteRequest{Gateway: gw, Listener: "wild", Host: "api.example.com", Path: "/"},
			listener: "wild", route: "app/api-route", routeListener: "exact"},
		{name: "unknown listener", req: RouteRequest{Gateway: gw, Listener: "nope", Host: "api.example.com", Path: "/"},
			miss: &RouteMiss{Why: MissNoListenerNamed, Gateway: gw, Listener: "nope", Host: "api.example.com"}},
		{name: "listener hostname mismatch", req: RouteRequest{Gateway: gw, Listener: "exact", Host: "foo.example.com", Path: "/"},
			miss: &RouteMiss{Why: MissListenerHost, Gateway: gw, Listener: "exact", ListenerHost: "api.example.com", Host: "foo.example.com", PlainHTTPPort: 80}},
		{name: "listener port mismatch", req: RouteRequest{Gateway: gw, Listener: "exact", Port: 8080, Host: "api.example.com", Path: "/"},
			miss: &RouteMiss{Why: MissListenerPort, Gateway: gw, Listener: "exact", ListenerPort: 80, Port: 8080, Host: "api.example.com"}},
		// Route hostnames on a listener without hostname: exact, wildcard, then "*".
		{name: "exact route hostname", req: RouteRequest{Gateway: gw, Host: "www.shop.org", Path: "/cart"},
			listener: "any", route: "app/shop-exact", hostname: "www.shop.org"},
		{name: "no fall-through to a less specific host", req: RouteRequest{Gateway: gw, Host: "www.shop.org", Path: "/only-wild"},
			listener: "any", miss: &RouteMiss{Why: MissNoRule, Gateway: gw, Host: "www.shop.org", Routes: []string{"app/shop-exact"}, VirtualHost: "www.shop.org", Method: "GET", Path: "/only-wild"}},
		{name: "wildcard route hostname", req: RouteRequest{Gateway: gw, Host: "a.shop.org", Path: "/only-wild/x"},
			listener: "any", route: "app/only-wild", hostname: "*.shop.org"},
		{name: "wildcard route hostname, no rule", req: RouteRequest{Gateway: gw, Host: "a.shop.org", Path: "/cart"},
			listener: "any", miss: &RouteMiss{Why: MissNoRule, Gateway: gw, Host: "a.shop.org", Routes: []string{"app/only-wild"}, VirtualHost: "*.shop.org", Method: "GET", Path: "/cart"}},
		{name: "catch-all host", req: RouteRequest{Gateway: gw, Host: "other.org", Path: "/cart"},
			listener: "any", route: "app/catch-route", hostname: "*"},
	})
	if _, err := g.Route(RouteRequest{Gateway: GatewayRef("infra", "missing"), Host: "a", Path: "/"}); !errors.Is(err, ErrGatewayNotFound) {
		t.Errorf("missing gateway: err = %v", err)
	}
	if _, err := g.Route(RouteRequest{Gateway: Ref{Kind: "HTTPRoute", Namespace: "infra", Name: "gw"}, Host: "a", Path: "/"}); !errors.Is(err, ErrGatewayNotFound) {
		t.Errorf("wrong kind: err = %v", err)
	}
}

func TestMatchPrecedence(t *testing.T) {
	g := loadGraph(t, "precedence.yaml")
	gw := GatewayRef("infra", "gw")
	r := func(method, path string, headers map[string]string) RouteRequest {
		return RouteRequest{Gateway: gw, Host: "p.example.com", Method: method, Path: path, Headers: headers}
	}
	xa := map[string]string{"x-a": "1"}
	runRouteCases(t, g, []routeCase{
		{name: "exact beats prefix", req: r("GET", "/foo", nil), listener: "http", route: "prec/a", rule: "exact-foo"},
		{name: "prefix below exact", req: r("GET", "/foo/x", nil), listener: "http", route: "prec/a", rule: "prefix-foo"},
		{name: "longest prefix, trailing slash ignored", req: r("GET", "/foo/bar", nil), listener: "http", route: "prec/a", rule: "prefix-foo-bar"},
		{name: "longest prefix, deeper", req: r("GET", "/foo/bar/baz", nil), listener: "http", route: "prec/a", rule: "prefix-foo-bar"},
		{name: "prefix is segment-wise", req: r("GET", "/foobar", nil), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "query string is not part of the path", req: r("GET", "/foo?x=/y", nil), listener: "http", route: "prec/a", rule: "exact-foo"},
		// The data plane drops method matches: they neither rank nor reject (match.go).
		{name: "a method match does not rank: rule order", req: r("POST", "/m", nil), listener: "http", route: "prec/a", rule: "m-any"},
		{name: "method mismatch, first rule", req: r("GET", "/m/x", nil), listener: "http", route: "prec/a", rule: "m-any"},
		{name: "more headers win", req: r("GET", "/h", map[string]string{"x-a": "1", "x-b": "2"}), listener: "http", route: "prec/a", rule: "h-two"},
		{name: "header names are case-insensitive", req: r("GET", "/h", xa), listener: "http", route: "prec/a", rule: "h-one"},
		{name: "header value must match", req: r("GET", "/h", map[string]string{"x-a": "2"}), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "more query params win", req: r("GET", "/q?b=2&a=1", nil), listener: "http", route: "prec/a", rule: "q-two"},
		{name: "one query param", req: r("GET", "/q?a=1", nil), listener: "http", route: "prec/a", rule: "q-one"},
		{name: "query value must match", req: r("GET", "/q?a=2", nil), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "query value is compared raw, not percent-decoded", req: r("GET", "/q?a=%31", nil), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "first of repeated query names counts", req: r("GET", "/q?a=1&a=2", nil), listener: "http", route: "prec/a", rule: "q-one"},
		{name: "first of repeated query names counts (not matching)", req: r("GET", "/q?a=2&a=1", nil), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "empty query pairs are skipped", req: r("GET", "/q?&&a=1&", nil), listener: "http", route: "prec/a", rule: "q-one"},
		{name: "headers beat a method match", req: r("GET", "/mh", xa), listener: "http", route: "prec/a", rule: "mh-header"},
		{name: "headers when method differs", req: r("POST", "/mh", xa), listener: "http", route: "prec/a", rule: "mh-header"},
		{name: "a method match takes any method", req: r("POST", "/mh", nil), listener: "http", route: "prec/a", rule: "mh-method", ignoredMethod: "GET"},
		{name: "a method match takes its own method", req: r("get", "/mh", nil), listener: "http", route: "prec/a", rule: "mh-method"},
		{name: "headers beat query params", req: r("GET", "/hq?a=1&b=2", xa), listener: "http", route: "prec/a", rule: "hq-header"},
		{name: "query params without header", req: r("GET", "/hq?a=1&b=2", nil), listener: "http", route: "prec/a", rule: "hq-query"},
		{name: "exact beats regex", req: r("GET", "/r/1", nil), listener: "http", route: "prec/a", rule: "r-exact"},
		{name: "regex ranks by pattern length", req: r("GET", "/r/5", nil), listener: "http", route: "prec/a", rule: "r-regex"},
		{name: "regex is a full match", req: r("GET", "/r/5/6", nil), listener: "http", route: "prec/a", rule: "r-prefix"},
		{name: "regex no match", req: r("GET", "/r/x", nil), listener: "http", route: "prec/a", rule: "r-prefix"},
		{name: "header regex", req: r("GET", "/re", map[string]string{"x-v": "v12"}), listener: "http", route: "prec/a", rule: "re-header"},
		{name: "header regex is a full match", req: r("GET", "/re", map[string]string{"x-v": "xv12"}), listener: "http", route: "prec/a", rule: "catch-all"},
		// The data plane compares a RegularExpression query param as text (match.go).
		{name: "query regex is not a regex", req: r("GET", "/re?t=abc", nil), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "query regex is its literal text", req: r("GET", "/re?t=[a-z]+", nil), listener: "http", route: "prec/a", rule: "re-query"},
		{name: "tie: oldest route", req: r("GET", "/tie", nil), listener: "http", route: "prec/b", rule: "tie"},
		{name: "tie: same age, namespace/name", req: r("GET", "/alpha", nil), listener: "http", route: "prec/c", rule: "alpha"},
		{name: "tie in a route: first rule", req: r("GET", "/dup", nil), listener: "http", route: "prec/a", rule: "dup-1"},
		{name: "match index", req: r("DELETE", "/multi/x", nil), listener: "http", route: "prec/a", rule: "multi", matchIndex: 0},
		{name: "first match whatever the method", req: r("GET", "/multi/x", nil), listener: "http", route: "prec/a", rule: "multi", matchIndex: 0, ignoredMethod: "DELETE"},
		{name: "second match", req: r("GET", "/multi/y", nil), listener: "http", route: "prec/a", rule: "multi", matchIndex: 1},
		{name: "catch-all last", req: r("GET", "/zzz", nil), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "empty path is /", req: r("GET", "", nil), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "exact host vhost only", req: r("GET", "/wide-only", nil), listener: "http", route: "prec/a", rule: "catch-all"},
		{name: "wildcard host vhost", req: RouteRequest{Gateway: gw, Host: "q.example.com", Method: "GET", Path: "/wide-only"},
			listener: "http", route: "prec/wide", rule: "wide-only"},
		{name: "invalid path regex never matches", req: RouteRequest{Gateway: gw, Host: "bad.example.com", Method: "GET", Path: "/x(["},
			listener: "http", route: "prec/bad", rule: "fallback"},
		{name: "invalid header regex never matches", req: RouteRequest{Gateway: gw, Host: "bad.example.com", Method: "GET", Path: "/h", Headers: map[string]string{"x": "*"}},
			listener: "http", route: "prec/bad", rule: "fallback"},
		{name: "invalid query regex: a value like any other", req: RouteRequest{Gateway: gw, Host: "bad.example.com", Method: "GET", Path: "/q?x=aa"},
			listener: "http", route: "prec/bad", rule: "fallback"},
		{name: "invalid query regex matches its text", req: RouteRequest{Gateway: gw, Host: "bad.example.com", Method: "GET", Path: "/q?x=a{2,1}"},
			listener: "http", route: "prec/bad", rule: "bad-query"},
	})

	probs := g.Problems()
	want := []string{
		"spec.rules[0].matches[0].path.value",
		"spec.rules[1].matches[0].headers[0].value",
		// (Not the query param regex: the data plane compares it as text, never compiles it.)
	}
	if len(probs) != len(want) {
		t.Fatalf("problems = %+v", probs)
	}
	for i, p := range probs {
		if p.Object != HTTPRouteRef("prec", "bad") || p.Field != want[i] || p.Why != ProblemRegexInvalid || p.Regex == "" || p.Err == "" {
			t.Errorf("problem %d = %+v, want field %s", i, p, want[i])
		}
		if p.Source.Line == 0 || !strings.HasSuffix(p.Source.File, "precedence.yaml") {
			t.Errorf("problem %d has no position: %+v", i, p.Source)
		}
	}
	if probs[0].Source.Line >= probs[1].Source.Line {
		t.Errorf("problem lines not at their fields: %d %d", probs[0].Source.Line, probs[1].Source.Line)
	}
}

func TestQueryValue(t *testing.T) {
	for _, tt := range []struct {
		raw, name, want string
		ok              bool
	}{
		{"a=1&b=2", "b", "2", true},
		{"a=1&a=2", "a", "1", true}, // the first value
		{"a&b=2", "a", "", true},    // no "=": empty value
		{"a=&b=2", "a", "", true},
		{"&&a=1&", "a", "1", true},      // empty pairs skipped
		{"a=x%20y", "a", "x%20y", true}, // raw, not decoded
		{"ab=1", "a", "", false},
		{"", "a", "", false},
		{"A=1", "a", "", false}, // names are case-sensitive
		{"=1&a=2", "", "1", true},
	} {
		got, ok := queryValue(tt.raw, tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("queryValue(%q, %q) = %q, %v; want %q, %v", tt.raw, tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRouteListenerProtocolAndPort: a result names the protocol and port of the first
// listener called Listener, also when a gateway repeats a name (Gateway API forbids it,
// but manifests given as files are not validated) and routing took the second one.
func TestRouteListenerProtocolAndPort(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: dup, namespace: infra}
spec:
  gatewayClassName: c
  listeners:
  - {name: web, protocol: HTTP, port: 80, hostname: a.example.com}
  - {name: web, protocol: HTTPS, port: 443, hostname: b.example.com, tls: {mode: Terminate, certificateRefs: [{name: c}]}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	g := BuildGraph(s)
	for _, tt := range []struct {
		host     string
		port     int
		protocol string
	}{
		{"a.example.com", 80, "HTTP"},
		{"b.example.com", 443, "HTTP"}, // took the second "web"; the first is HTTP on 80
	} {
		res, err := g.Route(RouteRequest{Gateway: GatewayRef("infra", "dup"), Host: tt.host, Path: "/", Method: "GET"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Listener != "web" || res.Port != tt.port || string(res.Protocol) != tt.protocol || res.ListenerPort != 80 {
			t.Errorf("%s: listener %q port %d protocol %q listener port %d", tt.host, res.Listener, res.Port, res.Protocol, res.ListenerPort)
		}
	}
}

func TestQueryStart(t *testing.T) {
	for _, tc := range []struct {
		path string
		want int
	}{
		{"", -1}, {"/mcp", -1}, {"?", 0}, {"#", 0}, {"/mcp?a=1", 4}, {"/mcp#frag", 4},
		{"/mcp?a=1#f", 4}, {"/mcp#f?a=1", 4}, {"/a/b/c?x#y", 6}, {"/a/b/c#x?y", 6}, {"?#", 0}, {"#?", 0},
	} {
		if got := QueryStart(tc.path); got != tc.want {
			t.Errorf("QueryStart(%q) = %d, want %d", tc.path, got, tc.want)
		}
		naive := -1
		for i := 0; i < len(tc.path); i++ {
			if c := tc.path[i]; c == '?' || c == '#' {
				naive = i
				break
			}
		}
		if naive != tc.want {
			t.Fatalf("bad case %q: the first '?' or '#' is at %d", tc.path, naive)
		}
	}
}

// TestRouteHitSize: a route hit fills two cache lines exactly (see routeHit).
func TestRouteHitSize(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("the layout is for 64-bit platforms")
	}
	if n := unsafe.Sizeof(routeHit{}); n != 128 {
		t.Errorf("routeHit is %d bytes, want 128", n)
	}
}

// TestPackStrings: packed strings keep their values and lie one after the other.
func TestPackStrings(t *testing.T) {
	want := []string{"infra/gw-1", "", "tools.example.com", "/mcp"}
	got := append([]string(nil), want...)
	packStrings(got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("packStrings changed the values: %q, want %q", got, want)
	}
	base := unsafe.StringData(got[0])
	off := 0
	for i, s := range got {
		if s != "" && unsafe.StringData(s) != (*byte)(unsafe.Add(unsafe.Pointer(base), off)) {
			t.Errorf("string %d (%q) is not at offset %d of the first", i, s, off)
		}
		off += len(s)
	}
}

// loadGraphOn builds the graph of fixtures whose GatewayClass agentic is mapped to data
// plane p (as --data-plane agentic=p does).
func loadGraphOn(t *testing.T, p DataPlane, names ...string) *Graph {
	t.Helper()
	s := load(t, names...)
	s.ClassDataPlanes = map[string]string{"agentic": string(p)}
	return BuildGraph(s)
}

// On data planes other than the reference, a method match ranks after the path and
// before headers (Gateway API HTTPRouteRule.Matches), and a request of another method
// does not match it.
func TestMatchPrecedenceWithMethods(t *testing.T) {
	g := loadGraphOn(t, DataPlaneIstio, "precedence.yaml")
	gw := GatewayRef("infra", "gw")
	r := func(method, path string, headers map[string]string) RouteRequest {
		return RouteRequest{Gateway: gw, Host: "p.example.com", Method: method, Path: path, Headers: headers}
	}
	xa := map[string]string{"x-a": "1"}
	runRouteCases(t, g, []routeCase{
		{name: "a method match ranks above no method", req: r("POST", "/m", nil), listener: "http", route: "prec/a", rule: "m-post"},
		{name: "a method mismatch does not match", req: r("GET", "/m/x", nil), listener: "http", route: "prec/a", rule: "m-any"},
		{name: "a method beats headers", req: r("GET", "/mh", xa), listener: "http", route: "prec/a", rule: "mh-method"},
		{name: "headers when the method differs", req: r("POST", "/mh", xa), listener: "http", route: "prec/a", rule: "mh-header"},
		{name: "a method match takes only its method", req: r("POST", "/mh", nil), listener: "http", route: "prec/a", rule: "catch-all"},
	})
}

// On data planes other than the reference, listeners are isolated: the most specific
// listener for the host takes the request, and only the routes attached to it serve it.
func TestListenerIsolation(t *testing.T) {
	g := loadGraphOn(t, DataPlaneIstio, "routing.yaml")
	gw := GatewayRef("infra", "gw")
	runRouteCases(t, g, []routeCase{
		{name: "the exact listener's route", req: RouteRequest{Gateway: gw, Host: "api.example.com", Path: "/"},
			listener: "exact", route: "app/api-route", routeListener: "exact"},
		// On the reference data plane the wild listener would serve the exact listener's
		// route (shared port route table, TestListenerSelection); here only its own.
		{name: "only the listener's own routes", req: RouteRequest{Gateway: gw, Listener: "wild", Host: "api.example.com", Path: "/"},
			listener: "wild", route: "app/wild-route", routeListener: "wild", hostname: "*.example.com"},
	})
}
