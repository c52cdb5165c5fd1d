package lint

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/snapshot"
)

func init() {
	Register(&Check{
		Code: "AGP101", Severity: SeverityError, Category: CategorySchema,
		Title: "object rejected by its CRD schema",
		Explanation: `The object fails the validation of its CustomResourceDefinition: the OpenAPI schema
(types, enums, patterns, lengths, required fields), the list-type invariants or an
x-kubernetes-validations CEL rule. The API server would refuse to create it, with the
message shown. agpol validates offline with the same code the API server runs
(k8s.io/apiextensions-apiserver), after pruning unknown fields and applying the CRD's
defaults, against the CRDs embedded in agpol (kube-agentic-networking, Kuadrant
AuthPolicy, Gateway API standard channel). As in the API server, CEL rules are not
evaluated when a basic schema error (wrong type, missing required field) is found.

Objects agpol could not read at all (a field of the wrong type) are reported here too.`,
		Fix: `Correct the field named in the message. kubectl apply --dry-run=server against a cluster
with the same CRDs reports the same error.`,
		Run: runSchemaErrors,
	})
	Register(&Check{
		Code: "AGP102", Severity: SeverityWarning, Category: CategorySchema,
		Title: "unknown field dropped by the API server",
		Explanation: `The field is not in the CRD's schema. The API server prunes unknown fields silently
(kubectl only warns, and only with server-side field validation), so the stored object
does not have it and nothing enforces it. A misspelt field name (sourec:, serviceaccount:)
or a field from a newer or older API version looks like configuration but has no
effect.`,
		Fix: `Correct the spelling or move the field to where the schema expects it; remove it if it
belongs to another API version.`,
		Run: runUnknownFields,
	})
	Register(&Check{
		Code: "AGP103", Severity: SeverityWarning, Category: CategorySchema,
		Title: "apiVersion not served by the current CRDs",
		Explanation: `No embedded CRD serves the object's group and version, so it could not be validated as
the API server would, or the current API server would not serve it at all. The usual
case is the legacy group agentic.prototype.x-k8s.io, renamed to
agentic.networking.x-k8s.io upstream (#258): no current CRD serves it and the current
controller does not read it. Such objects are still validated against the current
group's schema, and their errors reported as AGP101.`,
		Fix: `Use a served version: agentic.networking.x-k8s.io/v1alpha1 for XAccessPolicy,
agentic.networking.x-k8s.io/v0alpha0 for XBackend, kuadrant.io/v1 for AuthPolicy,
gateway.networking.k8s.io/v1 for Gateway API kinds.`,
		Run: runUnservedVersion,
	})
}

// schemaItem is the schema validation of one object.
type schemaItem struct {
	origin    snapshot.Origin
	result    crds.Result
	noSchema  error // the lookup error when no CRD serves the version
	legacy    bool  // the legacy agentic group, validated as the current one
	decodeErr error // set for undecodable objects
}

// schemaResults validates every object that has a CRD, once per context.
func schemaResults(ctx *Context) []schemaItem {
	return Memo(ctx, "schema", func() []schemaItem {
		undecodable := map[string]error{}
		for _, u := range ctx.Undecodable {
			undecodable[refOf(u.Object).Key()+"@"+u.Source.String()] = u.Err
		}
		var out []schemaItem
		for _, o := range ctx.Origins() {
			if o.Object() == nil {
				continue // built in code, not read: nothing to validate
			}
			gvk := o.Object().GroupVersionKind()
			it := schemaItem{origin: o, decodeErr: undecodable[refOf(o.Object()).Key()+"@"+o.Source.String()]}
			if gvk.Group == "" {
				if it.decodeErr != nil {
					out = append(out, it) // core kinds have no CRD; report the decode error
				}
				continue
			}
			obj := o.Object()
			if gvk.Group == agentic.LegacyGroupName {
				it.legacy = true
				gvk.Group = agentic.GroupName
				obj = obj.DeepCopy()
				obj.SetAPIVersion(gvk.GroupVersion().String())
			}
			if storedLegacy(o) {
				// Written at v0alpha0, stored (no conversion) and read back at v1alpha1
				// without spec.action: the API server validated it as v0alpha0.
				gvk.Version = v0alpha0.Version
				obj = obj.DeepCopy()
				obj.SetAPIVersion(gvk.GroupVersion().String())
			}
			v, err := crds.Lookup(gvk)
			if err != nil {
				it.noSchema = err
				out = append(out, it)
				continue
			}
			it.result = v.Validate(context.Background(), obj)
			out = append(out, it)
		}
		return out
	})
}

func runSchemaErrors(ctx *Context) []Finding {
	var out []Finding
	for _, it := range schemaResults(ctx) {
		for _, e := range it.result.Errors {
			out = append(out, schemaFinding(ctx, it.origin, e))
		}
		if it.decodeErr != nil && len(it.result.Errors) == 0 && (it.noSchema == nil || it.origin.Object().GroupVersionKind().Group == "") {
			f := ctx.Blame(it.origin, "")
			f.Message = fmt.Sprintf("agpol cannot read this object, so other checks skip it: %v", it.decodeErr)
			out = append(out, f)
		}
	}
	return out
}

func schemaFinding(ctx *Context, o snapshot.Origin, e *field.Error) Finding {
	path := e.Field
	msg := e.Error()
	if path == "<nil>" || path == "" {
		path = ""
		msg = e.Detail
	}
	f := ctx.Blame(o, path)
	f.Message = msg
	if !o.Source.IsFile() {
		f.Message += " (the stored object would be rejected if it were created today)"
	}
	return f
}

func runUnknownFields(ctx *Context) []Finding {
	var out []Finding
	for _, it := range schemaResults(ctx) {
		for _, p := range it.result.Unknown {
			f := ctx.Blame(it.origin, p)
			f.Message = fmt.Sprintf("unknown field %q: the API server drops it silently, so it has no effect", p)
			out = append(out, f)
		}
	}
	return out
}

func runUnservedVersion(ctx *Context) []Finding {
	var out []Finding
	for _, it := range schemaResults(ctx) {
		gvk := it.origin.Object().GroupVersionKind()
		switch {
		case it.legacy:
			f := ctx.Blame(it.origin, "apiVersion")
			f.Message = fmt.Sprintf("%s is the legacy group of %s: no current CRD serves it and the current controller does not read it; use %s",
				agentic.LegacyGroupName, gvk.Kind, schema.GroupVersion{Group: agentic.GroupName, Version: gvk.Version})
			out = append(out, f)
		case it.noSchema != nil && gvk.Group != "":
			f := ctx.Blame(it.origin, "apiVersion")
			f.Message = fmt.Sprintf("%s %s is not served by the CRDs agpol embeds%s, so it was not validated",
				gvk.GroupVersion(), gvk.Kind, servedVersions(gvk.Group, gvk.Kind))
			if it.decodeErr != nil {
				f.Message += "; agpol cannot read it either, so other checks skip it"
			}
			out = append(out, f)
		}
	}
	return out
}

// Rejected reports whether the API server would refuse to create the object read from
// a file (schema errors), so that it cannot affect other objects: checks that relate
// objects skip it. Objects read from a cluster exist whatever their validation says
// today, and are never considered rejected.
func (c *Context) Rejected(o snapshot.Origin) bool {
	if !o.Source.IsFile() {
		return false
	}
	rejected := Memo(c, "rejected", func() map[any]bool {
		m := map[any]bool{}
		for _, it := range schemaResults(c) {
			if len(it.result.Errors) > 0 || it.decodeErr != nil {
				m[it.origin.Object()] = true
			}
		}
		return m
	})
	return rejected[o.Object()]
}

// servedVersions is " (served: v1, v1beta1)" for a kind with an embedded CRD.
func servedVersions(group, kind string) string {
	defs, _ := crds.Definitions()
	for _, d := range defs {
		if d.Group == group && d.Kind == kind {
			return " (it serves " + strings.Join(d.Versions, ", ") + ")"
		}
	}
	return ""
}

// storedLegacy reports whether a cluster object is an XAccessPolicy read at v1alpha1
// without spec.action, the form a v0alpha0-written policy takes in storage.
func storedLegacy(o snapshot.Origin) bool {
	if o.Source.IsFile() || o.Object() == nil {
		return false
	}
	gvk := o.Object().GroupVersionKind()
	if gvk.Kind != agentic.KindXAccessPolicy || gvk.Version != v1alpha1.Version {
		return false
	}
	_, found, _ := unstructured.NestedFieldNoCopy(o.Object().Object, "spec", "action")
	return !found
}
