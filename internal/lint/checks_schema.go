package lint

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/agpol/agpol/internal/apis/agentic"
	"github.com/agpol/agpol/internal/apis/agentic/v0alpha0"
	"github.com/agpol/agpol/internal/apis/agentic/v1alpha1"
	"github.com/agpol/agpol/internal/crds"
	"github.com/agpol/agpol/internal/parallel"
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

Objects read from a cluster were validated by the API server when it stored them, so by
default they are not validated again (lint says how many it left alone: a note on
stderr, notRevalidated in JSON and SARIF). With --revalidate-live they are, against the
embedded CRDs, and an error means the stored object would be rejected if it were
created today, for instance after a CRD upgrade. XAccessPolicies written at v0alpha0
are always validated, as v0alpha0: stored at v1alpha1 they lost what its schema prunes.

Objects agpol could not read at all (a field of the wrong type) are reported here too,
wherever they were read from.`,
		Fix: `Correct the field named in the message. kubectl apply --dry-run=server against a cluster
with the same CRDs reports the same error.`,
		DataPlanes: AppliesToAll,
		Run:        runSchemaErrors,
	})
	Register(&Check{
		Code: "AGP102", Severity: SeverityWarning, Category: CategorySchema,
		Title: "unknown field dropped by the API server",
		Explanation: `The field is not in the CRD's schema. The API server prunes unknown fields silently
(kubectl only warns, and only with server-side field validation), so the stored object
does not have it and nothing enforces it. A misspelt field name (sourec:, serviceaccount:)
or a field from a newer or older API version looks like configuration but has no
effect.

A field can also be known to the version the object is written at and unknown to the
version the CRD stores it at: the kube-agentic-networking CRD stores XAccessPolicies at
v1alpha1 without a conversion webhook, so a v0alpha0 object loses its v0alpha0-only
fields (authorization.tools, rule-level externalAuth, cel.message) when it is stored.
agpol computes every answer on objects as the API server stores them: defaults applied,
such fields dropped.

Objects read from a cluster have no unknown fields left: the API server pruned them. With
--revalidate-live they are checked against the embedded CRDs, which finds the fields the
cluster's CRDs know and agpol's do not.`,
		Fix: `Correct the spelling or move the field to where the schema expects it; remove it if it
belongs to another API version.`,
		DataPlanes: AppliesToAll,
		Run:        runUnknownFields,
	})
	Register(&Check{
		Code: "AGP103", Severity: SeverityWarning, Category: CategorySchema,
		Title: "apiVersion not served by the current CRDs",
		Explanation: `No embedded CRD serves the object's group and version, so it could not be validated as
the API server would, or the current API server would not serve it at all. The usual
case is the legacy group agentic.prototype.x-k8s.io, renamed to
agentic.networking.x-k8s.io upstream (#258): no current CRD serves it and the current
controller does not read it. Such objects are still validated against the current
group's schema, and their errors reported as AGP101.

A version the cluster serves and the embedded CRDs do not is reported for objects read
from a cluster only with --revalidate-live; the legacy group always is.`,
		Fix: `Use a served version: agentic.networking.x-k8s.io/v1alpha1 for XAccessPolicy,
agentic.networking.x-k8s.io/v0alpha0 for XBackend, kuadrant.io/v1 for AuthPolicy,
gateway.networking.k8s.io/v1 for Gateway API kinds.`,
		DataPlanes: AppliesToAll,
		Run:        runUnservedVersion,
	})
}

// schemaItem is the schema validation of one object.
type schemaItem struct {
	origin    snapshot.Origin
	result    schemaResult
	noSchema  error                   // the lookup error when no CRD serves the version
	legacy    bool                    // the legacy agentic group, validated as the current one
	decodeErr error                   // set for undecodable objects
	read      schema.GroupVersionKind // the object's own group, version and kind
	gvk       schema.GroupVersionKind // what to validate the object as
	relabel   bool                    // validate the object with its apiVersion set to gvk's
}

// schemaRun is the schema validation of a whole context.
type schemaRun struct {
	items []schemaItem
	// notRevalidated counts the objects read from a cluster that were not validated again.
	notRevalidated int
}

// schemaItems returns the schema validation of the context, and records that a schema
// check reported on it (so the report says how many live objects it left alone).
func schemaItems(ctx *Context) []schemaItem {
	run := schemaResults(ctx)
	ctx.notRevalidated = run.notRevalidated
	return run.items
}

// schemaResults validates every object that has a CRD, once per context. Objects read
// from a cluster are validated only with Context.RevalidateLive, except the
// XAccessPolicies written at v0alpha0 (writtenAtV0alpha0): stored at v1alpha1, they lost
// what the v1alpha1 schema prunes, which validating them as v0alpha0 shows.
func schemaResults(ctx *Context) schemaRun {
	return Memo(ctx, "schema", func() schemaRun {
		undecodable := map[string]error{}
		for _, u := range ctx.Undecodable {
			undecodable[refOf(u.Object).Key()+"@"+u.Source.String()] = u.Err
		}
		var run schemaRun
		var out []schemaItem
		var todo []int // indexes in out of the items to validate
		for _, o := range ctx.Origins() {
			h, ok := o.Header()
			if !ok {
				continue // built in code, not read: nothing to validate
			}
			gvk := h.GroupVersionKind()
			it := schemaItem{origin: o, read: gvk, decodeErr: undecodable[originRef(o).Key()+"@"+o.Source.String()]}
			if gvk.Group == "" {
				if it.decodeErr != nil {
					out = append(out, it) // core kinds have no CRD; report the decode error
				}
				continue
			}
			legacyGroup := gvk.Group == agentic.LegacyGroupName
			if o.Source.AsStored() && !ctx.RevalidateLive && !writtenAtV0alpha0(o) {
				// Validated by the API server when stored, and pruned by it: validating
				// again against the embedded CRDs would cost most of lint's time for
				// findings about the embedded CRDs, not about the object.
				run.notRevalidated++
				it.legacy = legacyGroup // reported all the same (AGP103)
				if it.decodeErr != nil || it.legacy {
					out = append(out, it)
				}
				continue
			}
			if legacyGroup {
				it.legacy = true
				gvk.Group = agentic.GroupName
				it.relabel = true
			}
			if storedLegacy(o) {
				// Written at v0alpha0, stored (no conversion) and read back at v1alpha1
				// without spec.action: the API server validated it as v0alpha0.
				gvk.Version = v0alpha0.Version
				it.relabel = true
			}
			it.gvk = gvk
			todo = append(todo, len(out))
			out = append(out, it)
		}
		validateItems(out, todo, ctx.cache)
		run.items = out
		return run
	})
}

// validateItems validates the items at the given indexes, in parallel: objects are
// independent, and validators are safe for concurrent use (the API server shares them
// between requests). Each item is written by the one call that validates it, so the
// results, and their order, do not depend on the schedule. With a cache, an object
// validated before (the same bytes, CRDs and agpol) takes its result from there.
//
// An object validated when it was read (Inspect) takes that result. Any other object is
// validated as a fresh copy (snapshot.Origin.Fresh): decoded again from its file for this
// call alone, so that neither a copy for the validator nor every object decoded at once
// is needed.
func validateItems(items []schemaItem, todo []int, cache *Cache) {
	parallel.For(len(todo), func(n int) {
		it := &items[todo[n]]
		if in, ok := it.origin.Inspected().(*inspected); ok && in.schema != nil && in.schema.gvk == it.gvk && !it.relabel {
			it.result = in.schema.result
			return
		}
		v, err := crds.Lookup(it.gvk)
		if err != nil {
			it.noSchema = err
			return
		}
		obj := it.origin.Fresh()
		if obj == nil {
			// Not expected: an item has a header, so an object was read.
			it.decodeErr = fmt.Errorf("the object could not be decoded again for validation")
			return
		}
		if it.relabel {
			obj.SetAPIVersion(it.gvk.GroupVersion().String())
		}
		it.result = validate(v, obj, it.gvk, cache)
	})
}

// validate validates obj, which the caller owns (validation prunes and defaults it), as
// gvk with v, or takes the result from the cache.
func validate(v *crds.Validator, obj *unstructured.Unstructured, gvk schema.GroupVersionKind, cache *Cache) schemaResult {
	var key string
	if cache != nil {
		var ok bool
		if key, ok = cache.key(obj, gvk); ok {
			if r, hit := cache.get(key); hit {
				return r
			}
		}
	}
	r := resultOf(v.ValidateOwned(context.Background(), obj))
	if key != "" {
		cache.put(key, r)
	}
	return r
}

// validated is the schema validation of an object done as it was read (Inspect).
type validated struct {
	gvk    schema.GroupVersionKind
	result schemaResult
}

// inspected is what lint learns of an object as it is read (Inspect): its schema result
// (nil for an object validateItems leaves alone: core kinds, the legacy group, a version
// no CRD serves) and the strings holding hidden characters (AGP107).
type inspected struct {
	schema *validated
	hidden []hiddenField
	// pending is set while the schema result is to come from the object's admission
	// (InspectDecoding): not in the cache.
	pending *pendingValidation
}

// pendingValidation is an object Inspect found no cached result for.
type pendingValidation struct {
	gvk   schema.GroupVersionKind
	cache *Cache
	key   string // "" when there is no cache (or no key)
}

// Inspect looks at an object read from a file as it is read (cluster.FileOptions.Inspect),
// so that lint need not decode it again: it finds its hidden characters (for AGP107) and
// takes its CRD schema validation (the result for validateItems) from the cache, else
// from the object's admission, which decodes it as validation would (InspectDecoding).
// u is the object as read, which it does not change; cache is lint's (nil for none).
func Inspect(cache *Cache) func(u *unstructured.Unstructured) any {
	return func(u *unstructured.Unstructured) any {
		in := &inspected{hidden: hiddenFields(u.Object)}
		gvk := u.GroupVersionKind()
		if crds.ForAdmission(gvk) == nil {
			return in
		}
		p := &pendingValidation{gvk: gvk, cache: cache}
		if cache != nil {
			if key, ok := cache.key(u, gvk); ok {
				if r, hit := cache.get(key); hit {
					in.schema = &validated{gvk: gvk, result: r}
					return in
				}
				p.key = key
			}
		}
		in.pending = p
		return in
	}
}

// InspectDecoding validates the object Inspect found no cached result for, as the API
// server decodes it at its own version during its admission (cluster.DecodingInspector):
// the answer validating the object as read gives, without decoding it a second time.
// An object it is not called for is validated by validateItems.
func (in *inspected) InspectDecoding(v *crds.Validator, d crds.Decoding) {
	p := in.pending
	if p == nil || v.GroupVersionKind() != p.gvk {
		return
	}
	r := resultOf(v.ValidateDecoded(context.Background(), d))
	if p.key != "" {
		p.cache.put(p.key, r)
	}
	in.schema = &validated{gvk: p.gvk, result: r}
	in.pending = nil
}

func runSchemaErrors(ctx *Context) []Finding {
	var out []Finding
	for _, it := range schemaItems(ctx) {
		if lostInStorage(it) {
			continue // AGP102: the fields were dropped when the object was stored
		}
		for _, e := range it.result.Errors {
			out = append(out, schemaFinding(ctx, it.origin, e))
		}
		if it.decodeErr != nil && len(it.result.Errors) == 0 && (it.noSchema == nil || it.read.Group == "") {
			f := ctx.Blame(it.origin, "")
			f.Message = fmt.Sprintf("agpol cannot read this object, so other checks skip it: %v", it.decodeErr)
			out = append(out, f)
		}
	}
	return out
}

func schemaFinding(ctx *Context, o snapshot.Origin, e schemaError) Finding {
	path := e.Field
	msg := e.Message
	if path == "<nil>" || path == "" {
		path = ""
		msg = e.Detail
	}
	f := ctx.Blame(o, path)
	f.Message = msg
	if o.Source.AsStored() {
		f.Message += " (the stored object would be rejected if it were created today)"
	}
	return f
}

func runUnknownFields(ctx *Context) []Finding {
	// Fields the object's own version knows and the version it is stored at does not:
	// found when the object was loaded (snapshot.Dropped), by its source.
	stored := map[snapshot.Source][]snapshot.DroppedField{}
	for _, d := range ctx.Snapshot.Dropped {
		if d.StoredAt != "" {
			stored[d.Source] = append(stored[d.Source], d)
		}
	}
	var out []Finding
	for _, it := range schemaItems(ctx) {
		for _, p := range it.result.Unknown {
			f := ctx.Blame(it.origin, p)
			f.Message = fmt.Sprintf("unknown field %q: the API server drops it silently, so it has no effect", p)
			out = append(out, f)
		}
		if lostInStorage(it) {
			// Read back from a cluster (or a snapshot of one), the object fails the schema
			// of the version it was written at: it was accepted when created, so what it
			// lacks now was dropped when it was stored at v1alpha1.
			for _, e := range it.result.Errors {
				f := schemaFinding(ctx, it.origin, e)
				f.Message = fmt.Sprintf("written at %s and stored at %s (the CRD has no conversion webhook), the object lost the fields the %s schema does not have: read back, %s",
					v0alpha0.Version, v1alpha1.Version, v1alpha1.Version, e.Message)
				out = append(out, f)
			}
			continue
		}
		if len(it.result.Errors) > 0 {
			continue // not stored at all
		}
		for _, d := range stored[it.origin.Source] {
			f := ctx.Blame(it.origin, d.Path)
			f.Message = fmt.Sprintf("field %q is not in the %s schema: the API server stores the object at %s (the CRD has no conversion webhook) and drops it there, so it has no effect",
				d.Path, d.StoredAt, d.StoredAt)
			out = append(out, f)
		}
	}
	return out
}

func runUnservedVersion(ctx *Context) []Finding {
	var out []Finding
	for _, it := range schemaItems(ctx) {
		gvk := it.read
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
	if o.Source.AsStored() {
		return false
	}
	rejected := Memo(c, "rejected", func() map[*snapshot.Raw]bool {
		m := map[*snapshot.Raw]bool{}
		for _, it := range schemaResults(c).items {
			if len(it.result.Errors) > 0 || it.decodeErr != nil {
				m[it.origin.Raw()] = true
			}
		}
		return m
	})
	return rejected[o.Raw()]
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

// lostInStorage reports whether a stored object written at v0alpha0 fails the v0alpha0
// schema: the API server accepted it when it was created, so it failed only after
// storage at v1alpha1 dropped its v0alpha0-only fields.
func lostInStorage(it schemaItem) bool {
	return len(it.result.Errors) > 0 && it.origin.Source.AsStored() && writtenAtV0alpha0(it.origin)
}

// writtenAtV0alpha0 reports whether a cluster object is an XAccessPolicy written at
// v0alpha0: read at v0alpha0 (the cluster reader re-reads those at the version they
// were written at), or read at v1alpha1 without spec.action (storedLegacy).
func writtenAtV0alpha0(o snapshot.Origin) bool {
	if !o.Source.AsStored() || o.Object() == nil {
		return false
	}
	gvk := o.Object().GroupVersionKind()
	return (gvk.Kind == agentic.KindXAccessPolicy && gvk.Version == v0alpha0.Version) || storedLegacy(o)
}

// storedLegacy reports whether a cluster object is an XAccessPolicy read at v1alpha1
// without spec.action, the form a v0alpha0-written policy takes in storage.
func storedLegacy(o snapshot.Origin) bool {
	if !o.Source.AsStored() || o.Object() == nil {
		return false
	}
	gvk := o.Object().GroupVersionKind()
	if gvk.Kind != agentic.KindXAccessPolicy || gvk.Version != v1alpha1.Version {
		return false
	}
	_, found, _ := unstructured.NestedFieldNoCopy(o.Object().Object, "spec", "action")
	return !found
}
