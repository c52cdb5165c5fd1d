package effective

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agpol/agpol/internal/cluster"
	"github.com/agpol/agpol/internal/snapshot"
)

func load(t *testing.T, docs ...string) *snapshot.Snapshot {
	t.Helper()
	f := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(f, []byte(strings.Join(docs, "\n---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := cluster.LoadFiles(cluster.FileOptions{Filenames: []string{f}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pol: an XAccessPolicy in ns "a" on the given targets ("Gateway/gw", "XBackend/xb", ...).
func pol(name, created, action string, targets []string, extra string) string {
	var refs []string
	for _, t := range targets {
		kind, n, _ := strings.Cut(t, "/")
		g := "gateway.networking.k8s.io"
		if kind == "XBackend" {
			g = "agentic.networking.x-k8s.io"
		}
		refs = append(refs, fmt.Sprintf("{group: %s, kind: %s, name: %s}", g, kind, n))
	}
	s := fmt.Sprintf("apiVersion: agentic.networking.x-k8s.io/v1alpha1\nkind: XAccessPolicy\nmetadata: {name: %s, namespace: a, creationTimestamp: %q}\nspec:\n  targetRefs: [%s]\n  action: %s\n",
		name, created, strings.Join(refs, ", "), action)
	if action == "ExternalAuth" {
		s += "  externalAuth: {protocol: GRPC, backendRef: {name: z, port: 1}, grpc: {}}\n"
	}
	return s + extra
}

func day(d int) string { return fmt.Sprintf("2026-01-%02dT00:00:00Z", d) }

func admitted(t *testing.T, s *snapshot.Snapshot, sem Semantics) map[string]Admission {
	out := map[string]Admission{}
	for p, a := range Admit(s, sem) {
		out[p.Name] = a
	}
	return out
}

// docs/semantics.md#admission: limit per target by seniority, ExternalAuth seniority, CEL, all targets.
func TestAdmission(t *testing.T) {
	gw := []string{"Gateway/gw"}
	var six []string
	for i := 1; i <= 6; i++ {
		six = append(six, pol(fmt.Sprintf("p%d", i), day(i), "Allow", gw, ""))
	}
	cases := []struct {
		name   string
		docs   []string
		sem    func(*Semantics)
		reason map[string]string // name → reason ("Accepted" for accepted)
		msg    map[string]string
	}{
		{name: "five per target, the sixth junior is rejected", docs: six,
			reason: map[string]string{"p1": ReasonAccepted, "p5": ReasonAccepted, "p6": ReasonLimit},
			msg:    map[string]string{"p6": "Maximum number of AccessPolicies (5) exceeded for target gw"}},
		{name: "seniority tie broken by name", docs: append(append([]string{}, six[:5]...), pol("a0", day(5), "Allow", gw, ""), pol("z9", day(5), "Allow", gw, "")),
			reason: map[string]string{"a0": ReasonAccepted, "p5": ReasonLimit, "z9": ReasonLimit}},
		{name: "other namespaces and other targets do not count", docs: append(append([]string{}, six[:5]...),
			strings.Replace(pol("other-ns", day(6), "Allow", gw, ""), "namespace: a", "namespace: b", 1),
			pol("other-target", day(6), "Allow", []string{"Gateway/gw2"}, "")),
			reason: map[string]string{"other-ns": ReasonAccepted, "other-target": ReasonAccepted}},
		{name: "limit-per-target rejected and v0alpha0 policies count as seniors", docs: append(append([]string{}, six...),
			pol("p7", day(7), "Allow", gw, "")),
			reason: map[string]string{"p6": ReasonLimit, "p7": ReasonLimit}},
		{name: "one ExternalAuth per target", docs: []string{pol("e1", day(1), "ExternalAuth", gw, ""), pol("e2", day(2), "ExternalAuth", gw, ""), pol("allow", day(3), "Allow", gw, "")},
			reason: map[string]string{"e1": ReasonAccepted, "e2": ReasonLimit, "allow": ReasonAccepted},
			msg:    map[string]string{"e2": "An older ExternalAuth AccessPolicy already exists for target gw"}},
		{name: "legacy controller: no ExternalAuth seniority", docs: []string{pol("e1", day(1), "ExternalAuth", gw, ""), pol("e2", day(2), "ExternalAuth", gw, "")},
			sem:    func(s *Semantics) { *s, _ = Preset(PresetLegacy) },
			reason: map[string]string{"e2": ReasonAccepted}},
		{name: "one failing target rejects every target", docs: append(append([]string{}, six[:5]...),
			pol("multi", day(9), "Allow", []string{"Gateway/gw2", "Gateway/gw"}, "")),
			reason: map[string]string{"multi": ReasonLimit}},
		{name: "invalid CEL variable", docs: []string{pol("c", day(1), "Allow", gw, "  rules:\n  - name: r\n    authorization: {type: CEL, cel: {expression: \"request.foo == 1\"}}\n")},
			reason: map[string]string{"c": ReasonInvalidCEL},
			msg:    map[string]string{"c": `Failed to compile CEL expression "request.foo == 1": unsupported CEL variable: request.foo`}},
		{name: "undeclared CEL root", docs: []string{pol("c", day(1), "Allow", gw, "  rules:\n  - name: r\n    authorization: {type: CEL, cel: {expression: \"identity.sub == 'x'\"}}\n")},
			reason: map[string]string{"c": ReasonInvalidCEL}},
		{name: "allowed CEL prefix check", docs: []string{pol("c", day(1), "Allow", gw, "  rules:\n  - name: r\n    authorization: {type: CEL, cel: {expression: \"request.pathX == 'a' || request.headers['x'] == 'y'\"}}\n")},
			reason: map[string]string{"c": ReasonAccepted}},
		{name: "target-kinds reference: any target kind admitted", docs: []string{pol("r", day(1), "Allow", []string{"HTTPRoute/x"}, "")},
			reason: map[string]string{"r": ReasonAccepted}},
		{name: "target-kinds proposal-0059: only Gateway and XBackend", docs: []string{pol("r", day(1), "Allow", []string{"HTTPRoute/x"}, "")},
			sem:    func(s *Semantics) { *s, _ = Preset(PresetProposal) },
			reason: map[string]string{"r": ReasonInvalidTargetKind}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sem := Reference()
			if tc.sem != nil {
				tc.sem(&sem)
			}
			got := admitted(t, load(t, tc.docs...), sem)
			for name, reason := range tc.reason {
				a, ok := got[name]
				if !ok {
					t.Fatalf("no admission for %s", name)
				}
				if a.Reason != reason || a.Accepted != (reason == ReasonAccepted) {
					t.Errorf("%s: got %v/%s (%s), want %s", name, a.Accepted, a.Reason, a.Message, reason)
				}
				if m := tc.msg[name]; m != "" && a.Message != m {
					t.Errorf("%s: message %q, want %q", name, a.Message, m)
				}
			}
		})
	}
}

// docs/semantics.md#limit-per-target with a v0alpha0 senior: it counts toward the limit although it is never enforced.
func TestAdmissionV0alpha0Counts(t *testing.T) {
	legacy := "apiVersion: agentic.networking.x-k8s.io/v0alpha0\nkind: XAccessPolicy\nmetadata: {name: old, namespace: a, creationTimestamp: \"2025-01-01T00:00:00Z\"}\n" +
		"spec:\n  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]\n  rules:\n  - name: r\n    source: {type: ServiceAccount, serviceAccount: {name: x}}\n"
	docs := []string{legacy}
	for i := 1; i <= 5; i++ {
		docs = append(docs, pol(fmt.Sprintf("p%d", i), day(i), "Allow", []string{"Gateway/gw"}, ""))
	}
	got := admitted(t, load(t, docs...), Reference())
	if !got["old"].Accepted || got["p5"].Accepted || got["p5"].Reason != ReasonLimit {
		t.Errorf("old=%+v p5=%+v", got["old"], got["p5"])
	}
}

// Recorded status: every ancestor True → accepted; any False → rejected with its reason;
// computed and recorded compared.
func TestAdmissionRecorded(t *testing.T) {
	status := func(conds ...string) string {
		s := "status:\n  ancestors:\n"
		for i, c := range conds {
			st, reason, _ := strings.Cut(c, ":")
			s += fmt.Sprintf("  - ancestorRef: {name: t%d}\n    controllerName: c\n    conditions:\n    - {type: Accepted, status: %q, reason: %s, message: m%d, lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n", i, st, reason, i)
		}
		return s
	}
	s := load(t,
		pol("ok", day(1), "Allow", []string{"Gateway/gw"}, status("True:Accepted", "True:Accepted")),
		pol("stale", day(1), "Allow", []string{"Gateway/gw2"}, status("True:Accepted", "False:InvalidCEL")),
		pol("none", day(1), "Allow", []string{"Gateway/gw3"}, ""))
	got := admitted(t, s, Reference())
	if a := got["ok"]; !a.Effective.Accepted || a.From != "recorded" || a.DiffersFromRecorded {
		t.Errorf("ok: %+v", a)
	}
	if a := got["stale"]; a.Effective.Accepted || a.Effective.Reason != "InvalidCEL" || a.Effective.Message != "m1" || !a.Accepted || !a.DiffersFromRecorded {
		t.Errorf("stale: %+v", a)
	}
	if a := got["none"]; !a.Effective.Accepted || a.From != "computed" || a.Recorded != nil {
		t.Errorf("none: %+v", a)
	}
	rec := Reference()
	rec.Admission = AdmissionRecompute
	if a := admitted(t, s, rec)["stale"]; !a.Effective.Accepted || a.From != "computed" {
		t.Errorf("recompute: %+v", a)
	}
	if c := got["stale"].Cell(); c != "True" {
		t.Errorf("cell of computed admission: %s", c)
	}
}
