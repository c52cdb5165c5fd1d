package crds

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func validate(t *testing.T, u *unstructured.Unstructured) Result {
	t.Helper()
	v, err := Lookup(u.GroupVersionKind())
	if err != nil {
		t.Fatalf("%s: %v", u.GetName(), err)
	}
	return v.Validate(context.Background(), u)
}

func TestUpstreamValidExamplesPass(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/lint/upstream/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no upstream valid examples found")
	}
	for _, f := range files {
		for _, o := range readObjects(t, f) {
			res := validate(t, o.Object())
			if len(res.Errors) > 0 || len(res.Unknown) > 0 {
				t.Errorf("%s: want valid, got errors %v, unknown fields %v", f, res.Errors, res.Unknown)
			}
		}
	}
}

func TestUpstreamInvalidExamplesRejected(t *testing.T) {
	// The API server's messages for each upstream invalid example.
	want := map[string]string{
		"backend-both.yaml":                              "spec.mcp: Invalid value: exactly one of the fields in [serviceName hostname] must be set",
		"cel-missing-fields.yaml":                        "spec.rules[0].authorization: Invalid value: cel must be specified when type is set to 'CEL'",
		"policy-v1alpha1-invalid-mcp-method-params.yaml": "Params can only be specified for get, call, subscribe, unsubscribe, or read methods",
		"policy-v1alpha1-wrong-action-ext-auth.yaml":     "spec: Invalid value: externalAuth must be specified when action is set to 'ExternalAuth'",
		"policy-v1alpha1-wrong-target-kind.yaml":         "spec.targetRefs: Invalid value: All targetRefs must have the same Kind",
		"policy-wrong-authz-type.yaml":                   "spec.rules[0].authorization.type: Unsupported value: \"InvalidTypeEnum\": supported values: \"Inline\", \"CEL\"",
	}
	files, _ := filepath.Glob("../../testdata/lint/upstream/invalid/*.yaml")
	if len(files) != len(want) {
		t.Fatalf("found %d invalid examples, the test knows %d", len(files), len(want))
	}
	for _, f := range files {
		msg, ok := want[filepath.Base(f)]
		if !ok {
			t.Errorf("%s: no expected message", f)
			continue
		}
		for _, o := range readObjects(t, f) {
			res := validate(t, o.Object())
			if len(res.Errors) == 0 {
				t.Errorf("%s: want rejected, got valid", f)
				continue
			}
			if got := res.Errors.ToAggregate().Error(); !strings.Contains(got, msg) {
				t.Errorf("%s:\n got  %s\n want %s", f, got, msg)
			}
		}
	}
}

func TestExamplesOfEveryKindPass(t *testing.T) {
	seen := map[string]bool{}
	for _, o := range readObjects(t, "../../testdata/examples") {
		gvk := o.Object().GroupVersionKind()
		v, err := Lookup(gvk)
		if errors.Is(err, ErrNoSchema) {
			continue // core kinds, agpol's own request files: no CRD
		}
		if err != nil {
			t.Fatal(err)
		}
		seen[gvk.Kind] = true
		res := v.Validate(context.Background(), o.Object())
		if len(res.Errors) > 0 || len(res.Unknown) > 0 {
			t.Errorf("%s %s: want valid, got %v, unknown %v", gvk.Kind, o.Object().GetName(), res.Errors, res.Unknown)
		}
	}
	for _, k := range []string{"Gateway", "HTTPRoute", "XBackend", "XAccessPolicy", "AuthPolicy"} {
		if !seen[k] {
			t.Errorf("the examples have no %s", k)
		}
	}
}

func obj(y string) *unstructured.Unstructured {
	objs, err := decodeAll(strings.NewReader(y))
	if err != nil {
		panic(err)
	}
	return objs[0].Object()
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name        string
		yaml        string
		wantErrs    []string // substrings, each must appear
		wantUnknown []string
		check       func(t *testing.T, r Result)
	}{
		{
			name: "unknown fields are reported, not rejected",
			yaml: `apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: b, namespace: ns}
spec:
  mcp: {serviceName: s, port: 80, tls: true}
  extra: 1
`,
			wantUnknown: []string{"spec.extra", "spec.mcp.tls"},
		},
		{
			name: "defaults are applied before validation",
			yaml: `apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: p, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]
  action: Allow
  rules:
  - name: r
    authorization: {type: Inline, mcp: {}}
`,
			check: func(t *testing.T, r Result) {
				got, _, _ := unstructured.NestedString(r.Defaulted.Object, "spec", "rules")
				_ = got
				rules, _, _ := unstructured.NestedSlice(r.Defaulted.Object, "spec", "rules")
				opt, _, _ := unstructured.NestedString(rules[0].(map[string]any), "authorization", "mcp", "mcpBaseProtocolMethodsOption")
				if opt != "SKIP_BASE_PROTOCOL_METHODS" {
					t.Errorf("default not applied: %q", opt)
				}
			},
		},
		{
			name: "status is dropped as on create",
			yaml: `apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: p, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]
  action: Allow
status:
  ancestors: not-a-list
`,
			check: func(t *testing.T, r Result) {
				if _, ok := r.Defaulted.Object["status"]; ok {
					t.Error("status kept")
				}
			},
		},
		{
			name: "schema errors block the CEL rules, as in the API server",
			yaml: `apiVersion: agentic.networking.x-k8s.io/v1alpha1
kind: XAccessPolicy
metadata: {name: p, namespace: ns}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: g}]
`,
			wantErrs: []string{`spec.action: Required value`, blockingMessage},
		},
		{
			name: "metadata name is validated",
			yaml: `apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: Bad_Name, namespace: ns}
spec:
  mcp: {serviceName: s, port: 80}
`,
			wantErrs: []string{`metadata.name: Invalid value: "Bad_Name"`},
		},
		{
			name: "gateway CEL rules run",
			yaml: `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: g, namespace: ns}
spec:
  gatewayClassName: c
  listeners:
  - {name: a, protocol: HTTP, port: 80, tls: {mode: Terminate, certificateRefs: [{name: c}]}}
`,
			wantErrs: []string{"spec.listeners: Invalid value: tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']"},
		},
		{
			name: "AuthPolicy validates",
			yaml: `apiVersion: kuadrant.io/v1
kind: AuthPolicy
metadata: {name: a, namespace: ns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: Service, name: x}
`,
			wantErrs: []string{"spec.targetRef"},
		},
		{
			name: "integer fields keep int64 from YAML (no float errors in CEL)",
			yaml: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: ns}
spec:
  parentRefs: [{name: g, port: 443}]
  rules:
  - backendRefs: [{name: s, port: 8080}]
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validate(t, obj(tt.yaml))
			got := r.Errors.ToAggregate()
			if len(tt.wantErrs) == 0 && got != nil {
				t.Errorf("unexpected errors: %v", got)
			}
			for _, w := range tt.wantErrs {
				if got == nil || !strings.Contains(got.Error(), w) {
					t.Errorf("want error containing %q, got %v", w, got)
				}
			}
			if strings.Join(r.Unknown, ",") != strings.Join(tt.wantUnknown, ",") {
				t.Errorf("unknown fields: got %q, want %q", r.Unknown, tt.wantUnknown)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
		})
	}
}

func TestValidateDoesNotModifyInput(t *testing.T) {
	u := obj(`apiVersion: agentic.networking.x-k8s.io/v0alpha0
kind: XBackend
metadata: {name: b, namespace: ns}
spec:
  mcp: {serviceName: s, port: 80}
  extra: 1
`)
	before := u.DeepCopy()
	validate(t, u)
	if !equalJSON(before, u) {
		t.Error("Validate modified its input")
	}
}

func equalJSON(a, b *unstructured.Unstructured) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
}

func TestLookup(t *testing.T) {
	v1, err := Lookup(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"})
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := Lookup(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"})
	if v1 != v2 {
		t.Error("validators are not cached")
	}
	for _, gvk := range []schema.GroupVersionKind{
		{Group: "gateway.networking.k8s.io", Version: "v1alpha2", Kind: "ReferenceGrant"},
		{Group: "example.com", Version: "v1", Kind: "Widget"},
		{Group: "agentic.networking.x-k8s.io", Version: "v1alpha1", Kind: "XBackend"},
	} {
		if _, err := Lookup(gvk); !errors.Is(err, ErrNoSchema) {
			t.Errorf("%v: want ErrNoSchema, got %v", gvk, err)
		}
	}
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, d := range defs {
		kinds[d.Kind] = true
	}
	for _, k := range []string{"XAccessPolicy", "XBackend", "AuthPolicy", "Gateway", "HTTPRoute", "ReferenceGrant", "GatewayClass"} {
		if !kinds[k] {
			t.Errorf("no embedded CRD for %s", k)
		}
	}
}

func TestEveryServedVersionBuilds(t *testing.T) {
	defs, err := Definitions()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		for _, v := range d.Versions {
			val, err := Lookup(schema.GroupVersionKind{Group: d.Group, Version: v, Kind: d.Kind})
			if err != nil {
				t.Errorf("%s %s: %v", d.Kind, v, err)
				continue
			}
			if err := val.checkers(); err != nil { // built on first use
				t.Errorf("%s %s: %v", d.Kind, v, err)
			}
		}
	}
}

// TestScanGroupKind: the index's head scan finds the group and kind of every embedded
// CRD as decoding it does, and gives up (so that the CRD is decoded) on layouts it does
// not read.
func TestScanGroupKind(t *testing.T) {
	fs, err := filepath.Glob("data/*.yaml")
	if err != nil || len(fs) == 0 {
		t.Fatalf("no embedded CRDs: %v", err)
	}
	for _, f := range fs {
		raw, err := data.ReadFile("data/" + filepath.Base(f))
		if err != nil {
			t.Fatal(err)
		}
		e := &crdEntry{file: "data/" + filepath.Base(f)}
		crd, err := e.load()
		if err != nil {
			t.Fatal(err)
		}
		want := schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		if got, ok := scanGroupKind(raw); !ok || got != want {
			t.Errorf("%s: scanned %v (%v), decoded %v", f, got, ok, want)
		}
	}
	for _, doc := range []string{
		"spec: {group: example.com, names: {kind: Widget}}\n",
		"spec:\n  names:\n    kind: Widget\nstatus:\n  group: example.com\n",
		"metadata:\n  group: example.com\n  names:\n    kind: Widget\n",
		"spec:\n  group: example.com\n  versions:\n  - kind: Widget\n",
	} {
		if gk, ok := scanGroupKind([]byte(doc)); ok {
			t.Errorf("scanned %v from %q", gk, doc)
		}
	}
	if gk, ok := scanGroupKind([]byte("---\n# c\nspec:\n  group: \"example.com\"\n  names:\n    plural: widgets\n    kind: Widget\n")); !ok || gk != (schema.GroupKind{Group: "example.com", Kind: "Widget"}) {
		t.Errorf("scanned %v (%v)", gk, ok)
	}
}

// TestLegacyAuthPolicyV1beta2 checks that AuthPolicy v1beta2 is validated against the
// CRD of kuadrant-operator v0.6.1 (0d571de7e44fe5315c51ec3729fe17740b030ced) and v1
// against the current one, and that CRDs leaves the legacy CRD out.
func TestLegacyAuthPolicyV1beta2(t *testing.T) {
	for _, v := range []string{"v1", "v1beta2"} {
		val, err := Lookup(schema.GroupVersionKind{Group: "kuadrant.io", Version: v, Kind: "AuthPolicy"})
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if val.storage != v {
			t.Errorf("%s: validated by a CRD storing %s", v, val.storage)
		}
	}
	if _, err := Lookup(schema.GroupVersionKind{Group: "kuadrant.io", Version: "v1beta3", Kind: "AuthPolicy"}); !errors.Is(err, ErrNoSchema) ||
		!strings.Contains(err.Error(), "serves v1)") {
		t.Errorf("v1beta3: want ErrNoSchema naming the current CRD's versions, got %v", err)
	}
	cur, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	legacy, err := LegacyCRDs()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]int{}
	for _, c := range cur {
		names[c.Name]++
	}
	if len(legacy) != 1 || legacy[0].Name != "authpolicies.kuadrant.io" || names["authpolicies.kuadrant.io"] != 1 {
		t.Errorf("legacy CRDs %d, current authpolicies %d", len(legacy), names["authpolicies.kuadrant.io"])
	}
	for n, c := range names {
		if c > 1 {
			t.Errorf("CRDs returns %s %d times", n, c)
		}
	}
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`apiVersion: kuadrant.io/v1beta2
kind: AuthPolicy
metadata: {name: p, namespace: ns}
spec:
  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}
  routeSelectors:
  - matches: [{path: {type: PathPrefix, value: /admin}}]
  when:
  - selector: request.method
    operator: lessThan
    value: GET
  rules:
    authentication:
      k: {apiKey: {selector: {}}, routeSelectors: [{hostnames: [a.example.com]}], bogus: 1}
`), &u.Object); err != nil {
		t.Fatal(err)
	}
	val, _ := Lookup(u.GroupVersionKind())
	res := val.Validate(context.Background(), u)
	if fmt.Sprint(res.Unknown) != "[spec.rules.authentication.k.bogus]" {
		t.Errorf("unknown: %v", res.Unknown)
	}
	if len(res.Errors) == 0 || res.Errors[0].Field != "spec.when[0].operator" {
		t.Errorf("errors: %v", res.Errors)
	}
}

// TestValidateDecodedIsValidateOwned: validating an object as AdmitWith decodes it at its
// own version gives what validating the object as read gives (errors, unknown fields and
// the object validated), on every example and lint fixture, and does not change the
// decoded object, which admission goes on with.
func TestValidateDecodedIsValidateOwned(t *testing.T) {
	dirs := []string{"../../testdata/examples", "../../testdata/lint/upstream/valid", "../../testdata/lint/upstream/invalid", "../../testdata/lint/checks"}
	compared := 0
	for _, o := range readObjects(t, dirs...) {
		u := o.Object()
		v := ForAdmission(u.GroupVersionKind())
		if v == nil {
			continue
		}
		want := v.ValidateOwned(context.Background(), u.DeepCopy())
		var got Result
		called := false
		admitted := u.DeepCopy()
		_, _ = v.AdmitWith(admitted, func(d Decoding) {
			called = true
			before := d.Object.DeepCopy()
			got = v.ValidateDecoded(context.Background(), d)
			if got.Defaulted != nil {
				got.Defaulted = got.Defaulted.DeepCopy() // admission goes on changing d.Object
			}
			if !reflect.DeepEqual(d.Object, before) {
				t.Errorf("%s %s: ValidateDecoded changed the decoded object", u.GetKind(), u.GetName())
			}
		})
		if !called {
			t.Errorf("%s %s: AdmitWith did not call atVersion", u.GetKind(), u.GetName())
			continue
		}
		compared++
		if fmt.Sprint(got.Errors) != fmt.Sprint(want.Errors) || !reflect.DeepEqual(got.Unknown, want.Unknown) {
			t.Errorf("%s %s:\n got errors %v unknown %v\nwant errors %v unknown %v", u.GetKind(), u.GetName(), got.Errors, got.Unknown, want.Errors, want.Unknown)
		}
		if (got.Defaulted == nil) != (want.Defaulted == nil) || got.Defaulted != nil && !reflect.DeepEqual(got.Defaulted.Object, want.Defaulted.Object) {
			t.Errorf("%s %s: validated\n%v\nwant\n%v", u.GetKind(), u.GetName(), got.Defaulted, want.Defaulted)
		}
	}
	if compared < 50 {
		t.Errorf("only %d objects compared", compared)
	}
}
