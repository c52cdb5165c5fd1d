package explain

import (
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/snapshot"
)

// TestUnread: which unread kinds a decision on a path depends on.
func TestUnread(t *testing.T) {
	w := func(kind, ns string) snapshot.Warning {
		return snapshot.Warning{Kind: kind, Namespace: ns, Message: "cannot list " + kind + ": forbidden"}
	}
	for _, c := range []struct {
		name     string
		partial  bool
		warnings []snapshot.Warning
		want     string
	}{
		{"complete read", false, []snapshot.Warning{w(xaccesspolicies, "")}, ""},
		{"policies everywhere", true, []snapshot.Warning{w(xaccesspolicies, "")}, xaccesspolicies},
		{"policies of the gateway's namespace", true, []snapshot.Warning{w(xaccesspolicies, "infra")}, xaccesspolicies},
		{"policies of the backend's namespace", true, []snapshot.Warning{w(xaccesspolicies, "pay")}, xaccesspolicies},
		{"policies of another namespace", true, []snapshot.Warning{w(xaccesspolicies, "other")}, ""},
		{"routes of another namespace may attach", true, []snapshot.Warning{w("httproutes.gateway.networking.k8s.io", "other")}, "httproutes.gateway.networking.k8s.io"},
		{"AuthPolicies and ServiceAccounts are not in the verdict", true, []snapshot.Warning{w("authpolicies.kuadrant.io", ""), w("serviceaccounts", "")}, ""},
		{"one per kind, sorted", true, []snapshot.Warning{w(xaccesspolicies, "pay"), w("gateways.gateway.networking.k8s.io", ""), w(xaccesspolicies, "infra")},
			"gateways.gateway.networking.k8s.io," + xaccesspolicies},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &snapshot.Snapshot{Partial: c.partial, Warnings: c.warnings}
			var got []string
			for _, u := range Unread(s, "infra", "pay") {
				got = append(got, u.Kind)
			}
			if strings.Join(got, ",") != c.want {
				t.Errorf("Unread = %q, want %q", got, c.want)
			}
		})
	}
	d := UnreadDecision(Decision{Verdict: Allow, Level: "gateway", DecidedBy: "infra/p#r", Semantics: "reference"},
		[]snapshot.Warning{w(xaccesspolicies, "infra")})
	if c := d.Cause; d.Verdict != Indeterminate || d.DecidedBy != UnreadBy || d.Semantics != "reference" || c == nil ||
		c.Event != CauseUnread || len(c.Unread) != 1 || c.Unread[0].Kind != xaccesspolicies ||
		c.Was == nil || *c.Was != (Was{Verdict: Allow, DecidedBy: "infra/p#r", Level: "gateway"}) {
		t.Errorf("UnreadDecision = %+v", d)
	}
	if len(d.Trace) == 0 || d.Trace[0].Event != EventUnread || d.Trace[0].Was == nil {
		t.Errorf("UnreadDecision's trace does not open with the unread step: %+v", d.Trace)
	}
}
