// Package suggest owns the one "did you mean" of every command: for a name that names
// nothing, the same NAME in another namespace, the same name as an object of another
// kind (and how to ask for that kind), or the nearest name by edit distance.
package suggest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/agpol/agpol/internal/snapshot"
)

// Object is a named object a user may have meant.
type Object struct {
	// Kind is the kind as a user types it: gateway, httproute, xbackend, service,
	// xaccesspolicy, authpolicy; or listener, a Gateway's listener, named by NAME
	// alone (Namespace "").
	Kind            string
	Namespace, Name string
}

// ID is NS/NAME, or NAME for an object without a namespace.
func (o Object) ID() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "/" + o.Name
}

// Objects lists the objects of s a command can name, in a stable order.
func Objects(s *snapshot.Snapshot) []Object {
	var out []Object
	for _, g := range s.Gateways {
		out = append(out, Object{"gateway", g.Namespace, g.Name})
	}
	for _, r := range s.HTTPRoutes {
		out = append(out, Object{"httproute", r.Namespace, r.Name})
	}
	for _, b := range s.XBackends {
		out = append(out, Object{"xbackend", b.Namespace, b.Name})
	}
	for _, b := range s.Services {
		out = append(out, Object{"service", b.Namespace, b.Name})
	}
	for _, p := range s.XAccessPolicies {
		out = append(out, Object{"xaccesspolicy", p.Namespace, p.Name})
	}
	for _, p := range s.AuthPolicies {
		out = append(out, Object{"authpolicy", p.Namespace, p.Name})
	}
	return out
}

// what is how a hint calls an object of kind k.
var what = map[string]string{
	"gateway":       "a gateway",
	"httproute":     "a route",
	"xbackend":      "an XBackend",
	"service":       "a Service",
	"xaccesspolicy": "an XAccessPolicy",
	"authpolicy":    "an AuthPolicy",
}

// Query is a name that named nothing.
type Query struct {
	// Kinds are the kinds the name was looked for among.
	Kinds []string
	// Namespace and Name are what was looked for; Namespace is the one the command
	// defaulted to when the user gave only NAME, "" when every namespace was looked in.
	Namespace, Name string
	// Ask is how to ask this command for an object of another kind ("--route pay/x",
	// "agpol describe httproute pay/x"), "" when the command cannot: then no hint names
	// objects of other kinds. Nil is the same as always "".
	Ask func(Object) string
}

// Hint is "did you mean …?" for q among objs, "" when nothing is close. In order: the
// same NAME in other namespaces ("did you mean infra/edge?"); the same name as an object
// of another kind that the command can ask for ("httproute pay/x is a route; did you mean
// --route pay/x?"); the nearest NS/NAME of the kinds looked for.
func Hint(q Query, objs []Object) string {
	want := map[string]bool{}
	for _, k := range q.Kinds {
		want[k] = true
	}
	id := q.Namespace + "/" + q.Name
	var sameName, ids, names []string
	seen := map[string]bool{}
	for _, o := range objs {
		if !want[o.Kind] || seen[o.ID()] {
			continue
		}
		seen[o.ID()] = true
		ids, names = append(ids, o.ID()), append(names, o.Name)
		if o.Name == q.Name && o.Namespace != q.Namespace {
			sameName = append(sameName, o.ID())
		}
	}
	if len(sameName) > 0 {
		sort.Strings(sameName)
		return "did you mean " + orList(sameName) + "?"
	}
	if q.Ask != nil {
		if h := otherKind(q, id, objs, want); h != "" {
			return h
		}
	}
	if q.Namespace == "" {
		// Every namespace was looked in: the nearest NAME, in each namespace it is in.
		var near []string
		if n := NearestOther(q.Name, names); n != "" {
			for i, x := range ids {
				if names[i] == n {
					near = append(near, x)
				}
			}
			sort.Strings(near)
			return "did you mean " + orList(near) + "?"
		}
		return ""
	}
	if n := Nearest(id, ids); n != "" && n != id {
		return "did you mean " + n + "?"
	}
	return ""
}

// otherKind is the hint naming an object of another kind with q's NS/NAME (or, failing
// that, q's NAME in any namespace) that the command can ask for.
func otherKind(q Query, id string, objs []Object, want map[string]bool) string {
	for _, exact := range []bool{true, false} {
		for _, o := range objs {
			if want[o.Kind] || o.Name != q.Name || (exact && o.ID() != id) {
				continue
			}
			if ask := q.Ask(o); ask != "" {
				return fmt.Sprintf("%s %s is %s; did you mean %s?", o.Kind, o.ID(), what[o.Kind], ask)
			}
		}
	}
	return ""
}

// orList is "a", "a or b", "a, b or c" (at most three, then "…").
func orList(xs []string) string {
	if len(xs) > 3 {
		xs = append(xs[:3:3], "…")
	}
	if len(xs) == 1 {
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " or " + xs[len(xs)-1]
}

// Nearest is the candidate closest to name by edit distance (case-insensitive), "" when
// none is close: at most a third of the name's length (at least 1, at most 3) edits
// away. Ties go to the first in sorted order; name itself is returned when it is a
// candidate.
func Nearest(name string, candidates []string) string {
	limit := min(max(len(name)/3, 1), 3)
	best, bestD := "", limit+1
	sorted := append([]string(nil), candidates...)
	sort.Strings(sorted)
	for _, c := range sorted {
		if c == name {
			return c
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// NearestOther is Nearest, "" when it is name itself.
func NearestOther(name string, candidates []string) string {
	if n := Nearest(name, candidates); n != name {
		return n
	}
	return ""
}
