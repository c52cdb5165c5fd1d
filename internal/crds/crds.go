// Package crds owns the CustomResourceDefinitions of the kinds agpol reads
// (kube-agentic-networking XAccessPolicy and XBackend, Kuadrant AuthPolicy, and
// the Gateway API GatewayClass, Gateway, HTTPRoute, ReferenceGrant and ListenerSet of the
// standard channel), embedded in the binary, and validates objects against
// them offline the way the API server does on create: unknown fields pruned
// (and reported), defaults applied, status dropped when the CRD has a status
// subresource, then object metadata, the OpenAPI schema, list-type invariants
// and the x-kubernetes-validations CEL rules, with the API server's messages.
//
// A CRD is decoded on the first use of its kind, and validators are built once per
// CRD version, on first use; both are safe for concurrent use.
package crds

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/agpol/agpol/internal/apis/agentic"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	schemacel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/operation"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

//go:embed data/*.yaml
var data embed.FS

// ErrNoSchema is returned by Lookup for a group/version/kind no embedded CRD serves.
var ErrNoSchema = errors.New("no embedded CRD serves this kind and version")

// Definition is one embedded CRD, as metadata for listings.
type Definition struct {
	// File is the embedded file name (e.g. "gateway.networking.k8s.io_gateways.yaml").
	File     string
	Group    string
	Kind     string
	Resource string   // plural resource name
	Versions []string // served versions, in CRD order
	// BundleVersion is the upstream release recorded in the CRD's annotations, if any.
	BundleVersion string
}

type crdEntry struct {
	file string
	once sync.Once
	crd  *apiextv1.CustomResourceDefinition
	err  error

	mu         sync.Mutex
	validators map[string]*Validator
}

var (
	indexOnce sync.Once
	index     map[schema.GroupKind][]*crdEntry
	ordered   []*crdEntry // the index's entries, in file name order
	indexErr  error

	defsOnce sync.Once
	defs     []Definition
	defsErr  error
)

// buildIndex maps each embedded CRD's group and kind to its file, reading only the head
// of each file: decoding all of them (1.3 MB of YAML) costs far more than validating a
// few objects needs, as when only XAccessPolicies written at v0alpha0 are validated.
// A CRD is decoded in full on first use (crdEntry.load).
func buildIndex() {
	index = map[schema.GroupKind][]*crdEntry{}
	files, err := fs.Glob(data, "data/*.yaml")
	if err != nil {
		indexErr = err
		return
	}
	sort.Strings(files)
	for _, f := range files {
		e := &crdEntry{file: f, validators: map[string]*Validator{}}
		raw, err := data.ReadFile(f)
		if err != nil {
			indexErr = fmt.Errorf("reading embedded CRD %s: %w", f, err)
			return
		}
		gk, ok := scanGroupKind(raw)
		if !ok {
			// Not in the layout scanGroupKind reads: decode it to know.
			crd, err := e.load()
			if err != nil {
				indexErr = err
				return
			}
			gk = schema.GroupKind{Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind}
		}
		index[gk] = append(index[gk], e)
		ordered = append(ordered, e)
	}
}

// scanGroupKind reads spec.group and spec.names.kind from the head of a CRD in the
// block layout controller-gen writes (two spaces per level); ok is false when it does
// not find both, and the caller decodes the CRD instead. TestScanGroupKind checks it
// against the decoded CRD for every embedded file.
func scanGroupKind(raw []byte) (gk schema.GroupKind, ok bool) {
	inSpec, inNames := false, false
	for len(raw) > 0 {
		var line []byte
		if i := bytes.IndexByte(raw, '\n'); i >= 0 {
			line, raw = raw[:i], raw[i+1:]
		} else {
			line, raw = raw, nil
		}
		line = bytes.TrimRight(line, " \r")
		indent := len(line) - len(bytes.TrimLeft(line, " "))
		text := string(line[indent:])
		switch {
		case text == "" || text[0] == '#' || text == "---":
			continue
		case indent == 0:
			if inSpec {
				return gk, false // spec ended without both
			}
			inSpec = text == "spec:"
		case !inSpec:
		case indent == 2:
			inNames = text == "names:"
			if v, found := strings.CutPrefix(text, "group: "); found {
				gk.Group = strings.Trim(v, `"'`)
			}
		case indent == 4 && inNames:
			if v, found := strings.CutPrefix(text, "kind: "); found {
				gk.Kind = strings.Trim(v, `"'`)
			}
		}
		if gk.Group != "" && gk.Kind != "" {
			return gk, true
		}
	}
	return gk, false
}

func (e *crdEntry) load() (*apiextv1.CustomResourceDefinition, error) {
	e.once.Do(func() {
		raw, err := data.ReadFile(e.file)
		if err != nil {
			e.err = fmt.Errorf("reading embedded CRD %s: %w", e.file, err)
			return
		}
		crd := &apiextv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, crd); err != nil {
			e.err = fmt.Errorf("decoding embedded CRD %s: %w", e.file, err)
			return
		}
		e.crd = crd
	})
	return e.crd, e.err
}

// entries returns the index entries in file order.
func entries() ([]*crdEntry, error) {
	indexOnce.Do(buildIndex)
	if indexErr != nil {
		return nil, indexErr
	}
	return ordered, nil
}

// Definitions lists the embedded CRDs, sorted by file name. It decodes every CRD.
func Definitions() ([]Definition, error) {
	defsOnce.Do(func() {
		es, err := entries()
		if err != nil {
			defsErr = err
			return
		}
		for _, e := range es {
			crd, err := e.load()
			if err != nil {
				defsErr = err
				return
			}
			d := Definition{File: path.Base(e.file), Group: crd.Spec.Group, Kind: crd.Spec.Names.Kind, Resource: crd.Spec.Names.Plural,
				BundleVersion: crd.Annotations["gateway.networking.k8s.io/bundle-version"]}
			for _, v := range crd.Spec.Versions {
				if v.Served {
					d.Versions = append(d.Versions, v.Name)
				}
			}
			defs = append(defs, d)
		}
	})
	return defs, defsErr
}

// ForAdmission is the validator that admits an object of gvk read from a file as the API
// server would: nil for core kinds (no CRD), the legacy agentic group (reported, not
// admitted) and a version no embedded CRD serves.
func ForAdmission(gvk schema.GroupVersionKind) *Validator {
	if gvk.Group == "" || gvk.Group == agentic.LegacyGroupName {
		return nil
	}
	v, err := Lookup(gvk)
	if err != nil {
		return nil
	}
	return v
}

// Lookup returns the validator for a group/version/kind, building it on first use
// (and decoding its CRD on the first use of the kind). It is safe for concurrent use.
// It returns an error wrapping ErrNoSchema when no embedded CRD serves gvk.
func Lookup(gvk schema.GroupVersionKind) (*Validator, error) {
	indexOnce.Do(buildIndex)
	if indexErr != nil {
		return nil, indexErr
	}
	es, ok := index[gvk.GroupKind()]
	if !ok {
		return nil, fmt.Errorf("%s: %w", gvk.GroupKind(), ErrNoSchema)
	}
	// A kind may have several embedded CRDs: the current one and the CRD of an older
	// release that served a version the current one no longer serves (legacyFile).
	e := es[0]
	for _, c := range es {
		if !legacyFile(c.file) {
			e = c // the current CRD names what it serves when no CRD serves gvk
			break
		}
	}
	for _, c := range es {
		crd, err := c.load()
		if err != nil {
			return nil, err
		}
		if servesVersion(crd, gvk.Version) {
			e = c
			break
		}
	}
	crd, err := e.load()
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if v, ok := e.validators[gvk.Version]; ok {
		return v, nil
	}
	v, err := newValidator(crd, gvk)
	if err != nil {
		return nil, err
	}
	e.validators[gvk.Version] = v
	return v, nil
}

func servesVersion(crd *apiextv1.CustomResourceDefinition, version string) bool {
	for _, v := range crd.Spec.Versions {
		if v.Name == version && v.Served {
			return true
		}
	}
	return false
}

// legacyFile reports whether an embedded file is the CRD of an older release, kept for
// a version the current CRD no longer serves (named "<group>_<plural>-<version>.yaml",
// e.g. kuadrant.io_authpolicies-v1beta2.yaml: kuadrant-operator v0.6.1). It has the
// same name as the current CRD, so CRDs does not return it.
func legacyFile(file string) bool {
	b := path.Base(file)
	return strings.Contains(b[strings.LastIndex(b, "_")+1:], "-")
}

// Validator validates objects of one CRD version.
type Validator struct {
	gvk        schema.GroupVersionKind
	storage    string // the version the CRD stores objects at
	namespaced bool
	hasStatus  bool
	structural *structuralschema.Structural
	// The schema and CEL validators are built on first use (checkers): only validation
	// (lint) needs them, and building them cost 3-4% of a command that only admits
	// objects (describe gateway on the large topology, bench/run.sh).
	internal  *apiextensions.JSONSchemaProps
	checkOnce sync.Once
	checkErr  error
	openapi   apiservervalidation.SchemaValidator
	cel       *schemacel.Validator
	// limits are the schema's paths to a maxItems (LongLists), built on first use.
	limitsOnce sync.Once
	limits     *listLimits
}

// checkers builds the schema and CEL validators, once.
func (v *Validator) checkers() error {
	v.checkOnce.Do(func() {
		sv, _, err := apiservervalidation.NewSchemaValidator(v.internal)
		if err != nil {
			v.checkErr = fmt.Errorf("building the validator of %s: %w", v.gvk, err)
			return
		}
		v.openapi = sv
		v.cel = schemacel.NewValidator(v.structural, true, celconfig.PerCallLimit)
	})
	return v.checkErr
}

func newValidator(crd *apiextv1.CustomResourceDefinition, gvk schema.GroupVersionKind) (*Validator, error) {
	var ver *apiextv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Name == gvk.Version && crd.Spec.Versions[i].Served {
			ver = &crd.Spec.Versions[i]
		}
	}
	if ver == nil {
		var served []string
		for _, v := range crd.Spec.Versions {
			if v.Served {
				served = append(served, v.Name)
			}
		}
		return nil, fmt.Errorf("%s %s (the CRD serves %s): %w", gvk.GroupKind(), gvk.Version, strings.Join(served, ", "), ErrNoSchema)
	}
	v := &Validator{gvk: gvk, namespaced: crd.Spec.Scope == apiextv1.NamespaceScoped}
	for _, sv := range crd.Spec.Versions {
		if sv.Storage {
			v.storage = sv.Name
		}
	}
	v.hasStatus = ver.Subresources != nil && ver.Subresources.Status != nil
	if ver.Schema == nil || ver.Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CRD %s version %s has no schema", crd.Name, gvk.Version)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(ver.Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("converting the schema of %s %s: %w", crd.Name, gvk.Version, err)
	}
	ss, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("the schema of %s %s is not structural: %w", crd.Name, gvk.Version, err)
	}
	v.structural = ss
	v.internal = internal
	return v, nil
}

// GroupVersionKind is what this validator validates.
func (v *Validator) GroupVersionKind() schema.GroupVersionKind { return v.gvk }

// Namespaced reports whether the CRD's objects live in a namespace (GatewayClass does not).
func (v *Validator) Namespaced() bool { return v.namespaced }

// Result is what validating one object found.
type Result struct {
	// Unknown lists the fields the API server would drop silently (pruning), as
	// field paths like "spec.rules[0].foo", in the order found.
	Unknown []string
	// Errors are what the API server would reject the object for, with its messages.
	Errors field.ErrorList
	// Defaulted is the object after pruning and defaulting, as it would be stored
	// (status removed when the CRD has a status subresource).
	Defaulted *unstructured.Unstructured
}

// blockingMessage is what the API server appends when it skips the CEL rules.
const blockingMessage = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// Validate validates a copy of obj as a create request would: the object itself is not modified.
func (v *Validator) Validate(ctx context.Context, obj *unstructured.Unstructured) Result {
	return v.ValidateOwned(ctx, obj.DeepCopy())
}

// ValidateOwned is Validate for an object the caller owns and no longer needs as it
// was: it validates u itself, without a copy, pruning and defaulting it on the way
// (Result.Defaulted is u, when set).
func (v *Validator) ValidateOwned(ctx context.Context, u *unstructured.Unstructured) Result {
	res := v.DefaultOwned(u)
	if res.Defaulted != nil {
		res.Errors = v.validate(ctx, u)
	}
	return res
}

// DefaultOwned does what ValidateOwned does before validating: metadata coercion,
// pruning, defaulting (Result.Defaulted is u, unless decoding fails). The schema and
// CEL rules are not checked.
func (v *Validator) DefaultOwned(u *unstructured.Unstructured) Result {
	var res Result
	if errs := v.validateTypeMeta(u); len(errs) > 0 {
		res.Errors = errs
		return res
	}
	unknown, ferr := v.decode(u)
	res.Unknown = unknown
	if ferr != nil {
		res.Errors = field.ErrorList{ferr}
		return res
	}
	// PrepareForCreate: create cannot set status.
	if v.hasStatus {
		delete(u.Object, "status")
	}
	res.Defaulted = u
	return res
}

// ValidateDecoded is what ValidateOwned returns for the object as read that d decoded
// (AdmitWith): the same checks, on d.Object without its status when the CRD has a status
// subresource, without decoding again and without changing d.Object. Decoding does not
// change apiVersion and kind, so checking them on d.Object is checking them as read.
// Result.Defaulted shares d.Object's fields, which the rest of the admission changes.
func (v *Validator) ValidateDecoded(ctx context.Context, d Decoding) Result {
	var res Result
	if errs := v.validateTypeMeta(d.Object); len(errs) > 0 {
		res.Errors = errs
		return res
	}
	res.Unknown = d.Unknown
	if d.Err != nil {
		res.Errors = field.ErrorList{d.Err}
		return res
	}
	u := d.Object
	if _, has := u.Object["status"]; has && v.hasStatus {
		// PrepareForCreate: create cannot set status. A shallow copy: validation reads only.
		top := maps.Clone(u.Object)
		delete(top, "status")
		u = &unstructured.Unstructured{Object: top}
	}
	res.Defaulted = u
	res.Errors = v.validate(ctx, u)
	return res
}

// decode is what the API server does to a custom resource it decodes
// (customresource_handler.go): metadata coercion, pruning of unknown fields,
// defaulting. It returns the dropped fields' paths, sorted.
func (v *Validator) decode(u *unstructured.Unstructured) ([]string, *field.Error) {
	objectMeta, foundMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object,
		schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return unknown, field.Invalid(field.NewPath("metadata"), nil, err.Error())
	}
	unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, v.structural, true,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, v.structural)
	ferr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, v.structural, false,
		schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
	unknown = append(unknown, paths...)
	if ferr != nil {
		return unknown, ferr
	}
	if foundMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return unknown, field.Invalid(field.NewPath("metadata"), nil, err.Error())
		}
	}
	structuraldefaulting.Default(u.Object, v.structural)
	sort.Strings(unknown) // pruning walks maps in random order
	return unknown, nil
}

// Admission is what the API server does to an object before it stores it.
type Admission struct {
	// Dropped are the fields the API server drops (not in the schema of the object's
	// version), as field paths.
	Dropped []string
	// DroppedStored are the fields it drops when it stores the object at another
	// version (StoredAt) that lacks them: the CRD converts without a webhook, so the
	// stored object is only relabelled, and read back without them.
	DroppedStored []string
	StoredAt      string
	// LongLists are the lists over their CRD's maxItems: the API server refuses the
	// object (nothing is dropped; the object cannot exist in a cluster).
	LongLists []LongList
}

// Admit does to u, in place, what the API server does to an object before storing it,
// as far as the object's content goes: pruning of unknown fields, defaulting from the
// CRD's structural schema, and, when the CRD stores another version without a
// conversion webhook, pruning and defaulting at that version too (the object keeps its
// apiVersion: it is what a read at its own version returns). Status is kept (a file may
// record it). It does not validate; an error means the object's metadata could not be
// read, and u is then left partly admitted.
func (v *Validator) Admit(u *unstructured.Unstructured) (Admission, error) {
	return v.AdmitWith(u, nil)
}

// Decoding is an object as the API server decodes it at its own version: metadata
// coerced, unknown fields pruned, defaults set, status kept (Admit's first step).
type Decoding struct {
	Object *unstructured.Unstructured
	// Unknown are the fields dropped, sorted; Err is why decoding failed (nil if it did not).
	Unknown []string
	Err     *field.Error
}

// AdmitWith is Admit, calling atVersion (when set) with u as decoded at its own version,
// before the storage version's step, so that the caller can validate it
// (ValidateDecoded) without decoding it again. atVersion must not change the object.
func (v *Validator) AdmitWith(u *unstructured.Unstructured, atVersion func(Decoding)) (Admission, error) {
	var a Admission
	dropped, ferr := v.decode(u)
	a.Dropped = dropped
	if atVersion != nil {
		atVersion(Decoding{Object: u, Unknown: dropped, Err: ferr})
	}
	if ferr != nil {
		return a, ferr
	}
	a.LongLists = v.LongLists(u.Object)
	if v.storage == "" || v.storage == v.gvk.Version {
		return a, nil
	}
	sv, err := Lookup(v.gvk.GroupKind().WithVersion(v.storage))
	if err != nil {
		return a, nil // the storage version is not served: nothing reads it back
	}
	a.StoredAt = v.storage
	a.DroppedStored, ferr = sv.decode(u)
	if ferr != nil {
		return a, ferr
	}
	return a, nil
}

func (v *Validator) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != v.gvk.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), fmt.Sprintf("must be %v", v.gvk.Kind)))
	}
	if want := v.gvk.GroupVersion().String(); u.GetAPIVersion() != want {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), fmt.Sprintf("must be %v", want)))
	}
	return errs
}

// validate is customResourceStrategy.Validate.
func (v *Validator) validate(ctx context.Context, u *unstructured.Unstructured) field.ErrorList {
	if err := v.checkers(); err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var errs field.ErrorList
	errs = append(errs, validateObjectMeta(ctx, u, v.namespaced)...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.UnstructuredContent(), v.openapi)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, v.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, v.structural, u.Object)...)
	if blocked, e := hasBlockingErr(errs); blocked {
		errs = append(errs, e)
	} else {
		celErrs, _ := v.cel.Validate(ctx, nil, v.structural, u.Object, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
}

func validateObjectMeta(ctx context.Context, u *unstructured.Unstructured, namespaced bool) field.ErrorList {
	raw := u.Object["metadata"]
	meta := &metav1.ObjectMeta{}
	if raw != nil {
		m, ok := raw.(map[string]any)
		if !ok {
			return field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, meta); err != nil {
			return field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
		}
	}
	return metavalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, meta, nil, namespaced,
		metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"), false)
}

func hasBlockingErr(errs field.ErrorList) (bool, *field.Error) {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true, field.Invalid(nil, nil, blockingMessage)
		}
	}
	return false, nil
}

// CRDs returns the current embedded CustomResourceDefinitions, sorted by file name (to
// install them in a test API server, for instance), without the CRDs of older releases
// (LegacyCRDs). The objects are shared: do not modify them.
func CRDs() ([]*apiextv1.CustomResourceDefinition, error) {
	return crdsWhere(func(f string) bool { return !legacyFile(f) })
}

// LegacyCRDs returns the embedded CRDs of older releases, kept for versions the current
// CRDs no longer serve (AuthPolicy kuadrant.io/v1beta2 of kuadrant-operator v0.6.1).
// Each has the name of a current CRD: install it instead of that one, not beside it.
func LegacyCRDs() ([]*apiextv1.CustomResourceDefinition, error) {
	return crdsWhere(legacyFile)
}

func crdsWhere(keep func(file string) bool) ([]*apiextv1.CustomResourceDefinition, error) {
	es, err := entries()
	if err != nil {
		return nil, err
	}
	out := make([]*apiextv1.CustomResourceDefinition, 0, len(es))
	for _, e := range es {
		if !keep(e.file) {
			continue
		}
		crd, err := e.load()
		if err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	return out, nil
}
