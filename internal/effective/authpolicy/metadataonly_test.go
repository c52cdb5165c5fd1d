package authpolicy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// TestDecideMetadataOnly: Secrets read from a cluster (metadata only, marked by
// snapshot.SecretDataAnnotation) decide as the same Secrets read from files, and the
// reason says the entry is assumed; a live read refused Secrets says so where a Secret
// is missing.
func TestDecideMetadataOnly(t *testing.T) {
	metaOnly := identityPolicy
	for _, data := range []string{"stringData: {api_key: IAMBOB}", "stringData: {api_key: IAMALICE}", "data: {tls.crt: Q0VSVA==, tls.key: S0VZ}"} {
		if !strings.Contains(metaOnly, data) {
			t.Fatalf("identityPolicy lacks %q", data)
		}
		metaOnly = strings.Replace(metaOnly, data, "", 1)
	}
	mark := snapshot.SecretDataAnnotation + ": unread"
	metaOnly = strings.ReplaceAll(metaOnly, "annotations: {owner: bob}", "annotations: {owner: bob, "+mark+"}")
	metaOnly = strings.ReplaceAll(metaOnly, "annotations: {owner: alice}", "annotations: {owner: alice, "+mark+"}")
	metaOnly = strings.ReplaceAll(metaOnly, `labels: {ca: "true"}}`, `labels: {ca: "true"}, annotations: {`+mark+`}}`)
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	ids := map[string]*Identity{
		"alice's key": {APIKey: &APIKeyIdentity{Secret: "kuadrant-system/alice-key"}},
		"bob's key":   {APIKey: &APIKeyIdentity{Secret: "app/bob-key"}},
		"x509 alice":  {X509: &X509Identity{Subject: X509Subject{CommonName: "alice"}}},
	}
	files := Compute(topology.BuildGraph(load(t, topo+identityPolicy)))
	live := load(t, topo+metaOnly)
	for _, s := range live.Secrets {
		if !s.DataUnread || s.ObjectMeta.Annotations[snapshot.SecretDataAnnotation] != "" {
			t.Fatalf("Secret %s: DataUnread=%v annotations=%v, want unread and the marker removed", s.Name, s.DataUnread, s.ObjectMeta.Annotations)
		}
	}
	cluster := Compute(topology.BuildGraph(live))
	for name, id := range ids {
		req := Request{Method: "GET", Host: "api.example.com", Path: "/toys", Headers: map[string]string{}, Identity: id, Time: at}
		decide := func(r *Result) *Outcome {
			pr, err := r.ForPrefix("infra/gw", "a", "app/all", "named")
			if err != nil {
				t.Fatal(err)
			}
			return Decide(pr.Effective, req, r.Env).Outcome
		}
		f, c := decide(files), decide(cluster)
		if f.Verdict != c.Verdict || f.Code != c.Code {
			t.Errorf("%s: files %s %d, cluster %s %d (%+v)", name, f.Verdict, f.Code, c.Verdict, c.Code, c.Why)
		}
	}

	// A live read that could not list Secrets says so where a Secret is missing.
	refused := load(t, topo+identityPolicy)
	refused.Secrets = nil
	refused.Warnings = append(refused.Warnings, snapshot.Warning{Kind: "secrets", Message: "cannot list secrets in all namespaces: forbidden"})
	r := Compute(topology.BuildGraph(refused))
	pr, err := r.ForPrefix("infra/gw", "a", "app/all", "named")
	if err != nil {
		t.Fatal(err)
	}
	o := Decide(pr.Effective, Request{Method: "GET", Host: "api.example.com", Path: "/toys", Headers: map[string]string{}, Identity: ids["alice's key"], Time: at}, r.Env).Outcome
	if o.Verdict != OutcomeIndeterminate || !hasUnread(o.Why, "cannot list secrets in all namespaces: forbidden") {
		t.Errorf("refused Secrets: %s: %+v", o.Verdict, o.Why)
	}
}

// hasUnread reports whether an authentication rule's result in w quotes msg, the
// refusal of a live read.
func hasUnread(w Why, msg string) bool {
	for _, p := range w.Parts {
		if slices.Contains(p.Why.Unread, msg) {
			return true
		}
	}
	return false
}
