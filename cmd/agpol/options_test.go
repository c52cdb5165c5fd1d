package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/effective/authpolicy"
	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/lint"
	"github.com/agpol/agpol/internal/render"
	"github.com/agpol/agpol/internal/whatif"
)

// The TestNewCmd* tests run argv through a command's flag parsing, Complete and Validate,
// as gh's TestNewCmd* tests do, and compare the options the command would run with (or
// the error), without running it: nothing is loaded.

// parseArgv returns the options argv completes to, or the error.
func parseArgv(t *testing.T, argv ...string) (command, error) {
	t.Helper()
	var got command
	a := &app{
		streams:  genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
		name:     "agpol",
		progress: render.NewProgress(io.Discard),
		runF:     func(o command) error { got = o; return nil },
	}
	root := a.newRootCmd()
	root.SetArgs(argv)
	if _, err := root.ExecuteC(); err != nil {
		return nil, err
	}
	if got == nil {
		t.Fatalf("%v: the command did not reach Run", argv)
	}
	return got, nil
}

// argvCase is one argv and what it completes to: want (compared with the view of the
// options), or an error containing wantErr, a usage error (exit 2, with the hint to read
// --help) unless inputErr.
type argvCase struct {
	argv     []string
	want     any
	wantErr  string
	inputErr bool
}

// runArgvCases runs the cases of one command; view picks the fields of its options.
func runArgvCases[O command](t *testing.T, cases []argvCase, view func(O) any) {
	t.Helper()
	for _, c := range cases {
		t.Run(strings.Join(c.argv, " "), func(t *testing.T) {
			o, err := parseArgv(t, c.argv...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				var ue *usageError
				if !c.inputErr && !errors.As(err, &ue) {
					t.Errorf("error %q is not a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			opts, ok := o.(O)
			if !ok {
				t.Fatalf("options %T", o)
			}
			if got := view(opts); !reflect.DeepEqual(got, c.want) {
				t.Errorf("options\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func mustIdentity(t *testing.T, s string) explain.Caller {
	t.Helper()
	id, err := explain.ParseCaller(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func nn(ns, name string) *explain.NamespacedName {
	return &explain.NamespacedName{Namespace: ns, Name: name}
}

func semanticsNames(sems []effective.Semantics) []string { return semNames(sems) }

type explainView struct {
	Namespace, Output, Color, TrustDomain string
	Sems                                  []string
	Req                                   *explain.Request
}

func TestNewCmdExplain(t *testing.T) {
	anon := mustIdentity(t, "anonymous")
	req := func(f func(r *explain.Request)) *explain.Request {
		r := &explain.Request{Name: "explain", From: anon, HTTP: explain.HTTP{Method: "POST", Path: "/mcp"}, MCP: &explain.MCP{Method: "tools/call"}}
		if f != nil {
			f(r)
		}
		return r
	}
	view := func(o *explainOptions) any {
		return explainView{Namespace: o.namespace, Output: string(o.output), Color: o.color, TrustDomain: o.trustDomain, Sems: semanticsNames(o.sems), Req: o.req}
	}
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	runArgvCases(t, []argvCase{
		// -n is the namespace of --gateway edge (it was once ignored: default/edge).
		{argv: []string{"explain", "-n", "infra", "--gateway", "edge", "--from", "sa:agents/a"},
			want: explainView{Namespace: "infra", Output: "text", Color: "auto", TrustDomain: "cluster.local", Sems: []string{"reference"},
				Req: req(func(r *explain.Request) { r.From = mustIdentity(t, "sa:agents/a"); r.Gateway = nn("infra", "edge") })}},
		{argv: []string{"explain", "--gateway", "edge", "--from", "anonymous"},
			want: explainView{Namespace: "default", Output: "text", Color: "auto", TrustDomain: "cluster.local", Sems: []string{"reference"},
				Req: req(func(r *explain.Request) { r.Gateway = nn("default", "edge") })}},
		{argv: []string{"explain", "-n", "infra", "--gateway", "other/edge", "--route", "r", "--backend", "pay/ledger", "--listener", "https", "--from", "anonymous"},
			want: explainView{Namespace: "infra", Output: "text", Color: "auto", TrustDomain: "cluster.local", Sems: []string{"reference"},
				Req: req(func(r *explain.Request) {
					r.Gateway, r.Route, r.Backend, r.Listener = nn("other", "edge"), nn("infra", "r"), nn("pay", "ledger"), "https"
				})}},
		{argv: []string{"explain", "--from", "anonymous", "--method", "get", "--header", "X-A=1", "--header", "x-a=2", "--time", "2026-05-01T10:00:00Z",
			"--extauth", "gateway=allow", "--host", "h.example.com:8443", "--port", "8443", "--path", "/x?y=1",
			"--semantics", "reference,pr-293", "-o", "json", "--color", "never", "--trust-domain", "example.org"},
			want: explainView{Namespace: "default", Output: "json", Color: "never", TrustDomain: "example.org", Sems: []string{"reference", "pr-293"},
				Req: req(func(r *explain.Request) {
					r.HTTP = explain.HTTP{Method: "GET", Path: "/x?y=1", Host: "h.example.com:8443", Port: 8443, Headers: map[string]string{"x-a": "1,2"}, Time: at}
					r.MCP = nil // GET without MCP flags: plain HTTP
					r.ExtAuth = explain.ExtAuth{Gateway: explain.Allow}
				})}},
		{argv: []string{"explain", "--from", "anonymous", "--mcp-method", "resources/read", "--uri", "file:///a", "--extauth", "deny"},
			want: explainView{Namespace: "default", Output: "text", Color: "auto", TrustDomain: "cluster.local", Sems: []string{"reference"},
				Req: req(func(r *explain.Request) {
					r.MCP = &explain.MCP{Method: "resources/read", URI: "file:///a"}
					r.ExtAuth = explain.ExtAuth{Gateway: explain.Deny, Backend: explain.Deny}
				})}},
		{argv: []string{"explain", "--gateway", "infra/edge"}, wantErr: "--from IDENTITY is required"},
		{argv: []string{"explain", "--from", "bob"}, wantErr: "--from: "},
		{argv: []string{"explain", "--from", "anonymous", "--backend", "pay/ledger", "--service", "pay/ledger"}, wantErr: "[backend service] were all set"},
		{argv: []string{"explain", "--from", "anonymous", "--path", "mcp"}, wantErr: "--path must start with /"},
		{argv: []string{"explain", "--from", "anonymous", "--port", "70000"}, wantErr: "--port must be 1-65535"},
		{argv: []string{"explain", "--from", "anonymous", "--method", "tools/list"}, wantErr: `--method "tools/list" is not an HTTP method (GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE or PATCH); for the MCP method give --mcp-method tools/list`},
		{argv: []string{"explain", "--from", "anonymous", "--method", "GE T"}, wantErr: `--method "GE T" is not an HTTP method (GET, HEAD, POST, PUT, DELETE, CONNECT, OPTIONS, TRACE or PATCH)`},
		{argv: []string{"explain", "--from", "anonymous", "--header", "novalue"}, wantErr: `--header "novalue": use NAME=VALUE`},
		{argv: []string{"explain", "--from", "anonymous", "--time", "tomorrow"}, wantErr: `--time "tomorrow"`},
		{argv: []string{"explain", "--from", "anonymous", "--extauth", "maybe"}, wantErr: `--extauth "maybe"`},
		{argv: []string{"explain", "--from", "anonymous", "-o", "xml"}, wantErr: `unknown output format "xml"`},
		{argv: []string{"explain", "--from", "anonymous", "--color", "sometimes"}, wantErr: `unknown --color value "sometimes"`},
		{argv: []string{"explain", "--from", "anonymous", "--semantics", "nope"}, wantErr: "nope"},
		{argv: []string{"explain", "--from", "anonymous", "--live"}, wantErr: "--live lays files over the cluster"},
		{argv: []string{"explain", "--from", "anonymous", "-A"}, wantErr: "unknown shorthand flag: 'A'"},
		{argv: []string{"explain", "x"}, wantErr: `unknown command "x"`, inputErr: true},
	}, view)
}

type simulateView struct {
	Namespace, Output, TrustDomain, Requests string
	// Gateways are the gateways of the requests, in order.
	Gateways []string
}

func TestNewCmdSimulate(t *testing.T) {
	dir := t.TempDir()
	reqs := filepath.Join(dir, "requests.yaml")
	if err := os.WriteFile(reqs, []byte(`trustDomain: example.org
requests:
- name: a
  from: {anonymous: true}
  gateway: edge
- name: b
  from: {serviceAccount: agents/b}
  gateway: infra/edge
`), 0o644); err != nil {
		t.Fatal(err)
	}
	view := func(o *simulateOptions) any {
		v := simulateView{Namespace: o.namespace, Output: string(o.output), TrustDomain: o.trustDomain, Requests: o.requests}
		for _, r := range o.rf.Requests {
			v.Gateways = append(v.Gateways, r.Gateway.String())
		}
		return v
	}
	runArgvCases(t, []argvCase{
		{argv: []string{"simulate", "--requests", reqs, "-n", "tools"},
			want: simulateView{Namespace: "tools", Output: "text", TrustDomain: "example.org", Requests: reqs, Gateways: []string{"tools/edge", "infra/edge"}}},
		{argv: []string{"simulate", "--requests", reqs, "--trust-domain", "cluster.local", "-o", "junit"},
			want: simulateView{Namespace: "default", Output: "junit", TrustDomain: "cluster.local", Requests: reqs, Gateways: []string{"default/edge", "infra/edge"}}},
		{argv: []string{"simulate"}, wantErr: "--requests FILE is required"},
		{argv: []string{"simulate", "--requests", filepath.Join(dir, "nope.yaml")}, wantErr: "reading request file", inputErr: true},
		{argv: []string{"simulate", "--requests", reqs, "-o", "markdown"}, wantErr: `unknown output format "markdown"`},
		{argv: []string{"simulate", "--requests", reqs, "--live"}, wantErr: "--live lays files over the cluster"},
	}, view)
}

type getView struct {
	Kinds                           []string
	Name, Namespace, Filter, Output string
	LiveNamespace, FilesNamespace   string
	AllNamespaces, Printer          bool
	Labels, Fields, Color           string
	// AdmitNone: the load admits no object; EncodeJSON: it encodes -o json's items.
	AdmitNone, EncodeJSON bool
}

func TestNewCmdGet(t *testing.T) {
	view := func(o *getOptions) any {
		v := getView{Kinds: o.kinds, Name: o.name, Namespace: o.namespace, Filter: o.filterNamespace(), Output: o.output(),
			LiveNamespace: o.load.liveNamespace, FilesNamespace: o.load.namespace, AllNamespaces: o.load.allNamespaces,
			Printer: o.printer != nil, Color: o.color, AdmitNone: o.load.admit != nil && len(o.load.admit) == 0, EncodeJSON: o.load.inspect != nil}
		if o.sel.Labels != nil {
			v.Labels = o.sel.Labels.String()
		}
		if o.sel.Fields != nil {
			v.Fields = o.sel.Fields.String()
		}
		return v
	}
	runArgvCases(t, []argvCase{
		{argv: []string{"get", "xap"},
			want: getView{Kinds: []string{"xaccesspolicies"}, FilesNamespace: "default", Color: "auto"}},
		{argv: []string{"get", "gw,Routes", "edge", "-n", "infra"},
			want: getView{Kinds: []string{"gateways", "httproutes"}, Name: "edge", Namespace: "infra", Filter: "infra", FilesNamespace: "infra", Color: "auto"}},
		// NS/NAME is -n NS NAME, and wins over -A.
		{argv: []string{"get", "xap", "tools/calc", "-A", "-o", "wide"},
			want: getView{Kinds: []string{"xaccesspolicies"}, Name: "calc", Namespace: "tools", Filter: "tools", Output: "wide",
				LiveNamespace: "tools", FilesNamespace: "tools", Color: "auto"}},
		{argv: []string{"get", "xb", "-A", "-n", "pay", "-l", "team=pay", "--field-selector", "metadata.name!=x"},
			want: getView{Kinds: []string{"xbackends"}, Namespace: "pay", FilesNamespace: "pay", AllNamespaces: true,
				Labels: "team=pay", Fields: "metadata.name!=x", Color: "auto"}},
		// kubectl's printers: no object admitted; -o json's items encoded as read, unless
		// one NAME is printed alone, or ListenerSets with their computed status.
		{argv: []string{"get", "xap", "-o", "json", "--color", "always"},
			want: getView{Kinds: []string{"xaccesspolicies"}, Output: "json", FilesNamespace: "default", Printer: true, Color: "always",
				AdmitNone: true, EncodeJSON: true}},
		{argv: []string{"get", "xap", "x", "-o", "json"},
			want: getView{Kinds: []string{"xaccesspolicies"}, Name: "x", Output: "json", FilesNamespace: "default", Printer: true, Color: "auto", AdmitNone: true}},
		{argv: []string{"get", "xap", "-o", "name"},
			want: getView{Kinds: []string{"xaccesspolicies"}, Output: "name", FilesNamespace: "default", Printer: true, Color: "auto", AdmitNone: true}},
		{argv: []string{"get", "xap,lset", "-o", "json"},
			want: getView{Kinds: []string{"xaccesspolicies", "listenersets"}, Output: "json", FilesNamespace: "default", Printer: true, Color: "auto"}},
		{argv: []string{"get", "gateway", "-o", "dot"},
			want: getView{Kinds: []string{"gateways"}, Output: "dot", FilesNamespace: "default", Color: "auto"}},
		{argv: []string{"get", "pods"}, wantErr: `unknown type "pods"`},
		{argv: []string{"get", "xap", "x", "-l", "a=b"}, wantErr: "name cannot be provided when a selector is specified"},
		{argv: []string{"get", "xap", "-l", "a in (b"}, wantErr: "unable to parse requirement"},
		{argv: []string{"get", "xap", "--field-selector", "spec.x=1"}, wantErr: "field label not supported: spec.x"},
		{argv: []string{"get", "xap", "-o", "bogus"}, wantErr: `unable to match a printer suitable for the output format "bogus"`},
		{argv: []string{"get", "xap", "--color", "sometimes"}, wantErr: `unknown --color value "sometimes"`},
		{argv: []string{"get", "xap", "--live"}, wantErr: "--live lays files over the cluster"},
		{argv: []string{"get"}, wantErr: "You must specify the type of resource to get"},
	}, view)
}

type describeView struct {
	Kind, Namespace, Output, Color, Semantics, TrustDomain string
	Name                                                   []string
	// AdmitsWhatItReads: the load admits only what describe.Needs names.
	AdmitsWhatItReads bool
}

func TestNewCmdDescribe(t *testing.T) {
	view := func(o *describeOptions) any {
		return describeView{Kind: o.kind, Namespace: o.namespace, Output: string(o.output), Color: o.color, Semantics: o.sem.Name, TrustDomain: o.trustDomain, Name: o.name,
			AdmitsWhatItReads: o.load.needs != nil}
	}
	runArgvCases(t, []argvCase{
		{argv: []string{"describe", "gateway", "infra/edge"},
			want: describeView{Kind: "Gateway", Namespace: "default", Output: "text", Color: "auto", Semantics: "reference", TrustDomain: "cluster.local", Name: []string{"infra", "edge"}, AdmitsWhatItReads: true}},
		{argv: []string{"describe", "gw", "edge", "-n", "infra", "-o", "yaml"},
			want: describeView{Kind: "Gateway", Namespace: "infra", Output: "yaml", Color: "auto", Semantics: "reference", TrustDomain: "cluster.local", Name: []string{"infra", "edge"}, AdmitsWhatItReads: true}},
		{argv: []string{"describe", "xap", "-n", "tools", "--semantics", "proposal-0059", "--color", "always"},
			want: describeView{Kind: "XAccessPolicy", Namespace: "tools", Output: "text", Color: "always", Semantics: "proposal-0059", TrustDomain: "cluster.local", AdmitsWhatItReads: true}},
		{argv: []string{"describe", "authpolicies", "-A"},
			want: describeView{Kind: "AuthPolicy", Output: "text", Color: "auto", Semantics: "reference", TrustDomain: "cluster.local"}},
		{argv: []string{"describe", "gateway", "edge", "-A"}, wantErr: "a NAME cannot be given with -A"},
		{argv: []string{"describe", "service"}, wantErr: `cannot describe "service"`},
		{argv: []string{"describe", "gateway", "--semantics", "nope"}, wantErr: `unknown semantics preset "nope"`},
		{argv: []string{"describe", "gateway", "-o", "wide"}, wantErr: `unknown output format "wide"`},
	}, view)
}

type effectiveView struct {
	Query                      authpolicy.Query
	Namespace, Output, Color   string
	Gateway, Listener, Target  string
	WholeCluster               bool
	FilesNamespace, SourceName string
}

func TestNewCmdEffectiveAuthPolicy(t *testing.T) {
	view := func(o *effectiveAuthPolicyOptions) any {
		return effectiveView{Query: o.query, Namespace: o.namespace, Output: string(o.output), Color: o.color, Gateway: o.gateway, Listener: o.listener,
			Target: o.target, WholeCluster: o.load.wholeCluster, FilesNamespace: o.load.namespace, SourceName: o.load.sourceName()}
	}
	runArgvCases(t, []argvCase{
		{argv: []string{"effective", "authpolicy", "--target", "httproute/pay/ledger", "-f", "m.yaml"},
			want: effectiveView{Query: authpolicy.Query{Kind: "HTTPRoute", Namespace: "pay", Name: "ledger"}, Namespace: "default", Output: "text", Color: "auto",
				Target: "httproute/pay/ledger", WholeCluster: true, FilesNamespace: "default", SourceName: "m.yaml"}},
		// A NAME alone: its kind is looked up in the input when it is loaded.
		{argv: []string{"effective", "ap", "--target", "toystore", "-n", "app", "--color", "never", "-o", "json"},
			want: effectiveView{Query: authpolicy.Query{Namespace: "app", Name: "toystore"}, Namespace: "app", Output: "json", Color: "never",
				Target: "toystore", WholeCluster: true, FilesNamespace: "app", SourceName: "the cluster"}},
		{argv: []string{"effective", "authpolicy", "--target", "gw/edge#https", "-n", "infra"},
			want: effectiveView{Query: authpolicy.Query{Kind: "Gateway", Namespace: "infra", Name: "edge", Section: "https"}, Namespace: "infra", Output: "text", Color: "auto",
				Target: "gw/edge#https", WholeCluster: true, FilesNamespace: "infra", SourceName: "the cluster"}},
		{argv: []string{"effective", "authpolicy", "--target", "httproute/tools/tools#calc", "--gateway", "infra/edge", "--listener", "https"},
			want: effectiveView{Query: authpolicy.Query{Kind: "HTTPRoute", Namespace: "tools", Name: "tools", Section: "calc"}, Namespace: "default", Output: "text", Color: "auto",
				Gateway: "infra/edge", Listener: "https", Target: "httproute/tools/tools#calc", WholeCluster: true, FilesNamespace: "default", SourceName: "the cluster"}},
		{argv: []string{"effective", "authpolicy"}, wantErr: "--target is required"},
		{argv: []string{"effective", "authpolicy", "--target", "a/b/c/d"}, wantErr: "use KIND/NS/NAME"},
		{argv: []string{"effective", "authpolicy", "--target", "service/app/x"}, wantErr: `unknown kind "service"`},
		{argv: []string{"effective", "authpolicy", "--target", "gateway//x"}, wantErr: "empty namespace or name"},
		{argv: []string{"effective", "authpolicy", "--target", "x", "--color", "sometimes"}, wantErr: `unknown --color value "sometimes"`},
		{argv: []string{"effective", "authpolicy", "--target", "x", "-o", "wide"}, wantErr: `unknown output format "wide"`},
		{argv: []string{"effective"}, wantErr: "name a policy kind"},
	}, view)
}

type canIView struct {
	Caller              explain.Caller
	List                bool
	Op                  whatif.Op
	Filter              whatif.Filter
	Ext                 explain.ExtAuth
	Inventory           bool
	Output, Color, Sems string
}

func TestNewCmdCanI(t *testing.T) {
	t.Chdir("../..") // testdata/whatif/tools.json
	view := func(o *canIOptions) any {
		return canIView{Caller: o.caller, List: o.list, Op: o.op, Filter: o.filter, Ext: o.ext, Inventory: o.inv != nil,
			Output: string(o.output), Color: o.color, Sems: strings.Join(semNames(o.sems), ",")}
	}
	billing := mustIdentity(t, "sa:agents/billing")
	runArgvCases(t, []argvCase{
		{argv: []string{"can-i", "--list", "--from", "sa:agents/billing"},
			want: canIView{Caller: billing, List: true, Op: whatif.Op{Method: "tools/call"}, Output: "text", Color: "auto", Sems: "reference"}},
		{argv: []string{"can-i", "--tool", "refund", "--from", "sa:agents/billing", "--backend", "ledger", "-n", "pay", "--gateway", "infra/edge",
			"--listener", "https", "--extauth", "backend=allow", "--tools", "testdata/whatif/tools.json", "--semantics", "all", "-o", "yaml"},
			want: canIView{Caller: billing, Op: whatif.Op{Method: "tools/call", Tool: "refund"},
				Filter: whatif.Filter{Gateway: "infra/edge", Listener: "https", Backend: "pay/ledger"}, Ext: explain.ExtAuth{Backend: explain.Allow},
				Inventory: true, Output: "yaml", Color: "auto", Sems: strings.Join(effective.PresetNames(), ",")}},
		{argv: []string{"can-i", "--method", "initialize", "--from", "anonymous"},
			want: canIView{Caller: mustIdentity(t, "anonymous"), Op: whatif.Op{Method: "initialize"}, Output: "text", Color: "auto", Sems: "reference"}},
		{argv: []string{"can-i", "--list"}, wantErr: "--from IDENTITY is required"},
		{argv: []string{"can-i", "--from", "anonymous"}, wantErr: "give either --list or --tool"},
		{argv: []string{"can-i", "--list", "--tool", "x", "--from", "anonymous"}, wantErr: "give either --list or --tool"},
		{argv: []string{"can-i", "--method", "tools/list", "--tool", "x", "--from", "anonymous"}, wantErr: "--tool is for --method tools/call"},
		{argv: []string{"can-i", "--method", "tools/call", "--from", "anonymous"}, wantErr: "--tool TOOL is required with --method tools/call"},
		{argv: []string{"can-i", "--list", "--from", "bob"}, wantErr: "invalid caller"},
		{argv: []string{"can-i", "--list", "--from", "anonymous", "--extauth", "maybe"}, wantErr: `--extauth "maybe"`},
		{argv: []string{"can-i", "--list", "--from", "anonymous", "--tools", "testdata/whatif/missing.json"}, wantErr: "reading tools inventory", inputErr: true},
		{argv: []string{"can-i", "--list", "--from", "anonymous", "-o", "csv"}, wantErr: `unknown output format "csv"`},
		{argv: []string{"can-i", "--list", "--from", "anonymous", "--color", "sometimes"}, wantErr: `unknown --color value "sometimes"`},
		{argv: []string{"can-i", "--personas", "cmd/agpol/testdata/kuadrant-personas.yaml", "--from", "john"},
			want: canIView{Output: "text", Color: "auto", Sems: "reference"}}, // the persona is checked in Validate
		{argv: []string{"can-i", "--personas", "cmd/agpol/testdata/kuadrant-personas.yaml"}, wantErr: "--from PERSONA is required with --personas"},
		{argv: []string{"can-i", "--personas", "cmd/agpol/testdata/kuadrant-personas.yaml", "--from", "nobody"}, wantErr: `--from "nobody": no persona of that name`},
		{argv: []string{"can-i", "--personas", "cmd/agpol/testdata/kuadrant-personas.yaml", "--from", "john", "--list"}, wantErr: "--list, --tool, --method and --listener do not apply"},
		{argv: []string{"can-i", "--list", "--from", "anonymous", "--time", "2026-05-01T10:00:00Z"}, wantErr: "--time is for --personas"},
	}, view)
}

type whoCanView struct {
	Op       whatif.Op
	Filter   whatif.Filter
	Output   string
	Personas []string
	Time     string
}

func TestNewCmdWhoCan(t *testing.T) {
	view := func(o *whoCanOptions) any {
		v := whoCanView{Op: o.op, Filter: o.filter, Output: string(o.output)}
		for _, p := range o.people {
			v.Personas = append(v.Personas, p.Name)
		}
		if !o.when.IsZero() {
			v.Time = o.when.Format(time.RFC3339)
		}
		return v
	}
	const personas = "testdata/kuadrant-personas.yaml"
	runArgvCases(t, []argvCase{
		{argv: []string{"who-can", "--tool", "refund", "--backend", "pay/ledger"},
			want: whoCanView{Op: whatif.Op{Method: "tools/call", Tool: "refund"}, Filter: whatif.Filter{Backend: "pay/ledger"}, Output: "text"}},
		{argv: []string{"who-can", "--method", "tools/list", "--backend", "ledger", "-n", "pay", "--gateway", "edge", "-o", "json"},
			want: whoCanView{Op: whatif.Op{Method: "tools/list"}, Filter: whatif.Filter{Gateway: "pay/edge", Backend: "pay/ledger"}, Output: "json"}},
		{argv: []string{"who-can", "--tool", "x"},
			want: whoCanView{Op: whatif.Op{Method: "tools/call", Tool: "x"}, Output: "text"}},
		{argv: []string{"who-can", "--method", "tools/list"}, wantErr: "--backend NAMESPACE/NAME is required with --method tools/list"},
		{argv: []string{"who-can", "--backend", "pay/ledger"}, wantErr: "--tool TOOL is required with --method tools/call"},
		{argv: []string{"who-can", "--backend", "pay/ledger", "--method", "initialize", "--tool", "x"}, wantErr: "--tool is for --method tools/call"},
		{argv: []string{"who-can", "--backend", "a/b/c", "--tool", "x"}, wantErr: "--backend: "},
		{argv: []string{"who-can", "--personas", personas, "--time", "2026-05-01T10:00:00Z", "--gateway", "gw/edge"},
			want: whoCanView{Op: whatif.Op{Method: "tools/call"}, Filter: whatif.Filter{Gateway: "gw/edge"}, Output: "text",
				Personas: []string{"john", "client-app-1", "stranger"}, Time: "2026-05-01T10:00:00Z"}},
		{argv: []string{"who-can", "--personas", personas, "--tool", "x"}, wantErr: "--tool, --method and --listener do not apply"},
		{argv: []string{"who-can", "--personas", personas, "--time", "tomorrow"}, wantErr: `--time "tomorrow"`},
		{argv: []string{"who-can", "--tool", "x", "--backend", "pay/ledger", "--time", "2026-05-01T10:00:00Z"}, wantErr: "--time is for --personas"},
	}, view)
}

type matrixView struct {
	Filter        whatif.Filter
	Ungroup       bool
	Output, Color string
}

func TestNewCmdMatrix(t *testing.T) {
	view := func(o *matrixOptions) any {
		return matrixView{Filter: o.filter, Ungroup: o.ungroup, Output: string(o.output), Color: o.color}
	}
	runArgvCases(t, []argvCase{
		{argv: []string{"matrix"}, want: matrixView{Output: "table", Color: "auto"}},
		{argv: []string{"matrix", "--from", "sa:a/b", "--from", "anonymous", "--gateway", "edge", "-n", "infra", "--listener", "https", "--ungroup", "-o", "csv"},
			want: matrixView{Filter: whatif.Filter{Gateway: "infra/edge", Listener: "https", Identities: []string{"sa:a/b", "anonymous"}}, Ungroup: true, Output: "csv", Color: "auto"}},
		{argv: []string{"matrix", "-o", "xml"}, wantErr: `unknown output format "xml"`},
		{argv: []string{"matrix", "--live"}, wantErr: "--live lays files over the cluster"},
	}, view)
}

type diffView struct {
	BySemantics   bool
	Before, After string
	FailOn        string
	Sems          []string
	Files         []string
}

func TestNewCmdDiff(t *testing.T) {
	view := func(o *diffOptions) any {
		return diffView{BySemantics: o.bySemantics, Before: o.before, After: o.after, FailOn: o.failOn, Sems: semNames(o.sems), Files: o.load.files}
	}
	runArgvCases(t, []argvCase{
		{argv: []string{"diff", "--before", "a", "--after", "live", "--fail-on", "granted"},
			want: diffView{Before: "a", After: "live", FailOn: "granted", Sems: []string{"reference"}}},
		{argv: []string{"diff", "--semantics", "reference", "--semantics", "pr-293", "-f", "x"},
			want: diffView{BySemantics: true, FailOn: "none", Sems: []string{"reference", "pr-293"}, Files: []string{"x"}}},
		{argv: []string{"diff"}, wantErr: "give --before and --after"},
		{argv: []string{"diff", "--before", "a"}, wantErr: "--before and --after are required"},
		{argv: []string{"diff", "-f", "x", "--before", "a", "--after", "b"}, wantErr: "not -f/--live"},
		{argv: []string{"diff", "--before", "a", "--after", "b", "--fail-on", "all"}, wantErr: `unknown --fail-on value "all": use granted, revoked, any, none`},
	}, view)
}

type lintView struct {
	Files                  []string
	Threshold              lint.Threshold
	Checks                 int
	Explain, Output, Color string
	List, Config, NoCache  bool
}

func TestNewCmdLint(t *testing.T) {
	t.Chdir(t.TempDir()) // no .agpol.yaml here
	if err := os.WriteFile("cfg.yaml", []byte("suppressions: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	allowAll, err := lint.Selector{Only: []string{"allow-all"}}.Select()
	if err != nil {
		t.Fatal(err)
	}
	view := func(o *lintOptions) any {
		return lintView{Files: o.load.files, Threshold: o.threshold, Checks: len(o.checks), Explain: o.explain, Output: string(o.output), Color: o.color,
			List: o.list, Config: o.cfg != nil, NoCache: o.noCache}
	}
	runArgvCases(t, []argvCase{
		// Arguments are files, after -f.
		{argv: []string{"lint", "a.yaml", "-f", "b.yaml", "--fail-on", "warning", "--only", "allow-all", "--color", "always"},
			want: lintView{Files: []string{"b.yaml", "a.yaml"}, Threshold: "warning", Checks: len(allowAll), Output: "text", Color: "always"}},
		{argv: []string{"lint", "--config", "cfg.yaml", "-o", "sarif"},
			want: lintView{Threshold: "error", Checks: len(lint.Checks()), Output: "sarif", Color: "auto", Config: true}},
		// --explain and --list read nothing.
		{argv: []string{"lint", "--explain", "AGP401", "--only", "nope"}, want: lintView{Explain: "AGP401", Output: "text", Color: "auto"}},
		{argv: []string{"lint", "--list"}, want: lintView{Output: "text", Color: "auto", List: true}},
		{argv: []string{"lint", "--no-cache"}, want: lintView{Threshold: "error", Checks: len(lint.Checks()), Output: "text", Color: "auto", NoCache: true}},
		{argv: []string{"lint", "--explain", "NOPE"}, wantErr: `unknown check "NOPE"`},
		{argv: []string{"lint", "--only", "nope"}, wantErr: "nope"},
		{argv: []string{"lint", "--only", "AGP405", "--skip", "AGP405"}, wantErr: "contradict each other"},
		{argv: []string{"lint", "--config", "missing.yaml"}, wantErr: "missing.yaml", inputErr: true},
		{argv: []string{"lint", "--fail-on", "fatal"}, wantErr: `unknown --fail-on threshold "fatal"`},
		{argv: []string{"lint", "--live"}, wantErr: "--live lays files over the cluster"},
		{argv: []string{"lint", "--color", "sometimes"}, wantErr: `unknown --color value "sometimes"`},
	}, view)
}

type versionView struct{ Output, Color string }

func TestNewCmdVersion(t *testing.T) {
	view := func(o *versionOptions) any { return versionView{Output: string(o.output), Color: o.color} }
	runArgvCases(t, []argvCase{
		{argv: []string{"version"}, want: versionView{Output: "text", Color: "auto"}},
		{argv: []string{"version", "-o", "json", "--color", "never"}, want: versionView{Output: "json", Color: "never"}},
		{argv: []string{"version", "-o", "xml"}, wantErr: `unknown output format "xml"`},
		{argv: []string{"version", "--color", "sometimes"}, wantErr: `unknown --color value "sometimes"`},
	}, view)
}

// TestNewCmdCompletion: cobra's completion command, with an unknown shell a usage error.
func TestNewCmdCompletion(t *testing.T) {
	for _, c := range []struct {
		argv    []string
		wantErr string
	}{
		{[]string{"completion", "bash"}, ""},
		{[]string{"completion", "fish"}, ""},
		{[]string{"completion", "tcsh"}, `unknown shell "tcsh" for completion`},
	} {
		_, err := parseArgvNoRun(c.argv...)
		var ue *usageError
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%v: %v", c.argv, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.As(err, &ue)):
			t.Errorf("%v: error %v, want a usage error containing %q", c.argv, err, c.wantErr)
		}
	}
}

// parseArgvNoRun executes argv on a root whose commands receive their options instead of
// running; it reports whether a command reached Run.
func parseArgvNoRun(argv ...string) (reached bool, err error) {
	a := &app{
		streams:  genericiooptions.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
		name:     "agpol",
		progress: render.NewProgress(io.Discard),
		runF:     func(command) error { reached = true; return nil },
	}
	root := a.newRootCmd()
	root.SetArgs(argv)
	_, err = root.ExecuteC()
	return reached, err
}

// TestFlagGroupErrorsAreUsageErrors: cobra's flag-group checks end like every other usage
// error: exit 2 and the hint to read the command's help.
func TestFlagGroupErrorsAreUsageErrors(t *testing.T) {
	var out, errOut strings.Builder
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	code := run(t.Context(), []string{"agpol", "explain", "--from", "anonymous", "--backend", "pay/ledger", "--service", "pay/ledger", "-f", "x.yaml"}, streams)
	if code != exitUsage || !strings.Contains(errOut.String(), "[backend service] were all set") ||
		!strings.Contains(errOut.String(), "See 'agpol explain --help' for usage.") || out.Len() > 0 {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
