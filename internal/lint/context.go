package lint

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// Undecodable is an object that was read but could not be typed (a field of the
// wrong type, a version agpol does not read). It is left out of the snapshot, and
// the schema checks report why.
type Undecodable struct {
	Object *unstructured.Unstructured
	Source snapshot.Source
	Err    error
}

// Context is what checks read. Fields are plain data computed before the checks run;
// later stages (the topology graph, the decision engine) add their results here as
// fields, or lazily through Memo so that checks that share a computation pay once.
type Context struct {
	// Snapshot holds every typed object with its provenance.
	Snapshot *snapshot.Snapshot
	// Model is the snapshot's graph and AuthPolicy results, built once (internal/model).
	Model *model.Model
	// Targets indexes policies by the object they target, oldest first.
	Targets *topology.Targets
	// Undecodable lists objects left out of the snapshot because they could not be typed.
	Undecodable []Undecodable
	// Now is the time suppression expiry dates are compared with.
	Now time.Time
	// RevalidateLive validates objects read from a cluster against the embedded CRDs
	// too (AGP101, AGP102, AGP103): "would it be rejected if it were created today".
	// Off, they are left alone, since the API server validated and pruned them when it
	// stored them; the report counts them (Report.NotRevalidated).
	RevalidateLive bool

	memo           map[string]any
	cache          *Cache    // schema validation results of earlier runs (Options.Cache)
	configIssues   []Finding // suppression problems, reported by the AGP0xx checks
	notRevalidated int       // live objects a schema check left alone, for the report
}

// NewContext prepares a context for a snapshot.
func NewContext(s *snapshot.Snapshot) *Context { return NewContextOn(model.New(s)) }

// NewContextOn prepares a context for model m, sharing what m has already built.
func NewContextOn(m *model.Model) *Context {
	return &Context{Snapshot: m.Snapshot, Model: m, Targets: topology.IndexTargets(m.Snapshot), Now: time.Now()}
}

// Memo returns the value computed by f under key, computing it once per Context.
func Memo[T any](c *Context, key string, f func() T) T {
	if c.memo == nil {
		c.memo = map[string]any{}
	}
	if v, ok := c.memo[key]; ok {
		return v.(T)
	}
	v := f()
	c.memo[key] = v
	return v
}

// FromFilesOnly reports whether every object came from files (no cluster), so an
// object missing from the input may simply live elsewhere.
func (c *Context) FromFilesOnly() bool {
	for _, o := range c.Snapshot.Origins {
		if o == "cluster" {
			return false
		}
	}
	return true
}

// Blame starts a finding about a field of an object: object reference and the
// field's source position filled in.
func (c *Context) Blame(o snapshot.Origin, fieldPath string) Finding {
	return Finding{Object: originRef(o), FieldPath: fieldPath, Source: c.Snapshot.FieldPosition(o.Source, fieldPath)}
}

// originRef is refOf(o.Object()), read from the object's header so that the object is
// not decoded again (and kept) just to be named.
func originRef(o snapshot.Origin) ObjectRef {
	h, ok := o.Header()
	if !ok {
		return ObjectRef{}
	}
	return ObjectRef{APIVersion: h.APIVersion, Kind: h.Kind, Namespace: h.Namespace, Name: h.Name}
}

func refOf(u *unstructured.Unstructured) ObjectRef {
	if u == nil {
		return ObjectRef{}
	}
	return ObjectRef{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Origins lists every object of the snapshot (all kinds, core kinds included), in
// snapshot order, followed by the undecodable objects.
func (c *Context) Origins() []snapshot.Origin {
	out := c.Snapshot.Objects()
	for _, u := range c.Undecodable {
		out = append(out, snapshot.NewOrigin(u.Source, snapshot.NewRaw(u.Object)))
	}
	return out
}
