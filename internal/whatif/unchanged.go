package whatif

import (
	"reflect"

	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/topology"
)

// objectKey names an object of a snapshot across two snapshots.
type objectKey struct{ kind, namespace, name string }

// unchangedInputs says which targets of a later snapshot decide exactly as they did in
// an earlier one: those whose every input object is the same (docs/performance.md, "diff:
// what is decided again"). It is conservative: a change it cannot trace to the
// targets it touches makes every target changed.
type unchangedInputs struct {
	// all is set when no target may be taken as unchanged.
	all bool
	// gateways and backends (XBackend or Service) whose targets changed.
	gateways, backends map[objectKey]bool
}

// unchanged reports whether the target t (of the later snapshot) has the inputs it had.
func (u *unchangedInputs) unchanged(t *Target) bool {
	if u == nil || u.all {
		return false
	}
	return !u.gateways[refKey(t.gw)] && !u.backends[refKey(t.be)]
}

func refKey(r topology.Ref) objectKey { return objectKey{r.Kind, r.Namespace, r.Name} }

// named is a typed object of a snapshot.
type named interface {
	GetNamespace() string
	GetName() string
}

// compareInputs compares two snapshots object by object (content, not where it was
// read) and finds the gateways and backends whose targets an object that differs may
// decide differently:
//   - a Gateway, its targets; an HTTPRoute, the targets of every Gateway either side
//     attaches it to (routing, the route list of a target, ext_authz filters);
//   - an XBackend, its targets; a Service, its targets and those of every XBackend of
//     its namespace; either, the targets of every Gateway a route of either side sends
//     to it;
//   - an XAccessPolicy, the targets of what either side's version targets, and of what
//     every policy sharing one of those targets targets (admission counts the policies
//     of a target); an XBackend's policies, every Gateway a route of either side sends
//     to it (the gateway's ext_authz filters);
//   - a ServiceAccount, none (it names a caller; decisions depend on the principal);
//   - any other kind, a partial read, another completeness or data-plane mapping, or
//     the same objects in another order: every target.
func compareInputs(b, a *snapshot.Snapshot) *unchangedInputs {
	u := &unchangedInputs{gateways: map[objectKey]bool{}, backends: map[objectKey]bool{}}
	if b.Partial || a.Partial || b.Complete != a.Complete || !reflect.DeepEqual(b.ClassDataPlanes, a.ClassDataPlanes) ||
		!reflect.DeepEqual(b.NotInstalled, a.NotInstalled) {
		u.all = true
		return u
	}
	// Kinds whose changes are not traced to targets.
	for _, differs := range []bool{
		len(compareKind(b.GatewayClasses, a.GatewayClasses, u)) > 0,
		len(compareKind(b.ReferenceGrants, a.ReferenceGrants, u)) > 0,
		len(compareKind(b.ListenerSets, a.ListenerSets, u)) > 0,
		len(compareKind(b.AuthPolicies, a.AuthPolicies, u)) > 0,
		len(compareKind(b.Namespaces, a.Namespaces, u)) > 0,
		len(compareKind(b.Secrets, a.Secrets, u)) > 0,
		len(compareKind(b.Roles, a.Roles, u)) > 0,
		len(compareKind(b.ClusterRoles, a.ClusterRoles, u)) > 0,
		len(compareKind(b.RoleBindings, a.RoleBindings, u)) > 0,
		len(compareKind(b.ClusterRoleBindings, a.ClusterRoleBindings, u)) > 0,
		len(compareKind(b.Kuadrants, a.Kuadrants, u)) > 0,
	} {
		if differs {
			u.all = true
		}
	}
	gateways := compareKind(b.Gateways, a.Gateways, u)
	routes := compareKind(b.HTTPRoutes, a.HTTPRoutes, u)
	xbackends := compareKind(b.XBackends, a.XBackends, u)
	services := compareKind(b.Services, a.Services, u)
	policies := compareKind(b.XAccessPolicies, a.XAccessPolicies, u)
	if u.all {
		return u
	}
	for _, g := range gateways {
		u.gateways[objectKey{"Gateway", g.Namespace, g.Name}] = true
	}
	for _, r := range routes {
		for _, p := range r.Spec.ParentRefs {
			ref, ok := topology.ParentGateway(p, r.Namespace)
			if !ok {
				u.all = true // a ListenerSet's route: not traced
				return u
			}
			u.gateways[refKey(ref)] = true
		}
	}
	for _, x := range xbackends {
		u.backends[objectKey{"XBackend", x.Namespace, x.Name}] = true
	}
	for _, s := range services {
		u.backends[objectKey{"Service", s.Namespace, s.Name}] = true
		for _, side := range [][]*snapshot.XBackend{b.XBackends, a.XBackends} {
			for _, x := range side {
				if x.Namespace == s.Namespace {
					u.backends[objectKey{"XBackend", x.Namespace, x.Name}] = true
				}
			}
		}
	}
	// A changed policy's targets, and those of every policy sharing one of them.
	targeted := map[objectKey]bool{}
	for _, p := range policies {
		for _, k := range policyTargets(p) {
			targeted[k] = true
		}
	}
	if len(targeted) > 0 {
		var shared []objectKey
		for _, side := range [][]*snapshot.XAccessPolicy{b.XAccessPolicies, a.XAccessPolicies} {
			for _, p := range side {
				ks := policyTargets(p)
				for _, k := range ks {
					if targeted[k] {
						shared = append(shared, ks...)
						break
					}
				}
			}
		}
		for _, k := range shared {
			targeted[k] = true
		}
	}
	for k := range targeted {
		switch k.kind {
		case "Gateway":
			u.gateways[k] = true
		case "XBackend":
			u.backends[k] = true
		}
	}
	// Gateways whose routes send to a changed backend.
	if len(u.backends) > 0 {
		for _, side := range [][]*snapshot.HTTPRoute{b.HTTPRoutes, a.HTTPRoutes} {
			for _, r := range side {
				if !sendsTo(r, u.backends) {
					continue
				}
				for _, p := range r.Spec.ParentRefs {
					ref, ok := topology.ParentGateway(p, r.Namespace)
					if !ok {
						u.all = true
						return u
					}
					u.gateways[refKey(ref)] = true
				}
			}
		}
	}
	return u
}

// policyTargets are the objects a policy's targetRefs name (kind, the policy's
// namespace, name; any group).
func policyTargets(p *snapshot.XAccessPolicy) []objectKey {
	out := make([]objectKey, 0, len(p.Spec.TargetRefs))
	for _, tr := range p.Spec.TargetRefs {
		out = append(out, objectKey{string(tr.Kind), p.Namespace, string(tr.Name)})
	}
	return out
}

// sendsTo reports whether a rule of route r has a backendRef to one of backends (any
// group; a ref without kind is a Service).
func sendsTo(r *snapshot.HTTPRoute, backends map[objectKey]bool) bool {
	for _, rule := range r.Spec.Rules {
		for _, br := range rule.BackendRefs {
			k := objectKey{"Service", r.Namespace, string(br.Name)}
			if br.Kind != nil {
				k.kind = string(*br.Kind)
			}
			if br.Namespace != nil {
				k.namespace = string(*br.Namespace)
			}
			if backends[k] {
				return true
			}
		}
	}
	return false
}

// compareKind returns the objects of one kind (both sides' versions) whose namespace
// and name do not hold the same objects on both sides (content; several objects of
// one name compare in order). When the objects that are the same are in another
// order on one side, it sets u.all.
func compareKind[T named](before, after []T, u *unchangedInputs) []T {
	type key struct{ namespace, name string }
	index := func(l []T) map[key][]T {
		m := make(map[key][]T, len(l))
		for _, o := range l {
			k := key{o.GetNamespace(), o.GetName()}
			m[k] = append(m[k], o)
		}
		return m
	}
	bm, am := index(before), index(after)
	changed := map[key]bool{}
	var out []T
	check := func(k key) {
		if _, done := changed[k]; done {
			return
		}
		bs, as := bm[k], am[k]
		same := len(bs) == len(as)
		for i := 0; same && i < len(bs); i++ {
			same = sameObject(bs[i], as[i])
		}
		changed[k] = !same
		if !same {
			out = append(out, bs...)
			out = append(out, as...)
		}
	}
	for _, o := range before {
		check(key{o.GetNamespace(), o.GetName()})
	}
	for _, o := range after {
		check(key{o.GetNamespace(), o.GetName()})
	}
	// The objects that are the same must be in the same order.
	i, j := 0, 0
	for {
		for i < len(before) && changed[key{before[i].GetNamespace(), before[i].GetName()}] {
			i++
		}
		for j < len(after) && changed[key{after[j].GetNamespace(), after[j].GetName()}] {
			j++
		}
		if i == len(before) || j == len(after) {
			if i != len(before) || j != len(after) {
				u.all = true
			}
			break
		}
		if (key{before[i].GetNamespace(), before[i].GetName()}) != (key{after[j].GetNamespace(), after[j].GetName()}) {
			u.all = true
			break
		}
		i, j = i+1, j+1
	}
	return out
}

var originType = reflect.TypeFor[snapshot.Origin]()

// sameObject reports whether two typed objects (pointers to snapshot structs) hold the
// same content, where they were read (Origin) aside. Objects a diff's two loads share
// (cluster.SharedFiles) share their fields, which reflect.DeepEqual compares by
// pointer first.
func sameObject(x, y any) bool {
	vx, vy := reflect.ValueOf(x).Elem(), reflect.ValueOf(y).Elem()
	if vx.Type() != vy.Type() {
		return false
	}
	for i := range vx.NumField() {
		if vx.Type().Field(i).Type == originType {
			continue
		}
		if !reflect.DeepEqual(vx.Field(i).Interface(), vy.Field(i).Interface()) {
			return false
		}
	}
	return true
}
