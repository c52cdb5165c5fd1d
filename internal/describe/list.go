package describe

import (
	"fmt"

	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/model"
	"github.com/agpol/agpol/internal/snapshot"
	"github.com/agpol/agpol/internal/suggest"
)

// List builds the view of the object name ([namespace, name]) or, with name nil, of
// every object of kind in ns ("" for every namespace), in Names' order, on model m.
func List(m *model.Model, sem effective.Semantics, td, kind string, name []string, ns string) ([]*View, error) {
	var names [][2]string
	if name != nil {
		names = [][2]string{{name[0], name[1]}}
	} else {
		names = Names(m.Snapshot, kind, ns)
	}
	var views []*View
	e := effective.NewEngineOn(m.Graph(), m.Snapshot, sem, td)
	for _, n := range names {
		v, err := build(m, e, kind, n[0], n[1])
		if err != nil {
			return nil, err
		}
		views = append(views, v)
	}
	return views, nil
}

// ListReading is List on the objects of m's snapshot that need names (Needs: the objects
// the views read, the only ones a load admitted): the same views, computed on those
// objects only. With need nil, or when List fails there (a name not found, whose hint may
// name any object of the input), it is List on m.
func ListReading(m *model.Model, need func(snapshot.Ref) bool, sem effective.Semantics, td, kind string, name []string, ns string) ([]*View, error) {
	if need != nil {
		if views, err := List(model.New(m.Snapshot.Subset(need)), sem, td, kind, name, ns); err == nil {
			return views, nil
		}
	}
	return List(m, sem, td, kind, name, ns)
}

// describable are the kinds describe takes, as suggest names them.
var describable = map[string]bool{"gateway": true, "httproute": true, "xbackend": true, "xaccesspolicy": true, "authpolicy": true}

// notFound is the error for an object of kind (as suggest names it) ns/name that s does
// not hold, with suggest's hint: the same NAME in another namespace, the same name as
// another kind describe takes, or the nearest name.
func notFound(s *snapshot.Snapshot, kind, ns, name string) error {
	msg := fmt.Sprintf("%s %s/%s not found", kind, ns, name)
	ask := func(o suggest.Object) string {
		if describable[o.Kind] {
			return "agpol describe " + o.Kind + " " + o.ID()
		}
		return ""
	}
	if h := suggest.Hint(suggest.Query{Kinds: []string{kind}, Namespace: ns, Name: name, Ask: ask}, suggest.Objects(s)); h != "" {
		msg += "; " + h
	}
	return fmt.Errorf("%s", msg)
}
