package describe

import (
	"github.com/agpol/agpol/internal/effective"
	"github.com/agpol/agpol/internal/snapshot"
)

// List builds the view of the object name ([namespace, name]) or, with name nil, of
// every object of kind in ns ("" for every namespace), in Names' order.
func List(s *snapshot.Snapshot, sem effective.Semantics, td, kind string, name []string, ns string) ([]*View, error) {
	var names [][2]string
	if name != nil {
		names = [][2]string{{name[0], name[1]}}
	} else {
		names = Names(s, kind, ns)
	}
	var views []*View
	for _, n := range names {
		v, err := Build(s, sem, td, kind, n[0], n[1])
		if err != nil {
			return nil, err
		}
		views = append(views, v)
	}
	return views, nil
}
