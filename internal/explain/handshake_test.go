package explain

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/topology"
)

// withCA gives the base topology's Gateway a frontend CA for every port: its HTTPS
// listener then validates client certificates against that CA, not the SPIFFE bundle.
func withCA(topo string) string {
	return strings.Replace(topo, "  gatewayClassName: c\n",
		"  gatewayClassName: c\n  tls: {frontend: {default: {validation: {caCertificateRefs: [{group: \"\", kind: ConfigMap, name: client-ca}]}}}}\n", 1)
}

// TestHandshake: on the reference data plane every HTTPS listener requires a client
// certificate (translator listener.go:695), validated by the SPIFFE trust bundle or the
// Gateway's frontend CA. A caller that fails the handshake is denied by tls-handshake,
// in explain and in Decide alike; one that passes is decided by the policies.
func TestHandshake(t *testing.T) {
	anyone := "- name: anyone\n  authorization: {type: Inline, mcp: {methods: [{name: tools/call, params: [add]}]}}"
	pol := policy("be", "xb", "Allow", "", rules(anyone, saTools("sum", "billing", "sum")))
	spiffeOnly := loadYAML(t, baseTopology, pol)
	withCAs := loadYAML(t, withCA(baseTopology), pol)
	onHTTPS := func(from Caller, tool string) *Request {
		r := call("billing", tool)
		r.From, r.Listener = from, "https"
		return r
	}
	anon := Caller{Kind: CallerAnonymous}
	cert := Caller{Kind: CallerCertificate, Subject: "CN=agent,O=acme"}
	billing := sa("billing")
	tests := []struct {
		name string
		ca   bool
		req  *Request
		want want
		why  string // the handshake failure (cause and trace) or the CA assumed (a trace step)
	}{
		{name: "anonymous, SPIFFE bundle", req: onHTTPS(anon, "add"), want: want{Deny, "gateway", DecidedTLSHandshake}, why: HandshakeNoCertificate},
		{name: "anonymous, frontend CA", ca: true, req: onHTTPS(anon, "add"), want: want{Deny, "gateway", DecidedTLSHandshake}, why: HandshakeNoCertificate},
		{name: "certificate, SPIFFE bundle", req: onHTTPS(cert, "add"), want: want{Deny, "gateway", DecidedTLSHandshake}, why: HandshakeNotSVID},
		{name: "certificate, frontend CA: a rule for anyone", ca: true, req: onHTTPS(cert, "add"), want: want{Allow, "backend", "app/be#anyone"}},
		{name: "certificate, frontend CA: no principal", ca: true, req: onHTTPS(cert, "sum"), want: want{Deny, "backend", DecidedImplicitDeny}},
		{name: "SVID, SPIFFE bundle", req: onHTTPS(billing, "sum"), want: want{Allow, "backend", "app/be#sum"}},
		{name: "SVID, frontend CA: assumed", ca: true, req: onHTTPS(billing, "sum"), want: want{Allow, "backend", "app/be#sum"}, why: "ca"},
		{name: "anonymous, plain HTTP", req: call("", "add"), want: want{Allow, "backend", "app/be#anyone"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := spiffeOnly
			if tt.ca {
				s = withCAs
			}
			got := decideOne(t, s, effective.Reference(), tt.req)
			if got.Verdict != tt.want.decision || got.Level != tt.want.level || got.DecidedBy != tt.want.by {
				t.Fatalf("got %s/%s/%s, want %s/%s/%s (%s)", got.Verdict, got.Level, got.DecidedBy, tt.want.decision, tt.want.level, tt.want.by, got.Reason)
			}
			switch {
			case tt.why == "ca":
				if len(got.Trace) == 0 || got.Trace[0].Event != EventTLSCAAssumed || got.Trace[0].Listener != "https" || got.Trace[0].CA == "" {
					t.Errorf("the trace does not open with the CA assumed: %+v", got.Trace)
				}
			case tt.why != "":
				if c := got.Cause; c == nil || c.Event != CauseTLSHandshake || c.Handshake != tt.why || c.Listener != "https" {
					t.Errorf("cause %+v, want %s on listener https (%s)", c, CauseTLSHandshake, tt.why)
				}
				if len(got.Trace) != 1 || got.Trace[0].Event != EventTLSHandshakeFails || got.Trace[0].Handshake != tt.why {
					t.Errorf("trace %+v, want one %s step (%s)", got.Trace, EventTLSHandshakeFails, tt.why)
				}
			default:
				for _, st := range got.Trace {
					if st.Phase == "tls" {
						t.Errorf("a TLS step where the handshake assumes nothing: %+v", st)
					}
				}
			}
			if got.DecidedBy == DecidedTLSHandshake && got.DenyKind() != "" {
				t.Errorf("deny kind %q: the handshake is the data plane's own answer", got.DenyKind())
			}
			// The decision space (can-i, who-can, matrix) decides the same.
			sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "cluster.local")
			rq := *tt.req
			q := sim.Query(&rq)
			chain := sim.Engines[0].Chain(topology.GatewayRef("gw", "gw"), rq.Listener, &[]topology.Ref{topology.XBackendRef("app", "xb")}[0])
			end := sim.TargetEnd(s.Gateways[0], rq.Listener, []string{"app/r"}, "app")
			principal := rq.From.Principal(sim.TrustDomain)
			if rq.From.Kind == CallerCertificate {
				principal = CertificatePrincipal
			}
			if rq.Listener == "http" {
				principal = ""
			}
			d := q.Decide(chain, principal, &end)
			if d.Verdict != tt.want.decision || d.DecidedBy != tt.want.by {
				t.Errorf("Decide: %s/%s, want %s/%s", d.Verdict, d.DecidedBy, tt.want.decision, tt.want.by)
			}
		})
	}
}

// TestHandshakeOtherDataPlane: agpol models the handshake of the reference data plane
// only; on Istio an anonymous caller over HTTPS is decided as before.
func TestHandshakeOtherDataPlane(t *testing.T) {
	class := "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: c}\nspec: {controllerName: istio.io/gateway-controller}"
	s := loadYAML(t, baseTopology, class)
	r := call("", "add")
	r.Listener = "https"
	got := decideOne(t, s, effective.Reference(), r)
	if got.DecidedBy == DecidedTLSHandshake {
		t.Fatalf("Istio gateway: decided by %s (%s)", got.DecidedBy, got.Reason)
	}
}

func TestParseCallerCertificate(t *testing.T) {
	c, err := ParseCaller("cert:CN=agent,O=acme")
	if err != nil || c.Kind != CallerCertificate || c.Subject != "CN=agent,O=acme" || c.String() != "cert:CN=agent,O=acme" || c.Principal("cluster.local") != "" {
		t.Fatalf("ParseCaller = %+v, %v", c, err)
	}
	for _, bad := range []string{"cert:", "cert:agent", "cert:CN=a,", "cert:=x"} {
		if _, err := ParseCaller(bad); err == nil {
			t.Errorf("ParseCaller(%q) accepted", bad)
		}
	}
}

func TestRequestFileCertificate(t *testing.T) {
	const file = "apiVersion: agpol.dev/v1alpha1\nkind: SimulationRequests\nrequests:\n- name: cert\n  from: {certificate: \"CN=agent,O=acme\"}\n  gateway: edge\n"
	rf, err := ParseRequestFile("requests.yaml", []byte(file), "default")
	if err != nil {
		t.Fatal(err)
	}
	if c := rf.Requests[0].From; c.Kind != CallerCertificate || c.Subject != "CN=agent,O=acme" {
		t.Fatalf("from = %+v", c)
	}
	_, err = ParseRequestFile("requests.yaml", []byte(strings.Replace(file, "CN=agent,O=acme", "agent", 1)), "default")
	if err == nil || !strings.Contains(err.Error(), "requests.yaml:5") {
		t.Fatalf("bad subject: %v, want an error at requests.yaml:5", err)
	}
}

// TestLegacyKeepsInlineTools: an XAccessPolicy written at v0alpha0 loses
// authorization.tools when stored at v1alpha1, but the legacy translator
// (v0alpha0-legacy) read it stored at v0alpha0, tools included.
func TestLegacyKeepsInlineTools(t *testing.T) {
	legacy := `apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XAccessPolicy
metadata: {name: p, namespace: app}
spec:
  targetRefs: [{group: agentic.networking.x-k8s.io, kind: XBackend, name: xb}]
  rules:
  - name: only-add
    source: {type: ServiceAccount, serviceAccount: {namespace: agents, name: billing}}
    authorization: {type: InlineTools, tools: [add]}`
	s := loadYAML(t, baseTopology, legacy)
	for tool, want := range map[string]string{"add": Allow, "multiply": Deny} {
		got := decideOne(t, s, sem(t, "v0alpha0-legacy"), call("billing", tool))
		if got.Verdict != want {
			t.Errorf("%s: %s by %s, want %s", tool, got.Verdict, got.DecidedBy, want)
		}
	}
	if len(s.Dropped) == 0 {
		t.Error("the pruning at v1alpha1 is no longer reported (AGP102)")
	}
}

// TestListenerSetListenerByName: --listener can name a listener a ListenerSet adds
// ("namespace/listenerset/listener").
func TestListenerSetListenerByName(t *testing.T) {
	s := loadYAML(t, `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: istio}
spec: {controllerName: istio.io/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: infra}
spec:
  gatewayClassName: istio
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: main, protocol: HTTP, port: 80, hostname: main.example.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: infra}
spec:
  parentRef: {name: gw}
  listeners:
  - {name: a, protocol: HTTP, port: 8080, hostname: a.example.com}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: on-set, namespace: infra}
spec:
  parentRefs: [{kind: ListenerSet, name: extra}]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc, namespace: infra}
spec: {ports: [{port: 80}]}`)
	sim := New(model.New(s), []effective.Semantics{effective.Reference()}, "")
	res, err := sim.Explain(Full, &Request{From: Caller{Kind: CallerAnonymous}, Gateway: &NamespacedName{Namespace: "infra", Name: "gw"},
		Listener: "infra/extra/a", HTTP: HTTP{Method: "GET", Path: "/", Host: "a.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Path.Listener != "infra/extra/a" || res[0].Path.Protocol != "HTTP" || res[0].Path.Route != "infra/on-set" {
		t.Fatalf("results %+v", res)
	}
}
