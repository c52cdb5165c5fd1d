package agentic_test

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	upv0 "sigs.k8s.io/kube-agentic-networking/api/v0alpha0"
	upv1 "sigs.k8s.io/kube-agentic-networking/api/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
)

// field is one JSON field of a Go type, found by reflection.
type field struct {
	Type      string // shape: "string", "int32", "[]struct", or the qualified name of a shared type
	Omitempty bool
	// Shared is set for fields of types other packages define (metav1, Gateway API).
	Shared bool
}

// agenticPkg reports whether t is defined by upstream's or agpol's agentic API packages:
// those are compared field by field. Types of other packages (metav1, Gateway API) are
// shared by both sides and compared by identity.
func agenticPkg(t reflect.Type) bool {
	p := t.PkgPath()
	return strings.Contains(p, "sigs.k8s.io/kube-agentic-networking/api/") || strings.Contains(p, "agpol/internal/apis/agentic/")
}

// leaves are types that serialize as a scalar.
var leaves = map[reflect.Type]string{
	reflect.TypeFor[metav1.Time]():     "string",
	reflect.TypeFor[metav1.Duration](): "string",
}

func shape(t reflect.Type, deep bool) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := leaves[t]; ok {
		return s
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "[]" + shape(t.Elem(), deep)
	case reflect.Map:
		return "map[" + shape(t.Key(), deep) + "]" + shape(t.Elem(), deep)
	}
	if !deep && t.PkgPath() != "" && !agenticPkg(t) {
		return t.PkgPath() + "." + t.Name()
	}
	if t.Kind() == reflect.Struct {
		return "struct"
	}
	return t.Kind().String()
}

// fields lists every JSON field path of t ("spec.rules[].name"). With deep, it also
// descends into types of other packages (to compare with a CRD schema, which inlines them).
func fields(t reflect.Type, deep bool) map[string]field {
	out := map[string]field{}
	var walk func(t reflect.Type, prefix string, stack []reflect.Type)
	walk = func(t reflect.Type, prefix string, stack []reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			if t.Kind() != reflect.Pointer {
				prefix += "[]"
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || leaves[t] != "" || (!deep && prefix != "" && !agenticPkg(t)) {
			return
		}
		for _, s := range stack {
			if s == t {
				return // recursive type
			}
		}
		stack = append(stack, t)
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" && (f.Anonymous || strings.Contains(opts, "inline")) {
				walk(f.Type, prefix, stack)
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := name
			if prefix != "" {
				p = prefix + "." + name
			}
			out[p] = field{Type: shape(f.Type, deep), Omitempty: strings.Contains(opts, "omitempty"), Shared: !agenticPkg(t)}
			walk(f.Type, p, stack)
		}
	}
	walk(t, "", nil)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestTypesMatchPublishedModule checks agpol's types against the published upstream Go
// module (v0.1.0) in both directions: every upstream field exists in agpol with the same
// shape and optionality, and agpol adds only the documented fields of upstream main.
func TestTypesMatchPublishedModule(t *testing.T) {
	l7 := func(p string) bool {
		for _, f := range []string{"methods", "paths", "headers", "hosts", "ports"} {
			if p == "spec.rules[].authorization."+f || strings.HasPrefix(p, "spec.rules[].authorization."+f+"[]") {
				return true
			}
		}
		return false
	}
	tests := []struct {
		name          string
		upstream, own reflect.Type
		// added: fields of upstream main that v0.1.0 lacks.
		added func(path string) bool
		// optional: fields upstream main made optional that v0.1.0 requires.
		optional map[string]bool
	}{
		{
			name:     "XAccessPolicy v1alpha1",
			upstream: reflect.TypeFor[upv1.XAccessPolicy](),
			own:      reflect.TypeFor[v1alpha1.XAccessPolicy](),
			added:    l7,
			optional: map[string]bool{"spec.rules[].source": true, "spec.rules[].source.type": true},
		},
		{
			name:     "XAccessPolicy v0alpha0",
			upstream: reflect.TypeFor[upv0.XAccessPolicy](),
			own:      reflect.TypeFor[v0alpha0.XAccessPolicy](),
		},
		{
			name:     "XBackend v0alpha0",
			upstream: reflect.TypeFor[upv0.XBackend](),
			own:      reflect.TypeFor[v0alpha0.XBackend](),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up, own := fields(tt.upstream, false), fields(tt.own, false)
			if len(up) < 10 {
				t.Fatalf("only %d upstream fields found: the walk is broken", len(up))
			}
			for _, p := range sortedKeys(up) {
				u := up[p]
				o, ok := own[p]
				switch {
				case !ok:
					t.Errorf("%s: upstream field missing in agpol's type", p)
				case o.Type != u.Type:
					t.Errorf("%s: agpol has %s, upstream %s", p, o.Type, u.Type)
				case o.Omitempty != u.Omitempty && !(tt.optional[p] && o.Omitempty):
					t.Errorf("%s: omitempty is %v in agpol, %v upstream", p, o.Omitempty, u.Omitempty)
				}
			}
			for _, p := range sortedKeys(own) {
				if _, ok := up[p]; !ok && (tt.added == nil || !tt.added(p)) {
					t.Errorf("%s: agpol has a field the published module lacks, and it is not a documented addition", p)
				}
			}
			for p := range tt.optional {
				if up[p].Omitempty || !own[p].Omitempty {
					t.Errorf("%s: documented as optional in agpol and required in v0.1.0; no longer true", p)
				}
			}
			if tt.added != nil {
				n := 0
				for p := range own {
					if tt.added(p) {
						n++
						if _, inUp := up[p]; inUp {
							t.Errorf("%s: documented as an addition but the published module has it", p)
						}
					}
				}
				if n == 0 {
					t.Error("no documented addition found in agpol's type")
				}
			}
		})
	}
}

// crdProp is a property of a CRD schema.
type crdProp struct {
	Type     string
	Required bool
}

// crdPaths lists every property path of a CRD schema with its type.
func crdPaths(s *apiextv1.JSONSchemaProps, prefix string, out map[string]crdProp) {
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for name, p := range s.Properties {
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		out[path] = crdProp{Type: p.Type, Required: required[name]}
		crdPaths(&p, path, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		item := s.Items.Schema
		if item.Type == "object" || item.Type == "array" {
			crdPaths(item, prefix+"[]", out)
		}
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		crdPaths(s.AdditionalProperties.Schema, prefix+"{}", out)
	}
}

// goCRDType maps a Go shape to the CRD type it must have.
func goCRDType(shape string) string {
	switch {
	case strings.HasPrefix(shape, "[]"):
		return "array"
	case shape == "struct" || strings.HasPrefix(shape, "map["):
		return "object"
	case strings.HasPrefix(shape, "int") || strings.HasPrefix(shape, "uint"):
		return "integer"
	case shape == "bool":
		return "boolean"
	case strings.HasPrefix(shape, "float"):
		return "number"
	}
	return shape
}

// TestTypesMatchCRD checks agpol's types against the CRDs of upstream main: every
// property of the schema's spec and status exists in the Go type with a matching type,
// every Go field exists in the schema, and the agentic fields the schema requires are
// exactly those without omitempty. (Gateway API's own types mark some required fields
// omitempty; their requiredness is Gateway API's business.)
func TestTypesMatchCRD(t *testing.T) {
	tests := []struct {
		file, version string
		typ           reflect.Type
	}{
		{"agentic.networking.x-k8s.io_xaccesspolicies.yaml", "v1alpha1", reflect.TypeFor[v1alpha1.XAccessPolicy]()},
		{"agentic.networking.x-k8s.io_xaccesspolicies.yaml", "v0alpha0", reflect.TypeFor[v0alpha0.XAccessPolicy]()},
		{"agentic.networking.x-k8s.io_xbackends.yaml", "v0alpha0", reflect.TypeFor[v0alpha0.XBackend]()},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.version, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var crd apiextv1.CustomResourceDefinition
			if err := yaml.UnmarshalStrict(data, &crd); err != nil {
				t.Fatal(err)
			}
			var schema *apiextv1.JSONSchemaProps
			for _, v := range crd.Spec.Versions {
				if v.Name == tt.version && v.Schema != nil {
					schema = v.Schema.OpenAPIV3Schema
				}
			}
			if schema == nil {
				t.Fatalf("CRD has no schema for %s", tt.version)
			}
			for _, top := range []string{"spec", "status"} {
				sub, ok := schema.Properties[top]
				if !ok {
					t.Fatalf("CRD %s has no %s", tt.version, top)
				}
				crd := map[string]crdProp{}
				crdPaths(&sub, top, crd)
				goFields := map[string]field{}
				for p, f := range fields(tt.typ, true) {
					if strings.HasPrefix(p, top+".") || strings.HasPrefix(p, top+"[]") {
						goFields[p] = f
					}
				}
				if len(crd) < 5 || len(goFields) < 5 {
					t.Fatalf("%s: %d CRD properties, %d Go fields: the walk is broken", top, len(crd), len(goFields))
				}
				for _, p := range sortedKeys(crd) {
					g, ok := goFields[p]
					switch {
					case !ok:
						t.Errorf("%s: in the CRD schema, missing in agpol's Go type", p)
					case crd[p].Type != "" && goCRDType(g.Type) != crd[p].Type:
						t.Errorf("%s: CRD type %s, Go type %s", p, crd[p].Type, g.Type)
					case !g.Shared && crd[p].Required == g.Omitempty:
						t.Errorf("%s: required in the CRD: %v, omitempty in Go: %v", p, crd[p].Required, g.Omitempty)
					}
				}
				for _, p := range sortedKeys(goFields) {
					if _, ok := crd[p]; !ok {
						t.Errorf("%s: in agpol's Go type, missing in the CRD schema", p)
					}
				}
			}
		})
	}
}
