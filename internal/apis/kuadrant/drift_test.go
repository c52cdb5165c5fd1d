package kuadrant_test

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	kuadrantv1 "github.com/agpol/agpol/internal/apis/kuadrant/v1"
)

// opaque marks where agpol keeps a subtree as raw JSON: the CRD may say anything below it.
const opaque = "opaque"

func goType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[apiextv1.JSON]():
		return opaque
	case t == reflect.TypeFor[metav1.Time]():
		return "string"
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Float32, reflect.Float64:
		return "number"
	}
	return "integer"
}

// goPaths lists the JSON field paths of t: "a.b", "a[]" for list items, "a{}" for map values.
func goPaths(t reflect.Type, prefix string, out map[string]string) {
	for {
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
			continue
		case reflect.Slice, reflect.Array:
			prefix += "[]"
			out[prefix] = goType(t.Elem())
			t = t.Elem()
			continue
		case reflect.Map:
			prefix += "{}"
			out[prefix] = goType(t.Elem())
			t = t.Elem()
			continue
		}
		break
	}
	if t.Kind() != reflect.Struct || goType(t) != "object" {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
			goPaths(f.Type, prefix, out)
			continue
		}
		p := prefix + "." + name
		out[p] = goType(f.Type)
		goPaths(f.Type, p, out)
	}
}

func crdPaths(s *apiextv1.JSONSchemaProps, prefix string, out map[string]string) {
	for name, p := range s.Properties {
		out[prefix+"."+name] = p.Type
		crdPaths(&p, prefix+"."+name, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		out[prefix+"[]"] = s.Items.Schema.Type
		crdPaths(s.Items.Schema, prefix+"[]", out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		out[prefix+"{}"] = s.AdditionalProperties.Schema.Type
		crdPaths(s.AdditionalProperties.Schema, prefix+"{}", out)
	}
}

// TestAuthPolicyMatchesCRD checks agpol's AuthPolicy types against the Kuadrant CRD in
// both directions, down to the subtrees agpol keeps as raw JSON (rule bodies, patterns).
func TestAuthPolicyMatchesCRD(t *testing.T) {
	data, err := os.ReadFile("testdata/kuadrant.io_authpolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	var schema *apiextv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == kuadrantv1.Version && v.Schema != nil {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	if schema == nil {
		t.Fatalf("CRD has no schema for %s", kuadrantv1.Version)
	}
	cp, gp := map[string]string{}, map[string]string{}
	crdPaths(schema, "", cp)
	goPaths(reflect.TypeFor[kuadrantv1.AuthPolicy](), "", gp)
	below := func(p string) bool { // inside a subtree agpol keeps opaque
		for q, typ := range gp {
			if typ == opaque && strings.HasPrefix(p, q) && p != q {
				return true
			}
		}
		return false
	}
	keys := func(m map[string]string) []string {
		var out []string
		for k := range m {
			if strings.HasPrefix(k, ".spec") || strings.HasPrefix(k, ".status") {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	if len(keys(cp)) < 10 || len(keys(gp)) < 10 {
		t.Fatalf("%d CRD paths, %d Go paths: the walk is broken", len(keys(cp)), len(keys(gp)))
	}
	for _, p := range keys(cp) {
		g, ok := gp[p]
		switch {
		case below(p):
		case !ok:
			t.Errorf("%s: in the CRD, missing in agpol's type", p)
		case g != opaque && cp[p] != "" && g != cp[p]:
			t.Errorf("%s: CRD type %s, Go type %s", p, cp[p], g)
		}
	}
	for _, p := range keys(gp) {
		if _, ok := cp[p]; !ok {
			t.Errorf("%s: in agpol's type, missing in the CRD", p)
		}
	}
}
