package render

import (
	"testing"

	"github.com/agpol/agpol/internal/explain"
	"github.com/agpol/agpol/internal/topology"
)

// The notes topology.Resolve returns as data read as sentences: the listener a request
// naming none arrives on, a rule that ignores its method match, an assumed backend.
func TestRoutingSentences(t *testing.T) {
	https := topology.ListenerOption{Name: "secure", Protocol: "HTTPS", Port: 443}
	plain := topology.ListenerOption{Name: "plain", Protocol: "HTTP", Port: 80}
	withID := &explain.Result{Request: &explain.Request{From: explain.Caller{Kind: explain.CallerServiceAccount, Namespace: "app", Name: "agent"}},
		Path: explain.PathInfo{Listener: "secure", ListenerChoice: &topology.ListenerChoice{Identity: true, Picked: https, Other: plain}}}
	anon := &explain.Result{Request: &explain.Request{From: explain.Caller{Kind: explain.CallerAnonymous}},
		Path: explain.PathInfo{Listener: "plain", ListenerChoice: &topology.ListenerChoice{Picked: plain, Other: https}}}
	cases := []struct {
		name, got, want string
	}{
		{"identity", listenerAssumed(withID), "no listener or port given: the caller sa:app/agent presents its identity over mTLS, so it arrives on HTTPS listener secure (port 443), not on plain-HTTP listener plain (port 80)"},
		{"anonymous", listenerAssumed(anon), "no listener or port given: an anonymous caller arrives on plain-HTTP listener plain (port 80), not on HTTPS listener secure (port 443)"},
		{"no-choice", listenerAssumed(&explain.Result{Request: &explain.Request{}}), ""},
		{"path-line", PathLine(anon.Path), "gw  (plain, assumed)"},
		{"ignored-method", StepReason(explain.Step{Event: explain.EventIgnoredMethod, IgnoredMethod: &topology.IgnoredMethod{Route: "app/r", Rule: "0", Method: "GET", RequestMethod: "POST"}}),
			"HTTPRoute app/r rule 0 matches method GET only, yet takes this POST request: the data plane does not check HTTPRoute method matches (the kube-agentic-networking translator drops them)"},
		{"backend-assumed", StepReason(explain.Step{Event: explain.EventBackendAssumed, Note: "XBackend app/xb is not in the input; assumed to exist"}),
			"XBackend app/xb is not in the input; assumed to exist"},
	}
	for _, tc := range cases {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	if v := Sentences(anon); v.Path.ListenerAssumed == "" {
		t.Errorf("Sentences left the listener note of the JSON empty")
	}
	if anon.Path.ListenerAssumed != "" {
		t.Errorf("Sentences wrote into explain's result; it must build render's own view")
	}
}
